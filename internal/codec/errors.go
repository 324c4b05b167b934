package codec

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The sentinels of values and text, exported by package chunking too.
var (
	// ErrMetadataValue reports a value outside the closed set, or one
	// that has no form in the encoding being written.
	ErrMetadataValue = errors.New("chunking: unsupported metadata value")
	// ErrNotUTF8 reports text that is not valid UTF-8.
	ErrNotUTF8 = errors.New("chunking: text is not valid UTF-8")
)

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
// path gains key in front, another error becomes a *FieldError at key.
func AtKey(err error, key string) error {
	if err == nil {
		return nil
	}
	fe, ok := err.(*FieldError)
	if !ok {
		return &FieldError{Path: key, Err: err}
	}
	switch {
	case fe.Path == "":
		fe.Path = key
	case fe.Path[0] == '[':
		fe.Path = key + fe.Path
	default:
		fe.Path = key + "." + fe.Path
	}
	return fe
}

// AtIndex returns err as found at position i of a list; see AtKey.
func AtIndex(err error, i int) error { return AtKey(err, "["+strconv.Itoa(i)+"]") }

// ValueAtKey is AtKey for a *FieldError; any other error (about the
// message, such as input cut short) passes unchanged.
func ValueAtKey(err error, key string) error {
	if _, ok := err.(*FieldError); ok {
		return AtKey(err, key)
	}
	return err
}

// ValueAtIndex is AtIndex for a *FieldError; see ValueAtKey.
func ValueAtIndex(err error, i int) error {
	if _, ok := err.(*FieldError); ok {
		return AtIndex(err, i)
	}
	return err
}

// InKey returns err, about the text of a map key, as a *FieldError of the
// map.
func InKey(err error) error {
	if fe, ok := err.(*FieldError); ok {
		err = fe.Err
	}
	return &FieldError{Err: fmt.Errorf("in a key: %w", err)}
}

// textError reports invalid bytes or (in JSON) an unpaired surrogate
// escape; it matches ErrNotUTF8.
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

// CheckText returns nil when s is valid UTF-8, else an error matching
// ErrNotUTF8 that gives the offset of the first bad byte ("invalid UTF-8
// at byte 12"). Every check of text in the module goes through it.
func CheckText[T string | []byte](s T) error {
	var valid bool
	switch x := any(s).(type) {
	case string:
		valid = utf8.ValidString(x)
	case []byte:
		valid = utf8.Valid(x)
	}
	if valid {
		return nil
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			return &textError{offset: i}
		}
		i += size
	}
	return nil // unreachable: ValidString said otherwise
}
