package chunking

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
)

// Field is one metadata entry.
type Field struct {
	Key   string
	Value any
}

// Metadata is an ordered list of key/value pairs. Values are nil, bool,
// int64 (or any Go integer), *big.Int (integers beyond 64 bits), float64,
// string, []any, []string, Metadata or map[string]any, recursively. A later
// duplicate key wins when the metadata is read as a map, hashed or written,
// as in the reference's Python dicts.
//
// Metadata values are treated as immutable once attached to a Chunk; the
// accessors of Chunk return copies of the top level.
type Metadata []Field

// Get returns the value of key, the last one when the key repeats.
func (m Metadata) Get(key string) (any, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Key == key {
			return m[i].Value, true
		}
	}
	return nil, false
}

// With returns a copy of m in which key holds value: an existing key keeps
// its place, a new key is appended.
func (m Metadata) With(key string, value any) Metadata {
	out := slices.Clone(m)
	for i := range out {
		if out[i].Key == key {
			out[i].Value = value
			return out
		}
	}
	return append(out, Field{key, value})
}

// Merge returns a copy of m with every field of extra applied by With, in
// order: existing keys keep their place and take extra's value, new keys
// are appended. It implements "caller metadata wins on a clash".
func (m Metadata) Merge(extra Metadata) Metadata {
	out := slices.Clone(m)
	for _, f := range extra {
		out = out.With(f.Key, f.Value)
	}
	return out
}

// Keys returns the distinct keys in first-seen order.
func (m Metadata) Keys() []string {
	seen := make(map[string]bool, len(m))
	keys := make([]string, 0, len(m))
	for _, f := range m {
		if !seen[f.Key] {
			seen[f.Key] = true
			keys = append(keys, f.Key)
		}
	}
	return keys
}

// Map returns the metadata as a map; nested Metadata values become maps too.
func (m Metadata) Map() map[string]any {
	out := make(map[string]any, len(m))
	for _, f := range m {
		out[f.Key] = plainValue(f.Value)
	}
	return out
}

// Clone returns a deep copy of m.
func (m Metadata) Clone() Metadata {
	if m == nil {
		return nil
	}
	out := make(Metadata, len(m))
	for i, f := range m {
		out[i] = Field{f.Key, cloneValue(f.Value)}
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case Metadata:
		return x.Clone()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case *big.Int:
		if x == nil {
			return x
		}
		return new(big.Int).Set(x)
	default:
		return v
	}
}

func plainValue(v any) any {
	switch x := v.(type) {
	case Metadata:
		return x.Map()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	default:
		return v
	}
}

// ValidateValue reports whether v is a value metadata may hold.
func ValidateValue(v any) error {
	switch x := v.(type) {
	case nil, bool, string, float32, float64,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return nil
	case []string:
		return nil
	case *big.Int:
		if x == nil {
			return fmt.Errorf("%w: nil *big.Int", ErrMetadataValue)
		}
		return nil
	case []any:
		for _, e := range x {
			if err := ValidateValue(e); err != nil {
				return err
			}
		}
		return nil
	case Metadata:
		for _, f := range x {
			if err := ValidateValue(f.Value); err != nil {
				return fmt.Errorf("%s: %w", f.Key, err)
			}
		}
		return nil
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := ValidateValue(x[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("%w: %T", ErrMetadataValue, v)
	}
}
