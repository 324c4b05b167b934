package chunking

import (
	"slices"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// Field is one metadata entry.
type Field struct {
	Key   string
	Value any
}

// MaxDepth is how deeply metadata may nest: the metadata map is level 1;
// readers and writers refuse a map or list below level MaxDepth.
const MaxDepth = codec.MaxDepth

// Metadata is an ordered list of key/value pairs. A later duplicate key
// wins when it is read as a map, hashed or written, as in the reference's
// Python dicts.
//
// Values are of a closed set: nil, bool, int, uint64 (above the int
// range), *big.Int (beyond 64 bits), float64, string, []any and Metadata.
// NewChunk and Clone bring other Go values into it: integers become int,
// uint64 or *big.Int by value, float32 float64, lists []any,
// map[string]any Metadata with sorted keys. Writers refuse values of
// other types (ErrMetadataValue).
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
	if i := slices.IndexFunc(out, func(f Field) bool { return f.Key == key }); i >= 0 {
		out[i].Value = value
		return out
	}
	return append(out, Field{Key: key, Value: value})
}

// Merge returns a copy of m with every field of extra applied by With, in
// order: caller metadata wins on a clash.
func (m Metadata) Merge(extra Metadata) Metadata {
	out := slices.Clone(m)
	for _, f := range extra {
		out = out.With(f.Key, f.Value)
	}
	return out
}

// Keys returns the distinct keys in first-seen order.
func (m Metadata) Keys() []string {
	keys := make([]string, 0, len(m))
	for _, f := range codec.Deduplicate(m) {
		keys = append(keys, f.Key)
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

func plainValue(v any) any {
	switch x := v.(type) {
	case Metadata:
		return x.Map()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}

// Clone returns a deep copy of m with its values brought into the closed
// set; values of other types are kept as they are.
func (m Metadata) Clone() Metadata {
	if m == nil {
		return nil
	}
	out := make(Metadata, len(m))
	for i, f := range m {
		v, _ := codec.Normalize[Metadata](f.Value)
		out[i] = Field{f.Key, v}
	}
	return out
}
