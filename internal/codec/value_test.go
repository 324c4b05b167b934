package codec

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// TestIntegerRule: one rule for every integer field, a number whose value
// is an exact integer, however it was written.
func TestIntegerRule(t *testing.T) {
	tests := []struct {
		v        any
		integral bool
		i        int
		iok      bool
		u        uint64
		uok      bool
	}{
		{v: 1, integral: true, i: 1, iok: true, u: 1, uok: true},
		{v: 1.0, integral: true, i: 1, iok: true, u: 1, uok: true},
		{v: 1e3, integral: true, i: 1000, iok: true, u: 1000, uok: true},
		{v: -2.0, integral: true, i: -2, iok: true},
		{v: -2, integral: true, i: -2, iok: true},
		{v: 1.5, integral: false},
		{v: 1e-3, integral: false},
		{v: math.Inf(1), integral: false},
		{v: math.NaN(), integral: false},
		{v: 1e19, integral: true, u: 1e19, uok: true},
		{v: 1e30, integral: true},
		{v: uint64(1 << 63), integral: true, u: 1 << 63, uok: true},
		{v: bigInt("100000000000000000000000000000"), integral: true},
		{v: "1", integral: false},
		{v: true, integral: false},
		{v: nil, integral: false},
	}
	for _, tt := range tests {
		if got := Integral(tt.v); got != tt.integral {
			t.Errorf("Integral(%#v) = %v, want %v", tt.v, got, tt.integral)
		}
		if i, ok := Int(tt.v); i != tt.i || ok != tt.iok {
			t.Errorf("Int(%#v) = %d, %v, want %d, %v", tt.v, i, ok, tt.i, tt.iok)
		}
		if u, ok := Uint(tt.v); u != tt.u || ok != tt.uok {
			t.Errorf("Uint(%#v) = %d, %v, want %d, %v", tt.v, u, ok, tt.u, tt.uok)
		}
	}
}

// TestNormalize: Go values come into the closed set once, by value.
func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want any
	}{
		{int8(-8), -8}, {int16(16), 16}, {int32(-32), -32}, {int64(math.MinInt64), math.MinInt64},
		{uint(7), 7}, {uint8(8), 8}, {uint16(16), 16}, {uint32(32), 32},
		{uint64(5), 5}, {uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{big.NewInt(-5), -5}, {bigInt("18446744073709551615"), uint64(math.MaxUint64)},
		{bigInt("-100000000000000000000000000000"), bigInt("-100000000000000000000000000000")},
		{float32(0.5), 0.5}, {[]string{"a"}, []any{"a"}}, {[]int{1, 2}, []any{1, 2}},
		{map[string]any{"b": int64(2), "a": []string{}}, Metadata{{"a", []any{}}, {"b", 2}}},
		{Metadata{{"k", uint8(1)}, {"k", Metadata(nil)}}, Metadata{{"k", 1}, {"k", Metadata(nil)}}},
		{[]any{nil, true, "s", 1.5}, []any{nil, true, "s", 1.5}},
	}
	for _, tt := range tests {
		got, err := Normalize[Metadata](tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Normalize(%#v) = %#v, %v, want %#v", tt.in, got, err, tt.want)
		}
	}
	in := Metadata{{"ok", 1}, {"t", []any{"x", struct{}{}}}}
	got, err := Normalize[Metadata](in)
	var fe *FieldError
	if !errors.Is(err, ErrMetadataValue) || !errors.As(err, &fe) || fe.Path != "t[1]" || !reflect.DeepEqual(got, in) {
		t.Errorf("Normalize(%#v) = %#v, %v, want the value kept and an error at t[1]", in, got, err)
	}
}

// TestCheckText: one check for text values and whole documents.
func TestCheckText(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""}, {"héllo 😀", ""},
		{"\xff", "invalid UTF-8 at byte 0"},
		{"caf\xe9", "invalid UTF-8 at byte 3"},
		{"ok é\xed\xa0\x80", "invalid UTF-8 at byte 5"},
		{strings.Repeat("a", 5000) + "\xc3", "invalid UTF-8 at byte 5000"},
	}
	for _, tt := range tests {
		for name, err := range map[string]error{"string": CheckText(tt.in), "bytes": CheckText([]byte(tt.in))} {
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want || !errors.Is(err, ErrNotUTF8)) {
				t.Errorf("CheckText(%s %q) = %v, want %q", name, tt.in, err, tt.want)
			}
		}
	}
	if err := AtKey(CheckText([]byte("ab\xff")), "content"); err == nil || err.Error() != "content: invalid UTF-8 at byte 2" {
		t.Errorf("AtKey(CheckText) = %v", err)
	}
}

// TestDescribeJSON: what a document that is no JSON object starts with is
// described as it is.
func TestDescribeJSON(t *testing.T) {
	tests := map[string]string{
		"nonsense": `want a JSON object, got 'n' at byte 0`,
		"  nul":    `want a JSON object, got 'n' at byte 2`,
		"null":     `want a JSON object, got null`,
		"true":     `want a JSON object, got a boolean`,
		"tx":       `want a JSON object, got 't' at byte 0`,
		"false ":   `want a JSON object, got a boolean`,
		"-1":       `want a JSON object, got a number`,
	}
	for in, want := range tests {
		if _, err := DecodeJSONObject[Metadata]([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("DecodeJSONObject(%q) = %v, want %q", in, err, want)
		}
	}
}
