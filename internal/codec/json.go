package codec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendJSONObject appends m as one compact JSON object (a JSONL line
// without its newline, a wire message), as the package documentation
// describes. A value with no JSON form (text that is not UTF-8, NaN,
// infinities, a value Normalize refuses, nesting below MaxDepth) is a
// *FieldError naming it.
func AppendJSONObject[M ~[]F, F Pair](b []byte, m M) ([]byte, error) {
	return appendObject(b, m, 0)
}

// AppendJSON appends v, at the given level (a record's member is at 1),
// as AppendJSONObject writes values.
func AppendJSON[M ~[]F, F Pair](b []byte, v any, depth int) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, &FieldError{Err: fmt.Errorf("%w: %v has no JSON form", ErrMetadataValue, x)}
		}
		return AppendFloat(b, x), nil
	case string:
		if b, err = AppendString(b, x); err != nil {
			return nil, &FieldError{Err: err}
		}
		return b, nil
	case *big.Int:
		if x != nil {
			return x.Append(b, 10), nil
		}
	case []any:
		if depth > MaxDepth {
			return nil, &FieldError{Err: ErrTooDeep}
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = AppendJSON[M, F](b, e, depth+1); err != nil {
				return nil, AtIndex(err, i)
			}
		}
		return append(b, ']'), nil
	case M:
		if depth > MaxDepth {
			return nil, &FieldError{Err: ErrTooDeep}
		}
		return appendObject(b, x, depth)
	}
	nv, err := Normalize[M, F](v)
	if err != nil {
		return nil, err
	}
	return AppendJSON[M, F](b, nv, depth)
}

func appendObject[M ~[]F, F Pair](b []byte, m M, depth int) ([]byte, error) {
	m = Deduplicate(m)
	b = append(b, '{')
	for i, mf := range m {
		f := pair(mf)
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = AppendString(b, f.Key); err != nil {
			return nil, InKey(err)
		}
		b = append(b, ':')
		if b, err = AppendJSON[M, F](b, f.Value, depth+1); err != nil {
			return nil, AtKey(err, f.Key)
		}
	}
	return append(b, '}'), nil
}

// ErrTooDeep is the error of a map or list nested below MaxDepth.
var ErrTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)

// AppendString appends s as a JSON string; text that is not UTF-8 is an
// error giving the offset of the first bad byte.
func AppendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, &textError{offset: i}
			}
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = AppendU(b, r)
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = AppendU(b, rune(c))
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// DecodeJSONObject reads data, which must hold one JSON object and
// nothing else but whitespace, into an M of the closed set, a repeated key
// deduplicated. An error about a value (text that is not UTF-8, a number
// out of range, nesting below MaxDepth) is a *FieldError naming the field
// and the byte in the decoded text; malformed JSON gives the byte offset
// in data.
func DecodeJSONObject[M ~[]F, F Pair](data []byte) (M, error) {
	p := jsonParser[M, F]{data: data}
	p.skipSpace()
	if p.i >= len(data) {
		return nil, errors.New("want a JSON object, got nothing")
	}
	if data[p.i] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", p.describe())
	}
	m, err := p.object(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(data) {
		return nil, fmt.Errorf("trailing data after the JSON object at byte %d", p.i)
	}
	return m, nil
}

// jsonParser reads JSON text as RFC 8259 defines it.
type jsonParser[M ~[]F, F Pair] struct {
	data []byte
	i    int
	buf  []byte // strings with escapes are decoded here
}

func (p *jsonParser[M, F]) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// describe names what starts at the current position.
func (p *jsonParser[M, F]) describe() string {
	switch c := p.data[p.i]; {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case p.at("true") || p.at("false"):
		return "a boolean"
	case p.at("null"):
		return "null"
	}
	return fmt.Sprintf("%s at byte %d", quoteByte(p.data[p.i]), p.i)
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *jsonParser[M, F]) syntax(want string) error {
	if p.i >= len(p.data) {
		return fmt.Errorf("unexpected end of JSON input, want %s", want)
	}
	return fmt.Errorf("invalid JSON: %s at byte %d, want %s", quoteByte(p.data[p.i]), p.i, want)
}

