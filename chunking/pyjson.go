package chunking

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendPyJSON appends v rendered as Python's
// json.dumps(v, indent=2, sort_keys=True) renders it (ensure_ascii on),
// at the given nesting depth.
func appendPyJSON(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case string:
		return appendPyString(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case *big.Int:
		if x == nil {
			return appendPyString(b, "<unsupported>")
		}
		return x.Append(b, 10) // as Python's int: every digit
	case float32:
		return appendPyFloat(b, float64(x))
	case float64:
		return appendPyFloat(b, x)
	case []string:
		items := make([]any, len(x))
		for i, s := range x {
			items[i] = s
		}
		return appendPyList(b, items, depth)
	case []any:
		return appendPyList(b, x, depth)
	case Metadata:
		return appendPyMetadata(b, x, depth)
	case map[string]any:
		return appendPyMap(b, x, depth)
	default:
		// Unsupported values are rejected at construction; render
		// something stable rather than panic.
		return appendPyString(b, "<unsupported>")
	}
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
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Python sorts str keys by code point; for valid UTF-8, byte order is
	// code point order. Invalid UTF-8 was replaced by U+FFFD earlier.
	slices.SortFunc(keys, compareCodePoints)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendIndent(b, depth+1)
		b = appendPyString(b, k)
		b = append(b, ':', ' ')
		b = appendPyJSON(b, m[k], depth+1)
	}
	b = appendIndent(b, depth)
	return append(b, '}')
}

// appendPyMetadata renders m like appendPyMap renders m.Map(), without
// building the map: the last value of each key, keys in code point order.
func appendPyMetadata(b []byte, m Metadata, depth int) []byte {
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	if len(m) > 32 {
		// The duplicate scan below is quadratic: large metadata (from a
		// request) goes through a map.
		return appendPyMap(b, m.Map(), depth)
	}
	var idx [16]int
	order := idx[:0]
	for i := range m {
		// Keep i only if no later field has the same key (later wins).
		last := true
		for j := i + 1; j < len(m); j++ {
			if m[j].Key == m[i].Key {
				last = false
				break
			}
		}
		if last {
			order = append(order, i)
		}
	}
	if !slices.IsSortedFunc(order, func(x, y int) int { return compareCodePoints(m[x].Key, m[y].Key) }) {
		slices.SortFunc(order, func(x, y int) int { return compareCodePoints(m[x].Key, m[y].Key) })
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

const hexDigits = "0123456789abcdef"

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendPyString renders s with ensure_ascii: everything outside
// U+0020..U+007E is escaped, with lowercase hex and surrogate pairs.
func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s { // invalid bytes decode as U+FFFD
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
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
				b = appendU(b, 0xd800+(r>>10))
				b = appendU(b, 0xdc00+(r&0x3ff))
			default:
				b = appendU(b, r)
			}
		}
	}
	return append(b, '"')
}

// appendPyFloat renders f as Python's float repr (as json.dumps does):
// shortest round-trip digits, exponent form when the decimal exponent is
// below -4 or at least 16, and ".0" on integral values.
func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// Shortest digits in exponent form: "-d.ddde±XX".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	neg := strings.HasPrefix(e, "-")
	if neg {
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // position of the decimal point after the first digit
	if neg {
		b = append(b, '-')
	}
	if decpt <= -4 || decpt > 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	switch {
	case decpt <= 0:
		b = append(b, '0', '.')
		for range -decpt {
			b = append(b, '0')
		}
		return append(b, digits...)
	case decpt >= len(digits):
		b = append(b, digits...)
		for range decpt - len(digits) {
			b = append(b, '0')
		}
		return append(b, '.', '0')
	default:
		b = append(b, digits[:decpt]...)
		b = append(b, '.')
		return append(b, digits[decpt:]...)
	}
}
