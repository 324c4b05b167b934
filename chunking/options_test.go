package chunking

import (
	"errors"
	"slices"
	"testing"
)

func TestDecodeOptions(t *testing.T) {
	specs := []OptionSpec{
		{Name: "max_char", Kind: IntOption, Default: 2048},
		{Name: "merge", Kind: BoolOption, Default: true},
		{Name: "levels", Kind: IntListOption, Default: []int{1, 2}},
	}
	got, err := DecodeOptions(specs, map[string]any{"max_char": float64(10), "merge": false, "levels": []any{int8(1), uint16(3)}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Int("max_char", 0) != 10 || got.Bool("merge", true) || !slices.Equal(got.Ints("levels", nil), []int{1, 3}) {
		t.Errorf("DecodeOptions = %v", got)
	}
	if got := (Options{}).Int("max_char", 7); got != 7 {
		t.Errorf("absent Int = %d, want 7", got)
	}
	got, err = DecodeOptions(specs, map[string]any{"max_char": "0", "merge": "true", "levels": "1, 2,3"})
	if err != nil || got.Int("max_char", 5) != 0 || !got.Bool("merge", false) || !slices.Equal(got.Ints("levels", nil), []int{1, 2, 3}) {
		t.Errorf("DecodeOptions(strings) = %v, %v", got, err)
	}
	if _, err := DecodeOptions(specs, map[string]any{"nope": 1}); !errors.Is(err, ErrUnknownOption) {
		t.Errorf("unknown option: err = %v, want ErrUnknownOption", err)
	}
	for _, bad := range []map[string]any{{"max_char": 1.5}, {"max_char": "x"}, {"merge": 1}, {"levels": []any{"a"}}, {"max_char": int64(1) << 40}} {
		if _, err := DecodeOptions(specs, bad); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("DecodeOptions(%v): err = %v, want ErrInvalidOptions", bad, err)
		}
	}
}
