package registry

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/codec"
)

// Kind is the type of a chunker option's value.
type Kind int

// Option kinds. A resolved map holds, per kind: int, bool, []int, string,
// and for BoolOrAuto true, false or "auto".
const (
	Int Kind = iota
	Bool
	IntList
	String
	BoolOrAuto
)

// String returns the kind as errors and help texts name it.
func (k Kind) String() string {
	switch k {
	case Int:
		return "an integer"
	case Bool:
		return "a boolean"
	case IntList:
		return "a list of integers"
	case String:
		return "a string"
	case BoolOrAuto:
		return `a boolean or "auto"`
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Option describes one chunker option, for flags, help texts and docs.
type Option struct {
	// Name is the reference's snake_case parameter name ("max_char"), on
	// the wire and in option files.
	Name string
	// Flag is the CLI flag name: Name in kebab case unless set
	// ("headers" for headers_to_split_on).
	Flag    string
	Kind    Kind
	Default any    // as Resolve writes it
	Usage   string // one line, for -h
}

// Spec binds one option to a field of a chunker's configuration type C.
// Build it with IntOption, BoolOption, IntListOption or StringOption.
type Spec[C any] struct {
	opt         Option
	field       func(*C) any            // the field's address, for the field/spec test
	set         func(c *C, v any) error // v is already of the kind's Go type
	get         func(c *C) any          // the canonical value
	omitDefault bool
	replaces    []string // options this one sets in their place (Replaces, Beats)
	beats       bool     // Beats: one layer may set both sides
}

// Replaces returns s as an alternative to the options names: a value
// other than its default sets them itself. One layer of options may not
// set both s and any of names (an error wrapping
// chunking.ErrInvalidOptions names them); a layer that sets either side
// resets the other side to its defaults first, so the latest layer's
// choice wins whole; and while s has a value other than its default,
// names are left out of the resolved map (see the package documentation,
// "Decoding").
func (s Spec[C]) Replaces(names ...string) Spec[C] {
	s.replaces = append(slices.Clone(s.replaces), names...)
	return s
}

// Beats is Replaces but for one rule: one layer may set both s and
// names, and s wins while it has a value other than its default (the
// reference's twostep word_overlap beats chunk_overlap so); names are
// left out of the resolved map all the same.
func (s Spec[C]) Beats(names ...string) Spec[C] {
	s = s.Replaces(names...)
	s.beats = true
	return s
}

// OmitDefault returns s left out of resolved maps while it has its
// default value (see the package documentation, "Decoding").
func (s Spec[C]) OmitDefault() Spec[C] {
	s.omitDefault = true
	return s
}

// WithFlag returns s with the CLI flag name flag.
func (s Spec[C]) WithFlag(flag string) Spec[C] {
	s.opt.Flag = flag
	return s
}

// fieldOption binds the field of type T that field returns to the option
// name.
func fieldOption[C, T any](name string, kind Kind, usage string, field func(*C) *T) Spec[C] {
	return Spec[C]{
		opt:   Option{Name: name, Flag: strings.ReplaceAll(name, "_", "-"), Kind: kind, Usage: usage},
		field: func(c *C) any { return field(c) },
		set:   func(c *C, v any) error { *field(c) = v.(T); return nil },
		get:   func(c *C) any { return *field(c) },
	}
}

// IntOption binds the int field that field returns to the option name.
func IntOption[C any](name, usage string, field func(*C) *int) Spec[C] {
	return fieldOption(name, Int, usage, field)
}

// BoolOption binds the bool field that field returns to the option name.
func BoolOption[C any](name, usage string, field func(*C) *bool) Spec[C] {
	return fieldOption(name, Bool, usage, field)
}

// StringOption binds the string field that field returns to the option
// name.
func StringOption[C any](name, usage string, field func(*C) *string) Spec[C] {
	return fieldOption(name, String, usage, field)
}

// IntListOption binds the []int field that field returns to the option
// name; the configuration gets its own copy.
func IntListOption[C any](name, usage string, field func(*C) *[]int) Spec[C] {
	s := fieldOption(name, IntList, usage, field)
	s.set = func(c *C, v any) error { *field(c) = slices.Clone(v.([]int)); return nil }
	s.get = func(c *C) any {
		if l := *field(c); l != nil {
			return slices.Clone(l)
		}
		return []int{}
	}
	return s
}

// intSetOption is IntListOption for a list that is a set: its canonical
// value is sorted, without repeats, so equal sets resolve alike.
func intSetOption[C any](name, usage string, field func(*C) *[]int) Spec[C] {
	s := IntListOption(name, usage, field)
	s.get = func(c *C) any {
		l := slices.Clone(*field(c))
		slices.Sort(l)
		return append([]int{}, slices.Compact(l)...)
	}
	return s
}

// optionError is an option that is unknown or has a bad value, in the
// user's words.
type optionError struct {
	msg      string
	sentinel error // chunking.ErrUnknownOption or chunking.ErrInvalidOptions
	// chunker and option name an unknown option without a close name, for
	// the Registry to name the chunker that has it.
	chunker, option string
}

func (e *optionError) Error() string { return e.msg }
func (e *optionError) Unwrap() error { return e.sentinel }

func invalid(format string, args ...any) error {
	return &optionError{msg: fmt.Sprintf(format, args...), sentinel: chunking.ErrInvalidOptions}
}

// decode converts a raw option value to the Go type of kind (see the
// package documentation, "Decoding"); an integral number such as 1.0 or
// 1e3 is an integer (codec.Int).
func decode(kind Kind, v any) (any, error) {
	switch kind {
	case Int:
		return toInt(v)
	case Bool:
		return toBool(v)
	case BoolOrAuto:
		if s, ok := v.(string); ok && strings.EqualFold(strings.TrimSpace(s), "auto") {
			return "auto", nil
		}
		b, err := toBool(v)
		if err != nil {
			return nil, fmt.Errorf(`want a boolean or "auto", got %s`, describe(v))
		}
		return b, nil
	case IntList:
		return toInts(v)
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("want a string, got %s", describe(v))
	}
	return nil, fmt.Errorf("unknown option kind %d", kind)
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b, nil
		}
	}
	return false, fmt.Errorf("want a boolean, got %s", describe(v))
}

