package chunking

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// OptionKind is the type of a chunker option.
type OptionKind int

// Option kinds.
const (
	IntOption OptionKind = iota
	BoolOption
	IntListOption
	StringOption
)

// OptionSpec describes one chunker option, for the wire decoder, the CLIs
// (flag = Name in kebab case) and the docs.
type OptionSpec struct {
	// Name is the reference's snake_case parameter name ("min_char").
	Name string
	// Kind is the option's type.
	Kind OptionKind
	// Default is the value used when the option is absent.
	Default any
	// Usage is a one-line description for -h.
	Usage string
	// FlagName overrides the CLI flag name (default: Name in kebab case).
	FlagName string
}

// Flag returns the option's CLI flag name: FlagName, else Name in kebab
// case.
func (s OptionSpec) Flag() string {
	if s.FlagName != "" {
		return s.FlagName
	}
	return strings.ReplaceAll(s.Name, "_", "-")
}

// Options are decoded chunker options: name → value, holding only the
// options that were present. Values are int, bool, []int or string.
type Options map[string]any

// Int returns the option's value, or def when absent.
func (o Options) Int(name string, def int) int {
	if v, ok := o[name].(int); ok {
		return v
	}
	return def
}

// Bool returns the option's value, or def when absent.
func (o Options) Bool(name string, def bool) bool {
	if v, ok := o[name].(bool); ok {
		return v
	}
	return def
}

// Ints returns the option's value, or def when absent.
func (o Options) Ints(name string, def []int) []int {
	if v, ok := o[name].([]int); ok {
		return slices.Clone(v)
	}
	return slices.Clone(def)
}

// String returns the option's value, or def when absent.
func (o Options) String(name string, def string) string {
	if v, ok := o[name].(string); ok {
		return v
	}
	return def
}

// DecodeOptions checks raw options (as decoded from JSON or msgpack, or
// built from flags) against specs and normalises their values: an unknown
// name wraps ErrUnknownOption, a value of the wrong type wraps
// ErrInvalidOptions. Integers may arrive as any Go integer, as integral
// floats (JSON) or as decimal strings (flags); booleans as bool or the
// strings "true"/"false"; integer lists as []any, []int or "1,2,3".
func DecodeOptions(specs []OptionSpec, raw map[string]any) (Options, error) {
	out := make(Options, len(raw))
	for name, v := range raw {
		i := slices.IndexFunc(specs, func(s OptionSpec) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w %q", ErrUnknownOption, name)
		}
		val, err := decodeOption(specs[i].Kind, v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidOptions, name, err)
		}
		out[name] = val
	}
	return out, nil
}

func decodeOption(kind OptionKind, v any) (any, error) {
	switch kind {
	case IntOption:
		return toInt(v)
	case BoolOption:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, fmt.Errorf("want a boolean, got %q", x)
			}
			return b, nil
		}
		return nil, fmt.Errorf("want a boolean, got %T", v)
	case IntListOption:
		switch x := v.(type) {
		case []int:
			return slices.Clone(x), nil
		case []any:
			out := make([]int, len(x))
			for i, e := range x {
				n, err := toInt(e)
				if err != nil {
					return nil, err
				}
				out[i] = n
			}
			return out, nil
		case string:
			var out []int
			for f := range strings.SplitSeq(x, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				n, err := toInt(f)
				if err != nil {
					return nil, err
				}
				out = append(out, n)
			}
			return out, nil
		}
		return nil, fmt.Errorf("want a list of integers, got %T", v)
	case StringOption:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("want a string, got %T", v)
	}
	return nil, fmt.Errorf("unknown option kind %d", kind)
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int8:
		return int(x), nil
	case int16:
		return int(x), nil
	case int32:
		return int(x), nil
	case int64:
		if x > math.MaxInt32 || x < math.MinInt32 {
			return 0, fmt.Errorf("integer %d out of range", x)
		}
		return int(x), nil
	case uint8:
		return int(x), nil
	case uint16:
		return int(x), nil
	case uint32:
		if x > math.MaxInt32 {
			return 0, fmt.Errorf("integer %d out of range", x)
		}
		return int(x), nil
	case uint64:
		if x > math.MaxInt32 {
			return 0, fmt.Errorf("integer %d out of range", x)
		}
		return int(x), nil
	case uint:
		if x > math.MaxInt32 {
			return 0, fmt.Errorf("integer %d out of range", x)
		}
		return int(x), nil
	case float64:
		if x != math.Trunc(x) || x > math.MaxInt32 || x < math.MinInt32 {
			return 0, fmt.Errorf("want an integer, got %v", x)
		}
		return int(x), nil
	case float32:
		return toInt(float64(x))
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("want an integer, got %q", x)
		}
		return toInt(int64(n))
	}
	return 0, fmt.Errorf("want an integer, got %T", v)
}
