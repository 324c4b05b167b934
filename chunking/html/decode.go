package html

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// ErrCharset reports a page that cannot be decoded to text: bytes that
// are not valid in the charset it declares (UTF-8 when it declares none),
// or a declared charset that has no decoder. Such errors also match
// chunking.ErrNotUTF8, so every caller that handles bad text handles
// them.
var ErrCharset = errors.New("html: text not valid in its charset")

// charsetError is an ErrCharset: the offset of the first byte that does
// not decode, in the page as given.
type charsetError struct {
	charset string
	offset  int
	bytes   []byte // the bad bytes, at most a few
}

func (e *charsetError) Error() string {
	if e.offset < 0 {
		return fmt.Sprintf("the page declares a charset that has no decoder (%s)", e.charset)
	}
	return fmt.Sprintf("invalid %s at byte %d (% x)", e.charset, e.offset, e.bytes)
}

func (e *charsetError) Is(target error) bool {
	return target == ErrCharset || target == chunking.ErrNotUTF8
}

// utf8BOM is the UTF-8 byte-order mark.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// decoded is a page as UTF-8 text: text, and the map from its offsets to
// the page's (nil when text is the page itself, or the page after a
// UTF-8 byte-order mark: then skip is 3).
type decoded struct {
	text    []byte
	charset string // the charset's WHATWG name ("utf-8", "shift_jis")
	skip    int    // bytes of a UTF-8 byte-order mark before text
	m       *offsetMap
}

// orig maps a range of text to the page.
func (d *decoded) orig(start, end int) (int, int) {
	if d.m == nil {
		return start + d.skip, end + d.skip
	}
	return d.m.start(start), d.m.end(end)
}

// decode returns page as UTF-8 text, by the charset it declares: a
// byte-order mark, else a <meta> charset in its first 1024 bytes (the
// HTML standard's prescan), else UTF-8. The standard's last resort, a
// guess from the bytes or the locale, is not taken: a page that declares
// nothing must be UTF-8. Bytes that do not decode are an ErrCharset
// naming the first one, never replaced.
func decode(page []byte) (decoded, error) {
	if bytes.HasPrefix(page, utf8BOM) {
		return decodeUTF8(page, len(utf8BOM))
	}
	name := declared(page)
	if name == "utf-8" {
		return decodeUTF8(page, 0)
	}
	enc, _ := charset.Lookup(name)
	if enc == nil || name == "replacement" { // the standard's name for labels with no decoder
		return decoded{}, &charsetError{charset: name, offset: -1}
	}
	bom := 0
	if strings.HasPrefix(name, "utf-16") && len(page) >= 2 && (page[0] == 0xfe && page[1] == 0xff || page[0] == 0xff && page[1] == 0xfe) {
		bom = 2 // not text, as a UTF-8 byte-order mark is not
	}
	return decodeWith(page, bom, enc, name)
}

// declared returns the WHATWG name of the charset page declares by a
// UTF-16 byte-order mark or a <meta> in its first 1024 bytes, or
// "utf-8" when it declares none.
func declared(page []byte) string {
	switch {
	case bytes.HasPrefix(page, []byte{0xfe, 0xff}):
		return "utf-16be"
	case bytes.HasPrefix(page, []byte{0xff, 0xfe}):
		return "utf-16le"
	}
	// charset.DetermineEncoding falls back to a guess from the bytes when
	// no <meta> declares a charset, and its answer does not say which it
	// did. Given a head that is valid UTF-8 with a non-ASCII character,
	// its guess is always "utf-8": so any other answer is a declaration.
	head := page[:min(len(page), 1024-len("é"))]
	probe := make([]byte, 0, 1024)
	probe = append(probe, "é"...)
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n <= 1 {
			probe = append(probe, '?')
			n = 1
		} else {
			probe = append(probe, head[:n]...)
		}
		head = head[n:]
	}
	_, name, _ := charset.DetermineEncoding(probe, "")
	return name
}

// decodeUTF8 checks that page[skip:] is UTF-8.
func decodeUTF8(page []byte, skip int) (decoded, error) {
	text := page[skip:]
	if !utf8.Valid(text) {
		off := 0
		for off < len(text) {
			r, n := utf8.DecodeRune(text[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return decoded{}, &charsetError{charset: "utf-8", offset: skip + off, bytes: text[off:min(len(text), off+4)]}
	}
	return decoded{text: text, charset: "utf-8", skip: skip}, nil
}

// decodeWith decodes page[from:] with enc one character at a time, so that each
// character's bytes are known: a window of bytes grows until the decoder
// takes a character from it. A U+FFFD out of bytes that do not encode
// U+FFFD in enc is a byte that does not decode.
func decodeWith(page []byte, from int, enc encoding.Encoding, name string) (decoded, error) {
	dec := enc.NewDecoder()
	replacement, err := enc.NewEncoder().Bytes([]byte("\uFFFD"))
	if err != nil || bytes.HasPrefix(replacement, []byte("&#")) { // not in enc
		replacement = nil
	}
	c1 := singleByte(name)
	var out buf
	out.b = make([]byte, 0, len(page)+len(page)/2)
	var dst [64]byte
	for i := from; i < len(page); {
		n := 1
		for {
			end := min(i+n, len(page))
			nDst, nSrc, err := dec.Transform(dst[:], page[i:end], end == len(page))
			if nSrc > 0 {
				got := dst[:nDst]
				if c1 && nSrc == 1 && 0x80 <= page[i] && page[i] <= 0x9f && string(got) == "\uFFFD" {
					got = utf8.AppendRune(dst[:0], rune(page[i])) // the Encoding Standard's C1 control
				}
				if bad := bytes.Index(got, []byte("\uFFFD")); bad >= 0 && !bytes.Equal(page[i:i+nSrc], replacement) {
					return decoded{}, &charsetError{charset: name, offset: i, bytes: page[i:min(len(page), i+max(nSrc, 1), i+4)]}
				}
				if nSrc == nDst && bytes.Equal(got, page[i:i+nSrc]) {
					out.copied(got, i)
				} else {
					out.made(string(got), i, i+nSrc)
				}
				i += nSrc
				break
			}
			if err != transform.ErrShortSrc || end == len(page) {
				return decoded{}, &charsetError{charset: name, offset: i, bytes: page[i:min(len(page), i+4)]}
			}
			n++
		}
	}
	if !utf8.Valid(out.b) { // a decoder's output is UTF-8; make sure
		return decoded{}, &charsetError{charset: name, offset: 0}
	}
	return decoded{text: out.b, charset: name, m: out.mapOf()}, nil
}

// singleByte reports whether the charset of WHATWG name is one of the
// Encoding Standard's single-byte encodings. Their indexes map each byte
// 0x80–0x9F that the encoding leaves to no character to the C1 control
// of the same number (windows-1252's 0x81, 0x8D, 0x8F, 0x90 and 0x9D,
// all of the ISO 8859 ones'), where x/text's tables have no character:
// decodeWith takes the standard's, so that a page every byte of which a
// browser decodes is decoded.
func singleByte(name string) bool {
	switch name {
	case "ibm866", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5", "iso-8859-6", "iso-8859-7",
		"iso-8859-8", "iso-8859-8-i", "iso-8859-10", "iso-8859-13", "iso-8859-14", "iso-8859-15",
		"iso-8859-16", "koi8-r", "koi8-u", "macintosh", "windows-874", "windows-1250", "windows-1251",
		"windows-1252", "windows-1253", "windows-1254", "windows-1255", "windows-1256", "windows-1257",
		"windows-1258", "x-mac-cyrillic":
		return true
	}
	return false
}
