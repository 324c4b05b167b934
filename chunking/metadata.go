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

// MaxDepth is how deeply metadata may nest: a chunk's metadata map is
// level 1, a map or list inside it level 2, and so on; every reader and
// writer of this package refuses a map or list below level MaxDepth.
const MaxDepth = codec.MaxDepth

// Metadata is an ordered list of key/value pairs. A later duplicate key
// wins when the metadata is read as a map, hashed or written, as in the
// reference's Python dicts.
//
// Values are of a closed set: nil, bool, int, uint64 (integers above the
// int range), *big.Int (integers beyond 64 bits), float64, string, []any
// and Metadata, recursively. NewChunk and Clone bring other Go values into
// it: every integer type becomes int, uint64 or *big.Int by its value,
// float32 float64, []string (any list) []any, map[string]any Metadata
// with sorted keys. Values of other types have no form in any output: the
// writers refuse them (ErrMetadataValue).
//
// Metadata values are treated as immutable once attached to a Chunk; the
// accessors of Chunk return copies.
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
	return append(out, Field{Key: key, Value: value})
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
// set (see Metadata); values of other types are kept as they are.
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