// intRange bounds option integers: each is a size or a count.
const intRange = math.MaxInt32

func toInt(v any) (int, error) {
	n := v
	switch x := v.(type) {
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want an integer, got %s", describe(v))
		}
		n = i
	case json.Number:
		if i, err := x.Int64(); err == nil {
			n = i
		} else if f, err := x.Float64(); err == nil {
			n = f
		}
	}
	n, _ = codec.Normalize[chunking.Metadata](n)
	i, ok := codec.Int(n)
	switch {
	case !codec.Integral(n):
		return 0, fmt.Errorf("want an integer, got %s", describe(v))
	case !ok || i > intRange || i < -intRange-1:
		return 0, fmt.Errorf("want an integer between %d and %d, got %s", -intRange-1, intRange, describe(v))
	}
	return i, nil
}

func toInts(v any) ([]int, error) {
	if s, ok := v.(string); ok {
		out := []int{}
		for i, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := toInt(f)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i+1, err)
			}
			out = append(out, n)
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("want a list of integers, got %s", describe(v))
	}
	out := make([]int, rv.Len())
	for i := range out {
		n, err := toInt(rv.Index(i).Interface())
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i+1, err)
		}
		out[i] = n
	}
	return out, nil
}

// describe names a raw value in the words of JSON, YAML or a flag.
func describe(v any) string {
	if v == nil {
		return "null"
	}
	switch x := v.(type) {
	case json.Number:
		return "the number " + x.String()
	case string:
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return "the string " + strconv.Quote(x)
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("the integer %v", v)
	case reflect.Float32, reflect.Float64:
		return "the number " + strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of an unsupported type"
}

// suggest returns the known name closest to name (edit distance at most
// 2, or the same once '-' is read as '_' and case ignored), or "".
func suggest(name string, known []string) string {
	norm := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	best, bestD := "", 3
	for _, k := range known {
		if k == norm {
			return k
		}
		if d := distance(norm, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
