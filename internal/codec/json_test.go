package codec

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Field and Metadata are the ordered map of these tests (chunking.Field
// and chunking.Metadata in the module).
type (
	Field struct {
		Key   string
		Value any
	}
	Metadata []Field
)

func bigInt(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big.Int literal " + s)
	}
	return n
}

// nested returns n levels of maps {"a":{"a":…}} around leaf, in JSON.
func nested(n int, leaf string) string {
	return strings.Repeat(`{"a":`, n) + leaf + strings.Repeat(`}`, n)
}

func TestDecodeJSONObject(t *testing.T) {
	tests := []struct {
		in   string
		want Metadata
	}{
		{`{}`, Metadata{}},
		{" \t\r\n{ } \n", Metadata{}},
		{`{"b":1,"a":[1.5,null,true,false,"x",[],{}],"o":{"z":{},"y":-2}}`, Metadata{
			{"b", 1}, {"a", []any{1.5, nil, true, false, "x", []any{}, Metadata{}}},
			{"o", Metadata{{"z", Metadata{}}, {"y", -2}}}}},
		// A repeated key keeps its first place and takes its last value.
		{`{"a":1,"b":2,"a":3}`, Metadata{{"a", 3}, {"b", 2}}},
		{`{"o":{"k":1,"k":{"x":1,"x":2}}}`, Metadata{{"o", Metadata{{"k", Metadata{{"x", 2}}}}}}},
		// Integers of every size, exactly.
		{`{"z":0,"m":-0,"max":9223372036854775807,"min":-9223372036854775808}`,
			Metadata{{"z", 0}, {"m", 0}, {"max", math.MaxInt64}, {"min", math.MinInt64}}},
		{`{"u":9223372036854775808,"umax":18446744073709551615}`,
			Metadata{{"u", uint64(1 << 63)}, {"umax", uint64(math.MaxUint64)}}},
		{`{"b":18446744073709551616,"n":-9223372036854775809,"e29":100000000000000000000000000000}`,
			Metadata{{"b", bigInt("18446744073709551616")}, {"n", bigInt("-9223372036854775809")},
				{"e29", bigInt("100000000000000000000000000000")}}},
		{`{"d":` + "9" + strings.Repeat("0", MaxIntDigits-1) + `}`, Metadata{{"d", bigInt("9" + strings.Repeat("0", MaxIntDigits-1))}}},
		// Anything with a fraction or exponent is a float.
		{`{"f":1.0,"e":1e2,"E":-2.5E-3,"z":-0.0,"tiny":1e-400}`,
			Metadata{{"f", 1.0}, {"e", 100.0}, {"E", -0.0025}, {"z", math.Copysign(0, -1)}, {"tiny", 0.0}}},
		// Escapes, surrogate pairs, U+2028 raw or escaped, NUL.
		{`{"s":"\"\\\/\b\f\n\r\t\u00e9\u00E9\ud83d\ude00\u2028` + "\u2028" + `\u0000"}`,
			Metadata{{"s", "\"\\/\b\f\n\r\t\u00e9\u00e9😀\u2028\u2028\x00"}}},
		{`{"raw":"héllo 😀 ` + "\u2029" + `"}`, Metadata{{"raw", "héllo 😀 \u2029"}}},
		{`{"` + "\u2028" + `k\n":1}`, Metadata{{"\u2028k\n", 1}}},
		{`{"deep":` + nested(MaxDepth-1, `[]`) + `}`, Metadata{{"deep", nestedValue(MaxDepth-1, []any{})}}},
	}
	for _, tt := range tests {
		got, err := DecodeJSONObject[Metadata]([]byte(tt.in))
		if err != nil {
			t.Errorf("DecodeJSONObject(%q) = %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeJSONObject(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		if !json.Valid([]byte(tt.in)) {
			t.Errorf("encoding/json says %q is not JSON", tt.in)
		}
	}
}

// nestedValue is nested's value: n levels of Metadata{{"a", …}} around
// leaf.
func nestedValue(n int, leaf any) any {
	v := leaf
	for range n {
		v = Metadata{{"a", v}}
	}
	return v
}

func TestDecodeJSONObjectErrors(t *testing.T) {
	tests := []struct {
		in    string
		is    error // nil: a syntax error, not a *FieldError
		text  string
		valid bool // encoding/json takes it as JSON
	}{
		// Text is never replaced: invalid bytes and lone surrogates are
		// errors naming the field and the byte of its text.
		{`{"title":"ab` + "\xff" + `c"}`, ErrNotUTF8, "title: invalid UTF-8 at byte 2", true},
		{`{"title":"\n\t` + "\xc3" + `"}`, ErrNotUTF8, "title: invalid UTF-8 at byte 2", true},
		{`{"title":"é` + "\xed\xa0\x80" + `"}`, ErrNotUTF8, "title: invalid UTF-8 at byte 2", true},
		{`{"title":"\ud800"}`, ErrNotUTF8, `title: lone surrogate \ud800 at byte 0`, true},
		{`{"title":"ab\ud83d\u0041"}`, ErrNotUTF8, `title: lone surrogate \ud83d at byte 2`, true},
		{`{"title":"x\ud83dy"}`, ErrNotUTF8, `title: lone surrogate \ud83d at byte 1`, true},
		{`{"title":"\udc00\ud800"}`, ErrNotUTF8, `title: lone surrogate \udc00 at byte 0`, true},
		{`{"m":{"tags":["ok",{"t":"\udfff"}]}}`, ErrNotUTF8, `m.tags[1].t: lone surrogate \udfff at byte 0`, true},
		{`{"m":{"k` + "\xff" + `":1}}`, ErrNotUTF8, "m: in a key: invalid UTF-8 at byte 1", true},
		{`{"\ud800":1}`, ErrNotUTF8, `in a key: lone surrogate \ud800 at byte 0`, true},
		// Limits.
		{`{"deep":` + nested(MaxDepth+1, `1`) + `}`, nil, "deep" + strings.Repeat(".a", MaxDepth) + ": nested deeper than 32 levels", true},
		{`{"deep":[` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `]}`, nil, "deep" + strings.Repeat("[0]", MaxDepth) + ": nested deeper than 32 levels", true},
		{`{"n":1e999}`, nil, "n: number 1e999 out of range", true},
		{`{"n":-1e999}`, nil, "n: number -1e999 out of range", true},
		{`{"n":1` + strings.Repeat("0", MaxIntDigits) + `}`, nil, "n: integer of 4301 digits, more than 4300", true},
		// Malformed JSON.
		{``, nil, "want a JSON object, got nothing", false},
		{`[1]`, nil, "want a JSON object, got an array", true},
		{`"x"`, nil, "want a JSON object, got a string", true},
		{"\xef\xbb\xbf{}", nil, "want a JSON object, got byte 0xef at byte 0", false},
		{`{} {}`, nil, "trailing data after the JSON object at byte 3", false},
		{`{"a":1,}`, nil, `invalid JSON: '}' at byte 7, want a string key`, false},
		{`{"a" 1}`, nil, `invalid JSON: '1' at byte 5, want ':'`, false},
		{`{"a":1 "b":2}`, nil, `want ',' or '}'`, false},
		{`{"a":[1 2]}`, nil, `want ',' or ']'`, false},
		{`{"a":tru}`, nil, "want true", false},
		{`{"a":nul}`, nil, "want null", false},
		{`{"a":01}`, nil, `invalid JSON: '1' at byte 6, want ',' or '}'`, false},
		{`{"a":1.}`, nil, "want a digit after '.'", false},
		{`{"a":1e}`, nil, "want a digit in the exponent", false},
		{`{"a":-}`, nil, "want a digit", false},
		{`{"a":+1}`, nil, "want a value", false},
		{`{"a":"x`, nil, "unexpected end of JSON input", false},
		{`{"a":"x\`, nil, "unexpected end of JSON input, want an escape", false},
		{`{"a":"` + "\n" + `"}`, nil, "control characters must be escaped", false},
		{`{"a":"\x"}`, nil, `want an escape`, false},
		{`{"a":"\u12g4"}`, nil, `want four hex digits after \u`, false},
		{`{"a":`, nil, "unexpected end of JSON input, want a value", false},
		{`{"a":1`, nil, "unexpected end of JSON input, want ',' or '}'", false},
		{`{1:2}`, nil, "want a string key", false},
	}
	for _, tt := range tests {
		_, err := DecodeJSONObject[Metadata]([]byte(tt.in))
		if err == nil {
			t.Errorf("DecodeJSONObject(%q) = nil error, want %q", tt.in, tt.text)
			continue
		}
		if !strings.Contains(err.Error(), tt.text) {
			t.Errorf("DecodeJSONObject(%q) = %q, want it to contain %q", tt.in, err, tt.text)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("DecodeJSONObject(%q) = %v, want an error wrapping %v", tt.in, err, tt.is)
		}
		// Errors about a value name it; malformed JSON gives an offset.
		var fe *FieldError
		valueError := tt.is != nil || strings.Contains(tt.text, "nested deeper") ||
			strings.Contains(tt.text, "out of range") || strings.Contains(tt.text, "more than 4300")
		if errors.As(err, &fe) != valueError {
			t.Errorf("DecodeJSONObject(%q) = %#v: a *FieldError is %v, want %v", tt.in, err, !valueError, valueError)
		}
		if got := json.Valid([]byte(tt.in)); got != tt.valid {
			t.Errorf("encoding/json Valid(%q) = %v: the table is wrong", tt.in, got)
		}
	}
}

func TestAppendJSONObject(t *testing.T) {
	tests := []struct {
		in   Metadata
		want string
	}{
		{nil, `{}`},
		{Metadata{{"b", 1}, {"a", Metadata{}}, {"l", []any{}}}, `{"b":1,"a":{},"l":[]}`},
		// Written once, first place, last value.
		{Metadata{{"k", 1}, {"j", 2}, {"k", 3}}, `{"k":3,"j":2}`},
		{Metadata{{"s", "a\"b\\c\n\r\t\b\f\x01\x1f\x7fé<>&😀 \u2028 \u2029"}},
			`{"s":"a\"b\\c\n\r\t\u0008\u000c\u0001\u001f` + "\x7f" + `é<>&😀 \u2028 \u2029"}`},
		// Floats as Python's repr, always with "." or an exponent.
		{Metadata{{"f", []any{1.0, 0.1, 1e-05, 1e16, 1e15, 1234567.0, math.Copysign(0, -1), float32(0.5), 1e22, 1.5e300}}},
			`{"f":[1.0,0.1,1e-05,1e+16,1000000000000000.0,1234567.0,-0.0,0.5,1e+22,1.5e+300]}`},
		{Metadata{{"i", []any{int8(-8), int16(16), int32(-32), int64(math.MinInt64), uint(7), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64)}}},
			`{"i":[-8,16,-32,-9223372036854775808,7,8,16,32,18446744073709551615]}`},
		{Metadata{{"big", bigInt("-100000000000000000000000000000")}, {"small", big.NewInt(5)}},
			`{"big":-100000000000000000000000000000,"small":5}`},
		{Metadata{{"m", map[string]any{"b": 1, "a": []string{"x"}, "c": []int{1, 2}}}}, `{"m":{"a":["x"],"b":1,"c":[1,2]}}`},
		{Metadata{{"deep", nestedValue(MaxDepth, 1)}}, `{"deep":` + nested(MaxDepth, "1") + `}`},
	}
	for _, tt := range tests {
		got, err := AppendJSONObject(nil, tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("AppendJSONObject(%v) = %s, %v, want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestAppendJSONObjectErrors(t *testing.T) {
	tests := []struct {
		in   Metadata
		is   error
		text string
	}{
		{Metadata{{"a", Metadata{{"b", []any{"ok", "ab\xffc"}}}}}, ErrNotUTF8, "a.b[1]: invalid UTF-8 at byte 2"},
		{Metadata{{"a", []string{"x", "\xff"}}}, ErrNotUTF8, "a[1]: invalid UTF-8 at byte 0"},
		{Metadata{{"a", Metadata{{"k\xff", 1}}}}, ErrNotUTF8, "a: in a key: invalid UTF-8 at byte 1"},
		{Metadata{{"n", math.NaN()}}, ErrMetadataValue, "n: chunking: unsupported metadata value: NaN has no JSON form"},
		{Metadata{{"n", []any{math.Inf(-1)}}}, ErrMetadataValue, "n[0]: chunking: unsupported metadata value: -Inf has no JSON form"},
		{Metadata{{"n", (*big.Int)(nil)}}, ErrMetadataValue, "n: chunking: unsupported metadata value: nil *big.Int"},
		{Metadata{{"t", struct{}{}}}, ErrMetadataValue, "t: chunking: unsupported metadata value: struct {}"},
		{Metadata{{"d", nestedValue(MaxDepth+1, 1)}}, nil, "nested deeper than 32 levels"},
	}
	for _, tt := range tests {
		_, err := AppendJSONObject(nil, tt.in)
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), tt.text) || !errors.As(err, &fe) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("AppendJSONObject(%v) = %v, want a *FieldError %q wrapping %v", tt.in, err, tt.text, tt.is)
		}
	}
}

func TestParseInteger(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"0", 0}, {"-0", 0}, {"-12", -12}, {"9223372036854775807", math.MaxInt64},
		{"9223372036854775808", uint64(1 << 63)}, {"18446744073709551616", bigInt("18446744073709551616")},
		{"-9223372036854775809", bigInt("-9223372036854775809")},
	}
	for _, tt := range tests {
		got, err := ParseInteger(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseInteger(%q) = %#v, %v, want %#v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-", "01", "+1", "1.0", "1e2", " 1", "0x10", "１", strings.Repeat("9", MaxIntDigits+1)} {
		if got, err := ParseInteger(bad); err == nil {
			t.Errorf("ParseInteger(%q) = %v, want an error", bad, got)
		}
	}
}

// TestDedupLinear counts Deduplicate's key comparisons and map
// operations: at most 16 per field, whatever the pattern of repeats, so
// hostile metadata with many keys costs linear work.
func TestDedupLinear(t *testing.T) {
	patterns := map[string]func(i, n int) string{
		"distinct":     func(i, n int) string { return "k" + strconv.Itoa(i) },
		"all the same": func(i, n int) string { return "k" },
		"halves":       func(i, n int) string { return "k" + strconv.Itoa(i%(n/2)) },
		"last repeats": func(i, n int) string { return "k" + strconv.Itoa(min(i, n-2)) },
		"small groups": func(i, n int) string { return "k" + strconv.Itoa(i/3) },
	}
	for name, key := range patterns {
		for _, n := range []int{2, 8, 9, 100, 10000} {
			m := make(Metadata, n)
			want := map[string]any{}
			for i := range m {
				m[i] = Field{key(i, n), i}
				want[m[i].Key] = i
			}
			ops := 0
			got := dedupCounting(m, &ops)
			if ops > 16*n {
				t.Errorf("%s, %d fields: %d operations, want at most %d", name, n, ops, 16*n)
			}
			gotMap, gotKeys, wantKeys := map[string]any{}, []string{}, []string{}
			for _, f := range got {
				gotMap[f.Key] = f.Value
				gotKeys = append(gotKeys, f.Key)
			}
			seen := map[string]bool{}
			for _, f := range m {
				if !seen[f.Key] {
					seen[f.Key] = true
					wantKeys = append(wantKeys, f.Key)
				}
			}
			if len(got) != len(want) || !reflect.DeepEqual(gotMap, want) || !reflect.DeepEqual(gotKeys, wantKeys) {
				t.Errorf("%s, %d fields: dedup = %v, want the keys %v with %v", name, n, got, wantKeys, want)
			}
		}
	}
}

// FuzzJSONObject: no input panics the codec; what decodes is valid JSON
// to encoding/json with the same values, and re-encodes to bytes that
// decode to the same metadata and re-encode to the same bytes; valid JSON
// objects that fail are refused for a value (a *FieldError), never as
// malformed.
func FuzzJSONObject(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"b":[1.5,null,true,"x"],"c":{"d":{}}}`, `{"a":1,"a":2}`,
		`{"n":100000000000000000000000000000,"m":-18446744073709551616,"u":18446744073709551615}`,
		`{"s":"\ud83d\ude00\u2028\n\"\\\/\b\f\r\t\u0000é"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
		`{"f":1e999}`, `{"f":-0.0,"g":1E+2,"h":0.1}`, `{"d":` + nested(MaxDepth, "1") + `}`,
		`{"content":"x","metadata":{"h1":"T","index":0},"hash":"ab"}`, ` {"a" : [ 1 , 2 ] } `, `[1]`, `{"a":01}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeJSONObject[Metadata](data)
		valid := json.Valid(data)
		if err != nil {
			var fe *FieldError
			if valid && !errors.As(err, &fe) && strings.HasPrefix(strings.TrimLeft(string(data), " \t\r\n"), "{") {
				t.Fatalf("DecodeJSONObject(%q) = %v: valid JSON refused as malformed", data, err)
			}
			return
		}
		if !valid {
			t.Fatalf("DecodeJSONObject(%q) accepted what encoding/json calls invalid", data)
		}
		var std map[string]any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("encoding/json cannot decode %q: %v", data, err)
		}
		if !sameJSON(m, std) {
			t.Fatalf("DecodeJSONObject(%q) = %#v, encoding/json says %#v", data, m, std)
		}
		b, err := AppendJSONObject(nil, m)
		if err != nil {
			t.Fatalf("AppendJSONObject(%#v) = %v", m, err)
		}
		back, err := DecodeJSONObject[Metadata](b)
		if err != nil {
			t.Fatalf("DecodeJSONObject(%q) of our own output = %v", b, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip of %q:\n got %#v\nwant %#v", data, back, m)
		}
		if again, _ := AppendJSONObject(nil, back); string(again) != string(b) {
			t.Fatalf("second encoding differs:\n%s\n%s", again, b)
		}
	})
}

// sameJSON compares our decoded value with encoding/json's (UseNumber).
func sameJSON(ours, std any) bool {
	switch o := ours.(type) {
	case Metadata:
		s, ok := std.(map[string]any)
		if !ok || len(s) != len(o) {
			return false
		}
		for _, f := range o {
			if !sameJSON(f.Value, s[f.Key]) {
				return false
			}
		}
		return true
	case []any:
		s, ok := std.([]any)
		if !ok || len(s) != len(o) {
			return false
		}
		for i := range o {
			if !sameJSON(o[i], s[i]) {
				return false
			}
		}
		return true
	case int, uint64, *big.Int:
		n, ok := std.(json.Number)
		if !ok {
			return false
		}
		want, ok := new(big.Int).SetString(string(n), 10)
		got, _ := new(big.Int).SetString(toString(o), 10)
		return ok && got.Cmp(want) == 0
	case float64:
		n, ok := std.(json.Number)
		if !ok {
			return false
		}
		want, err := strconv.ParseFloat(string(n), 64)
		return err == nil && want == o
	case string:
		s, ok := std.(string)
		return ok && s == o && utf8.ValidString(o)
	default:
		return ours == std
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case *big.Int:
		return x.String()
	}
	return ""
}

// FuzzJSONValues builds metadata from arbitrary values: what can be
// written reads back the same (integers in their canonical form), and
// what cannot is a *FieldError naming the field.
func FuzzJSONValues(f *testing.F) {
	f.Add("text", "key", int64(7), 1.5, "100000000000000000000000000000", uint8(3))
	f.Add("a\xffb", "k\xff", int64(math.MinInt64), math.Inf(1), "-18446744073709551616", uint8(40))
	f.Add("\u2028\x00\x7f😀", "", int64(0), math.Copysign(0, -1), "0", uint8(31))
	f.Fuzz(func(t *testing.T, s, key string, n int64, x float64, digits string, depth uint8) {
		bigN, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			bigN = big.NewInt(n)
		}
		key = "k:" + key // never "s" or "d"
		md := Metadata{
			{"s", s}, {key, []any{n, x, bigN}},
			{"d", nestedValue(int(depth%40), []string{s})},
		}
		b, err := AppendJSONObject(nil, md)
		badText := !utf8.ValidString(s) || !utf8.ValidString(key)
		bad := badText || math.IsNaN(x) || math.IsInf(x, 0) || int(depth%40)+1 > MaxDepth
		if err != nil {
			var fe *FieldError
			if !bad || !errors.As(err, &fe) {
				t.Fatalf("AppendJSONObject(%#v) = %v", md, err)
			}
			return
		}
		if bad {
			t.Fatalf("AppendJSONObject(%#v) = %s, want an error", md, b)
		}
		got, err := DecodeJSONObject[Metadata](b)
		if err != nil {
			t.Fatalf("DecodeJSONObject(%q) = %v", b, err)
		}
		canonBig, _ := ParseInteger(bigN.String())
		want := (Metadata{
			{"s", s}, {key, []any{int(n), x, canonBig}},
			{"d", nestedValue(int(depth%40), []any{s})},
		})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %#v:\n got %#v\nwant %#v", md, got, want)
		}
	})
}
