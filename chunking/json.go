package chunking

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file is the one JSON codec of ordered metadata: JSONL storage and
// the wire's JSON both read and write records through it. The standard
// library's encoding/json cannot be used to read: it replaces invalid
// UTF-8 and lone surrogate escapes with U+FFFD without a word, and it
// cannot say which field held them.

// MaxDepth is how deeply metadata may nest. In a record (a JSONL line, a
// wire message) a member's map or list is level 1 (a chunk's metadata map
// is), a map or list inside it level 2, and so on; every reader and writer
// of this package refuses a map or list below level MaxDepth.
const MaxDepth = 32

// MaxIntDigits is the most digits an integer literal may have: the limit
// of Python's int parsing, so every integer the reference can read loads,
// and a hostile literal cannot take quadratic time.
const MaxIntDigits = 4300

// FieldError reports a value that cannot be read or written, and where it
// sits.
type FieldError struct {
	// Path names the field: map keys joined by "." and list positions in
	// brackets ("metadata.tags[2]"); empty for the record itself.
	Path string
	// Err says what is wrong with the value.
	Err error
}

// Error returns "path: reason".
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// AtKey returns err as found in the value of map key key: a *FieldError's
// path gains key in front, any other error becomes a *FieldError at key.
// Codecs outside this package (the wire's msgpack) use it and AtIndex to
// name fields as this package does.
func AtKey(err error, key string) error { return within(err, key) }

// AtIndex returns err as found at position i of a list; see AtKey.
func AtIndex(err error, i int) error { return within(err, "["+strconv.Itoa(i)+"]") }

func within(err error, seg string) error {
	fe, ok := err.(*FieldError)
	if !ok {
		return &FieldError{Path: seg, Err: err}
	}
	switch {
	case fe.Path == "":
		fe.Path = seg
	case fe.Path[0] == '[':
		fe.Path = seg + fe.Path
	default:
		fe.Path = seg + "." + fe.Path
	}
	return fe
}

// inKey marks err as found in a map key rather than its value.
func inKey(err error) error {
	return &FieldError{Err: fmt.Errorf("in a key: %w", err)}
}

// textError reports text that is not valid UTF-8: invalid bytes, or (in
// JSON) an escaped surrogate without its pair. It matches ErrNotUTF8.
type textError struct {
	offset    int  // byte offset in the text (decoded, for JSON)
	surrogate rune // the lone surrogate, or 0 for invalid bytes
}

func (e *textError) Error() string {
	if e.surrogate != 0 {
		return fmt.Sprintf(`lone surrogate \u%04x at byte %d`, e.surrogate, e.offset)
	}
	return fmt.Sprintf("invalid UTF-8 at byte %d", e.offset)
}

func (e *textError) Is(target error) bool { return target == ErrNotUTF8 }

// ValidateText returns nil when s is valid UTF-8, else an error matching
// ErrNotUTF8 that gives the offset of the first bad byte ("invalid UTF-8
// at byte 12").
func ValidateText(s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return &textError{offset: i}
		}
		i += size
	}
	return nil // unreachable: ValidString said otherwise
}

