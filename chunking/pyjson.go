package chunking

import (
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/codec"
)

// appendPyJSON appends v as Python's json.dumps(v, indent=2,
// sort_keys=True) renders it, at the given depth. Values outside the
// closed set go through codec.Normalize; one it refuses is rendered
// "<unsupported>" (the writers refuse it).
func appendPyJSON(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendPyString(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float64:
		return codec.AppendFloat(b, x)
	case []any:
		return appendPyList(b, x, depth)
	case Metadata:
		return appendPyMetadata(b, x, depth)
	case map[string]any:
		return appendPyMap(b, x, depth)
	case *big.Int:
		if x != nil {
			return x.Append(b, 10) // as Python's int: every digit
		}
	}
	if nv, err := codec.Normalize[Metadata](v); err == nil {
		return appendPyJSON(b, nv, depth)
	}
	return appendPyString(b, "<unsupported>")
}

func appendIndent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for range depth {
		b = append(b, ' ', ' ')
	}
	return b
}

func appendPyList(b []byte, items []any, depth int) []byte {
	if len(items) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, e := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendIndent(b, depth+1)
		b = appendPyJSON(b, e, depth+1)
	}
	b = appendIndent(b, depth)
	return append(b, ']')
}

func appendPyMap(b []byte, m map[string]any, depth int) []byte {
	md := make(Metadata, 0, len(m))
	for k, v := range m {
		md = append(md, Field{k, v})
	}
	return appendPyMetadata(b, md, depth)
}

// appendPyMetadata renders md as a Python dict built from its fields:
// the last value of each key, keys in code point order.
func appendPyMetadata(b []byte, md Metadata, depth int) []byte {
	m := codec.Deduplicate(md)
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	var idx [16]int
	order := idx[:0]
	for i := range m {
		order = append(order, i)
	}
	byKey := func(x, y int) int { return compareCodePoints(m[x].Key, m[y].Key) }
	if !slices.IsSortedFunc(order, byKey) {
		slices.SortFunc(order, byKey)
	}
	b = append(b, '{')
	for n, i := range order {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendIndent(b, depth+1)
		b = appendPyString(b, m[i].Key)
		b = append(b, ':', ' ')
		b = appendPyJSON(b, m[i].Value, depth+1)
	}
	b = appendIndent(b, depth)
	return append(b, '}')
}

func compareCodePoints(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// appendPyString renders s with ensure_ascii: everything outside
// U+0020..U+007E is escaped, with lowercase hex and surrogate pairs.
func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s { // invalid bytes decode as U+FFFD
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b = append(b, byte(r))
			case r > 0xffff:
				r -= 0x10000
				b = codec.AppendU(b, 0xd800+(r>>10))
				b = codec.AppendU(b, 0xdc00+(r&0x3ff))
			default:
				b = codec.AppendU(b, r)
			}
		}
	}
	return append(b, '"')
}
