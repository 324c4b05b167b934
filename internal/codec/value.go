package codec

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Pair constrains the members of the ordered maps M ~[]F the codec reads
// and writes (chunking.Field).
type Pair interface {
	~struct {
		Key   string
		Value any
	}
}

// pair is the underlying type of every Pair.
type pair = struct {
	Key   string
	Value any
}

// MaxDepth is how deeply values may nest: in a record a member's map or
// list is level 1 (a chunk's metadata map is); readers and writers refuse
// a map or list below level MaxDepth.
const MaxDepth = 32

// MaxIntDigits is the most digits an integer literal may have: Python's
// limit, so every integer the reference reads loads and a hostile literal
// cannot take quadratic time.
const MaxIntDigits = 4300

// Normalize returns a deep copy of v in the closed set: integers become
// int, uint64 or *big.Int by value (a copy), float32 float64, lists
// []any, map[string]any an M with sorted keys. A value of another type
// (or a nil *big.Int) is kept as it is, and the first is reported as a
// *FieldError wrapping ErrMetadataValue.
func Normalize[M ~[]F, F Pair](v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int, float64:
		return v, nil
	case M:
		if x == nil {
			return x, nil
		}
		out := make(M, len(x))
		var first error
		for i, f := range x {
			f := pair(f)
			nv, err := Normalize[M, F](f.Value)
			if err != nil && first == nil {
				first = AtKey(err, f.Key)
			}
			out[i] = F(pair{f.Key, nv})
		}
		return out, first
	case []any:
		return normalizeList[M, F](x)
	case []string:
		return normalizeList[M, F](x)
	case []int:
		return normalizeList[M, F](x)
	case map[string]any:
		md := make(M, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			md = append(md, F(pair{k, x[k]}))
		}
		return Normalize[M, F](md)
	case float32:
		return float64(x), nil
	case int8, int16, int32, int64:
		return fromInt64(reflect.ValueOf(x).Int()), nil
	case uint, uint8, uint16, uint32, uint64:
		return fromUint64(reflect.ValueOf(x).Uint()), nil
	case *big.Int:
		switch {
		case x == nil:
			return v, &FieldError{Err: fmt.Errorf("%w: nil *big.Int", ErrMetadataValue)}
		case x.IsInt64():
			return fromInt64(x.Int64()), nil
		case x.IsUint64():
			return x.Uint64(), nil
		}
		return new(big.Int).Set(x), nil
	}
	return v, &FieldError{Err: fmt.Errorf("%w: %T", ErrMetadataValue, v)}
}

func normalizeList[M ~[]F, F Pair, E any](x []E) ([]any, error) {
	out := make([]any, len(x))
	var first error
	for i, e := range x {
		nv, err := Normalize[M, F](e)
		if err != nil && first == nil {
			first = AtIndex(err, i)
		}
		out[i] = nv
	}
	return out, first
}

func fromInt64(n int64) any {
	switch {
	case n >= math.MinInt && n <= math.MaxInt:
		return int(n)
	case n >= 0:
		return uint64(n)
	}
	return big.NewInt(n)
}

func fromUint64(n uint64) any {
	if n <= math.MaxInt {
		return int(n)
	}
	return n
}

// ParseInteger parses a decimal integer in JSON's grammar (an optional
// minus, no leading zeros, at most MaxIntDigits digits) into the closed
// set's form.
func ParseInteger(s string) (any, error) {
	digits := s
	if digits != "" && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" || (len(digits) > 1 && digits[0] == '0') || strings.ContainsFunc(digits, notDigit) {
		return nil, fmt.Errorf("%q is not a decimal integer", shortText(s))
	}
	if n, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(n), nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	if len(digits) > MaxIntDigits {
		return nil, fmt.Errorf("integer of %d digits, more than %d", len(digits), MaxIntDigits)
	}
	n, _ := new(big.Int).SetString(s, 10)
	return n, nil
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// Integral reports whether v is an integer by the rule of every integer
// field: an int, uint64 or *big.Int, or a float64 with an integral value
// (1.0, 1e3).
func Integral(v any) bool {
	switch x := v.(type) {
	case int, uint64, *big.Int:
		return true
	case float64:
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	}
	return false
}

// Int reads an integer field: v's value when it is Integral and in int's
// range.
func Int(v any) (n int, ok bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt && x < -math.MinInt {
			return int(x), true
		}
	}
	return 0, false
}

// Uint reads a field of non-negative 64-bit integers (stream sequences).
func Uint(v any) (n uint64, ok bool) {
	switch x := v.(type) {
	case int:
		if x >= 0 {
			return uint64(x), true
		}
	case uint64:
		return x, true
	case float64:
		if x == math.Trunc(x) && x >= 0 && x < 1<<64 {
			return uint64(x), true
		}
	}
	return 0, false
}

// Describe names a value of the closed set in the wire's words, for
// errors ("the string \"x\"", "the integer 5", "a list").
func Describe[M ~[]F, F Pair](v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return fmt.Sprintf("the string %q", shortText(x))
	case []byte:
		return "bytes"
	case int, uint64, *big.Int:
		return fmt.Sprintf("the integer %v", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case []any:
		return "a list"
	case M:
		return "a map"
	}
	return fmt.Sprintf("a %T", v)
}

// shortText cuts s to a few dozen characters for an error message.
func shortText(s string) string {
	const limit = 40
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Deduplicate returns m with one field per key: a repeated key keeps its
// first place and takes its last value, as a Python dict built from the
// pairs does. It returns m itself when no key repeats and never modifies
// it; the work is linear in len(m).
func Deduplicate[M ~[]F, F Pair](m M) M {
	var ops int
	return dedupCounting(m, &ops)
}

// smallMap is the field count up to which keys are compared pairwise
// (BenchmarkDeduplicate: always building the map takes about 3× as long).
const smallMap = 16

// dedupCounting is Deduplicate adding one to *ops per key comparison or
// map operation, so that a test can check the work is linear in len(m):
// at most smallMap per field.
func dedupCounting[M ~[]F, F Pair](m M, ops *int) M {
	if len(m) <= smallMap {
		dup := false
		for i := 1; i < len(m) && !dup; i++ {
			for j := range i {
				*ops++
				if pair(m[i]).Key == pair(m[j]).Key {
					dup = true
					break
				}
			}
		}
		if !dup {
			return m
		}
	}
	idx := make(map[string]int, len(m))
	var out M // nil until the first repeat
	for i, mf := range m {
		f := pair(mf)
		*ops++
		j, seen := idx[f.Key]
		switch {
		case seen:
			if out == nil { // the keys before the first repeat are distinct
				*ops += i
				out = append(make(M, 0, len(m)), m[:i]...)
			}
			out[j] = F(pair{f.Key, f.Value})
		case out != nil:
			idx[f.Key] = len(out)
			out = append(out, mf)
		default:
			idx[f.Key] = i
		}
	}
	if out == nil {
		return m
	}
	return out
}