// ParseInteger parses a decimal integer in JSON's grammar ("-12",
// "100000000000000000000000000000": an optional minus, no leading zeros)
// into the form loaders give: int when it fits, else uint64 when it fits,
// else *big.Int. Literals of more than MaxIntDigits digits are refused.
func ParseInteger(s string) (any, error) {
	digits := s
	if digits != "" && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" || (len(digits) > 1 && digits[0] == '0') || !allDigits(digits) {
		return nil, fmt.Errorf("%q is not a decimal integer", shorten(s))
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

// shorten cuts a long literal for an error message.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:20] + "…" + s[len(s)-10:]
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Deduplicate returns m with one field per key: a repeated key keeps its
// first place and takes its last value, as a Python dict built from the
// pairs does. It is the rule of every reader and writer of metadata (JSON,
// YAML, the wire's msgpack). m itself is returned when no key repeats;
// otherwise m is left untouched. The work is linear in len(m).
func Deduplicate(m Metadata) Metadata { return dedupCounting(m, nil) }

// smallMap is the field count up to which keys are compared pairwise: a
// map costs more than a few comparisons.
const smallMap = 16

// dedupCounting is Deduplicate adding one to *ops (when ops is not nil)
// per key comparison or map operation, so that a test can check the work
// is linear in len(m): at most smallMap per field.
func dedupCounting(m Metadata, ops *int) Metadata {
	count := func(n int) {
		if ops != nil {
			*ops += n
		}
	}
	if len(m) <= smallMap {
		dup := false
		for i := 1; i < len(m) && !dup; i++ {
			for j := range i {
				count(1)
				if m[i].Key == m[j].Key {
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
	var out Metadata // nil until the first repeat
	for i, f := range m {
		count(1)
		j, seen := idx[f.Key]
		switch {
		case seen:
			if out == nil { // the keys before the first repeat are distinct
				count(i)
				out = append(make(Metadata, 0, len(m)), m[:i]...)
			}
			out[j].Value = f.Value
		case out != nil:
			idx[f.Key] = len(out)
			out = append(out, f)
		default:
			idx[f.Key] = i
		}
	}
	if out == nil {
		return m
	}
	return out
}

// AppendJSONObject appends m as one compact JSON object (a record: a JSONL
// line without its newline, a wire message). Members keep their order; a
// repeated key is written once, in its first place, with its last value.
// Strings are written raw except '"', '\\', control characters and U+2028
// and U+2029 (escaped, so that the output stays one line for every reader
// that splits lines on them); floats as Python's repr writes them (always
// with a "." or an exponent, so they read back as floats); integers of any
// size, *big.Int included, as their digits; unordered maps with sorted
// keys. A value that has no JSON form is a *FieldError naming it: text
// that is not UTF-8 (matching ErrNotUTF8), NaN and infinities or a type
// metadata cannot hold (ErrMetadataValue), nesting below MaxDepth.
func AppendJSONObject(b []byte, m Metadata) ([]byte, error) {
	return appendJSONObject(b, m, 0)
}

func appendJSONObject(b []byte, m Metadata, depth int) ([]byte, error) {
	m = Deduplicate(m)
	b = append(b, '{')
	for i, f := range m {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, f.Key); err != nil {
			return nil, inKey(err)
		}
		b = append(b, ':')
		if b, err = appendJSONValue(b, f.Value, depth+1); err != nil {
			return nil, within(err, f.Key)
		}
	}
	return append(b, '}'), nil
}

// appendJSONValue appends v, which sits at the given level: a map or list
// there may not be below MaxDepth.
func appendJSONValue(b []byte, v any, depth int) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case *big.Int:
		if x == nil {
			return nil, &FieldError{Err: fmt.Errorf("%w: nil *big.Int", ErrMetadataValue)}
		}
		return x.Append(b, 10), nil
	case float32:
		return appendJSONValue(b, float64(x), depth)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, &FieldError{Err: fmt.Errorf("%w: %v has no JSON form", ErrMetadataValue, x)}
		}
		return appendPyFloat(b, x), nil
	case string:
		if b, err = appendJSONString(b, x); err != nil {
			return nil, &FieldError{Err: err}
		}
		return b, nil
	}
	if depth > MaxDepth {
		return nil, &FieldError{Err: errTooDeep}
	}
	switch x := v.(type) {
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, s); err != nil {
				return nil, AtIndex(err, i)
			}
		}
		return append(b, ']'), nil
	case []int:
		b = append(b, '[')
		for i, n := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		return append(b, ']'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONValue(b, e, depth+1); err != nil {
				return nil, AtIndex(err, i)
			}
		}
		return append(b, ']'), nil
	case Metadata:
		return appendJSONObject(b, x, depth)
	case map[string]any:
		md := make(Metadata, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			md = append(md, Field{k, x[k]})
		}
		return appendJSONObject(b, md, depth)
	}
	return nil, &FieldError{Err: fmt.Errorf("%w: %T", ErrMetadataValue, v)}
}

var errTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)