// value reads one value, which sits at the given level.
func (p *jsonParser[M, F]) value(depth int) (any, error) {
	p.skipSpace()
	if p.i >= len(p.data) {
		return nil, p.syntax("a value")
	}
	switch c := p.data[p.i]; {
	case (c == '{' || c == '[') && depth > MaxDepth:
		return nil, &FieldError{Err: ErrTooDeep}
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.syntax("a value")
}

// at reports whether the input continues with word.
func (p *jsonParser[M, F]) at(word string) bool {
	return len(p.data)-p.i >= len(word) && string(p.data[p.i:p.i+len(word)]) == word
}

func (p *jsonParser[M, F]) literal(word string) error {
	if !p.at(word) {
		return p.syntax(word)
	}
	p.i += len(word)
	return nil
}

// object reads an object whose members sit one level below depth.
func (p *jsonParser[M, F]) object(depth int) (M, error) {
	p.i++ // '{'
	m := M{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.syntax("a string key")
		}
		k, err := p.str()
		if err != nil {
			if _, ok := err.(*FieldError); ok {
				return nil, InKey(err)
			}
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.syntax("':'")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, ValueAtKey(err, k)
		}
		m = append(m, F(pair{k, v}))
		p.skipSpace()
		if p.i < len(p.data) {
			switch p.data[p.i] {
			case ',':
				p.i++
				continue
			case '}':
				p.i++
				return Deduplicate(m), nil
			}
		}
		return nil, p.syntax("',' or '}'")
	}
}

// array reads an array whose elements sit one level below depth.
func (p *jsonParser[M, F]) array(depth int) ([]any, error) {
	p.i++ // '['
	list := []any{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return list, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, ValueAtIndex(err, len(list))
		}
		list = append(list, v)
		p.skipSpace()
		if p.i < len(p.data) {
			switch p.data[p.i] {
			case ',':
				p.i++
				continue
			case ']':
				p.i++
				return list, nil
			}
		}
		return nil, p.syntax("',' or ']'")
	}
}

// str reads a string. Errors about its text are *FieldErrors with an
// empty path, for the caller to place; offsets count decoded bytes.
func (p *jsonParser[M, F]) str() (string, error) {
	data := p.data
	start := p.i + 1
	var b []byte // the text up to run, once an escape was met
	run := start // the first byte not in b
	for i := start; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			p.i = i + 1
			if b == nil {
				return string(data[start:i]), nil
			}
			return string(append(b, data[run:i]...)), nil
		case c == '\\':
			if b == nil { // one buffer of the rest's size serves every string
				if cap(p.buf) < len(data)-start {
					p.buf = make([]byte, 0, len(data)-start)
				}
				b = p.buf[:0]
			}
			b = append(b, data[run:i]...)
			if i+1 >= len(data) {
				p.i = len(data)
				return "", p.syntax("an escape")
			}
			if k := strings.IndexByte(`"\/bfnrt`, data[i+1]); k >= 0 {
				b = append(b, "\"\\/\b\f\n\r\t"[k])
				i += 2
				run = i
				continue
			}
			if data[i+1] != 'u' {
				p.i = i
				return "", p.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`)
			}
			r, ok := hex4(data[i+2:])
			if !ok {
				p.i = i
				return "", p.syntax(`four hex digits after \u`)
			}
			i += 6
			switch {
			case r >= 0xD800 && r < 0xDC00:
				r2, ok := rune(0), false
				if i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
					r2, ok = hex4(data[i+2:])
				}
				if !ok || r2 < 0xDC00 || r2 >= 0xE000 {
					return "", &FieldError{Err: &textError{offset: len(b), surrogate: r}}
				}
				i += 6
				r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
			case r >= 0xDC00 && r < 0xE000:
				return "", &FieldError{Err: &textError{offset: len(b), surrogate: r}}
			}
			b = utf8.AppendRune(b, r)
			run = i
		case c < 0x20:
			p.i = i
			return "", p.syntax("a string's closing '\"' (control characters must be escaped)")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", &FieldError{Err: &textError{offset: len(b) + i - run}}
			}
			i += size
		}
	}
	p.i = len(data)
	return "", p.syntax("a string's closing '\"'")
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	r, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(r), err == nil
}

// number reads a number: an integer literal becomes what ParseInteger
// gives, anything else a float64.
func (p *jsonParser[M, F]) number() (any, error) {
	data := p.data
	start := p.i
	i := start
	digits := func() bool {
		n := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > n
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		p.i = i
		return nil, p.syntax("a digit")
	}
	integer := true
	if i < len(data) && data[i] == '.' {
		integer = false
		i++
		if !digits() {
			p.i = i
			return nil, p.syntax("a digit after '.'")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		integer = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			p.i = i
			return nil, p.syntax("a digit in the exponent")
		}
	}
	p.i = i
	lit := string(data[start:i])
	if integer {
		v, err := ParseInteger(lit)
		if err != nil {
			return nil, &FieldError{Err: err}
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil, &FieldError{Err: fmt.Errorf("number %s out of range", shortText(lit))}
	}
	return f, nil
}