// appendJSONString appends s as a JSON string: control characters, '"'
// and '\' escaped, U+2028 and U+2029 escaped, everything else raw. Text
// that is not UTF-8 is an error giving the offset of the first bad byte.
func appendJSONString(b []byte, s string) ([]byte, error) {
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
			b = appendU(b, r)
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
			b = appendU(b, rune(c))
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// DecodeJSONObject reads data, which must hold one JSON object (a record:
// a JSONL line, a wire message) and nothing else but whitespace, into
// Metadata. Members keep their order; a repeated key keeps its first place
// and takes its last value. Objects become Metadata, arrays []any, strings
// string, integers int (uint64 above the int range, *big.Int beyond
// 64 bits), other numbers float64, plus bool and nil.
//
// Text is never altered: invalid UTF-8 and a \u escape of a surrogate
// without its pair are errors matching ErrNotUTF8, and like every error
// about a value (a number out of range, a map or list below MaxDepth) they
// are a *FieldError naming the field and giving the byte offset in the
// decoded text: "metadata.title: lone surrogate \ud800 at byte 5".
// Malformed JSON gives the byte offset in data.
func DecodeJSONObject(data []byte) (Metadata, error) {
	p := jsonParser{data: data}
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
type jsonParser struct {
	data []byte
	i    int
	buf  []byte // strings with escapes are decoded here
}

func (p *jsonParser) skipSpace() {
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
func (p *jsonParser) describe() string {
	switch c := p.data[p.i]; {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return fmt.Sprintf("%s at byte %d", quoteByte(c), p.i)
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *jsonParser) syntax(want string) error {
	if p.i >= len(p.data) {
		return fmt.Errorf("unexpected end of JSON input, want %s", want)
	}
	return fmt.Errorf("invalid JSON: %s at byte %d, want %s", quoteByte(p.data[p.i]), p.i, want)
}

// value reads one value, which sits at the given level.
func (p *jsonParser) value(depth int) (any, error) {
	p.skipSpace()
	if p.i >= len(p.data) {
		return nil, p.syntax("a value")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth > MaxDepth {
			return nil, &FieldError{Err: errTooDeep}
		}
		return p.object(depth)
	case c == '[':
		if depth > MaxDepth {
			return nil, &FieldError{Err: errTooDeep}
		}
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

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return p.syntax(word)
	}
	p.i += len(word)
	return nil
}

// object reads an object whose members sit one level below depth.
func (p *jsonParser) object(depth int) (Metadata, error) {
	p.i++ // '{'
	m := Metadata{}
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
			if fe, ok := err.(*FieldError); ok {
				return nil, inKey(fe.Err)
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
			if _, ok := err.(*FieldError); ok {
				return nil, within(err, k)
			}
			return nil, err
		}
		m = append(m, Field{k, v})
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
func (p *jsonParser) array(depth int) ([]any, error) {
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
			if _, ok := err.(*FieldError); ok {
				return nil, AtIndex(err, len(list))
			}
			return nil, err
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
// empty path, for the caller to place.
func (p *jsonParser) str() (string, error) {
	data := p.data
	start := p.i + 1
	// Fast path: no escapes, the text is the input's bytes.
	for i := start; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(data[start:i]), nil
		case c == '\\':
			return p.escapedStr(start, i)
		case c < 0x20:
			p.i = i
			return "", p.syntax("a string's closing '\"' (control characters must be escaped)")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", &FieldError{Err: &textError{offset: i - start}}
			}
			i += size
		}
	}
	p.i = len(data)
	return "", p.syntax("a string's closing '\"'")
}

// escapedStr continues str from the first backslash, at i.
func (p *jsonParser) escapedStr(start, i int) (string, error) {
	data := p.data
	// The text is at most the rest of the input: one buffer of that size
	// serves every escaped string of the input.
	if cap(p.buf) < len(data)-start {
		p.buf = make([]byte, 0, len(data)-start)
	}
	b := append(p.buf[:0], data[start:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(b), nil
		case c == '\\':
			if i+1 >= len(data) {
				p.i = len(data)
				return "", p.syntax("an escape")
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
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
				continue
			default:
				p.i = i
				return "", p.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`)
			}
			i += 2
		case c < 0x20:
			p.i = i
			return "", p.syntax("a string's closing '\"' (control characters must be escaped)")
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", &FieldError{Err: &textError{offset: len(b)}}
			}
			b = append(b, data[i:i+size]...)
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
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number: an integer literal becomes what ParseInteger
// gives, anything else a float64.
func (p *jsonParser) number() (any, error) {
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
		return nil, &FieldError{Err: fmt.Errorf("number %s out of range", shorten(lit))}
	}
	return f, nil
}
