package tokens

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers cut text into the pieces that byte-pair encoding
// then works on, exactly as the encodings' patterns do:
//
//	cl100k_base: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	o200k_base:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	             [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	             \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// with leftmost-first alternation and backtracking, as the reference's
// regular expression engine runs them; the tests hold the scanners to the
// reference tokenizer. A scanner records whether it looked at the end of
// the text: a piece whose match did not is final, whatever text is
// appended (Appender relies on it).

// class bits of a code point.
const (
	cLetter  uint8 = 1 << iota // \p{L}
	cNumber                    // \p{N}
	cSpace                     // \s: Unicode White_Space
	cUpper                     // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                     // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cNewline                   // \r or \n
)

// asciiClass holds the classes of the ASCII code points.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOfSlow(r)
	}
	return t
}()

// bmpClasses returns the classes of the code points of the Basic
// Multilingual Plane, built on first use (64 KiB): the scanners read a
// non-ASCII character's class from it rather than from Go's Unicode
// range tables, a binary search each.
var bmpClasses = sync.OnceValue(func() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	for r := range rune(1 << 16) {
		t[r] = classOfSlow(r)
	}
	return t
})

// classOf returns the classes of code point r.
func classOf(r rune) uint8 {
	if r < 1<<16 {
		return bmpClasses()[r]
	}
	return classOfSlow(r)
}

func classOfSlow(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= cLetter
	}
	if unicode.IsNumber(r) {
		c |= cNumber
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	mark := unicode.IsMark(r)
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) || mark {
		c |= cUpper
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) || mark {
		c |= cLower
	}
	if r == '\r' || r == '\n' {
		c |= cNewline
	}
	return c
}

// scanner reads code points of one text and remembers whether a matcher
// looked past its end, and how far it read.
type scanner struct {
	s   []byte
	eof bool // a read reached the end of s
	// reach is one past the highest offset read so far (len(s)+1 once a
	// read looked at the end): a piece whose match read below offset e is
	// the same piece in s[:e] (Index relies on it).
	reach int
}

// read records a read of s[i:j].
func (sc *scanner) read(j int) {
	if j > sc.reach {
		sc.reach = j
	}
}

// at returns the class and size of the code point at i; at the end of
// the text it returns size 0 and records the look. Invalid UTF-8 bytes
// are read one at a time as code points of no class (punctuation).
func (sc *scanner) at(i int) (uint8, int) {
	if i >= len(sc.s) {
		sc.eof, sc.reach = true, len(sc.s)+1
		return 0, 0
	}
	if b := sc.s[i]; b < utf8.RuneSelf {
		sc.read(i + 1)
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRune(sc.s[i:])
	if r == utf8.RuneError && n == 1 {
		if !utf8.FullRune(sc.s[i:]) {
			sc.eof, sc.reach = true, len(sc.s)+1 // the end of the text may complete the character
			return 0, 1
		}
		sc.read(min(i+utf8.UTFMax, len(sc.s))) // the decoder may have looked that far
		return 0, 1
	}
	sc.read(i + n)
	return classOf(r), n
}

// isPrefix reports whether class c is [^\r\n\p{L}\p{N}] (n > 0: a code
// point is there).
func isPrefix(c uint8, n int) bool {
	return n > 0 && c&(cLetter|cNumber|cNewline) == 0
}

// isOther reports whether class c is [^\s\p{L}\p{N}].
func isOther(c uint8, n int) bool {
	return n > 0 && c&(cLetter|cNumber|cSpace) == 0
}

// run returns the end of the run of code points from i whose class has
// one of the bits of mask, reading ASCII bytes directly
// (BenchmarkFastPaths/run).
func (sc *scanner) run(i int, mask uint8) int {
	s := sc.s
	for i < len(s) && s[i] < utf8.RuneSelf {
		if asciiClass[s[i]]&mask == 0 {
			sc.read(i + 1)
			return i
		}
		i++
	}
	sc.read(i)
	for {
		c, n := sc.at(i)
		if n == 0 || c&mask == 0 {
			return i
		}
		i += n
	}
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i,
// or 0. Case folding is Unicode's simple folding: 's' also matches 'S'
// and 'ſ' (U+017F).
func (sc *scanner) contraction(i int) int {
	s := sc.s
	if i >= len(s) {
		sc.eof, sc.reach = true, len(s)+1
		return 0
	}
	sc.read(i + 1)
	if s[i] != '\'' {
		return 0
	}
	lower := func(j int) (byte, int) {
		if j >= len(s) {
			sc.eof, sc.reach = true, len(s)+1
			return 0, 0
		}
		b := s[j]
		if b == 0xC5 {
			if j+1 >= len(s) {
				sc.reach = len(s) + 1 // looked for a second byte
			} else {
				sc.read(j + 2)
			}
			if j+1 < len(s) && s[j+1] == 0xBF { // ſ
				return 's', 2
			}
		}
		sc.read(j + 1)
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		return b, 1
	}
	b, n := lower(i + 1)
	switch b {
	case 's', 't', 'm', 'd':
		return 1 + n
	case 'r', 'v':
		if e, m := lower(i + 1 + n); e == 'e' {
			return 1 + n + m
		}
	case 'l':
		if l, m := lower(i + 1 + n); l == 'l' {
			return 1 + n + m
		}
	}
	return 0
}

// spaces matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, where a space is.
func (sc *scanner) spaces(i int) int {
	lastNL, lastStart, j := -1, i, i
	for {
		c, n := sc.at(j)
		if n == 0 || c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNL = j
		}
		lastStart = j
		j += n
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case j >= len(sc.s): // (?!\S) holds at the end: the whole run
		return j
	case lastStart > i: // leave the last space to the piece after
		return lastStart
	}
	return j
}

// numbers matches \p{N}{1,3} at i, where a number is.
func (sc *scanner) numbers(i int) int {
	for k := 0; k < 3; k++ {
		c, n := sc.at(i)
		if n == 0 || c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// punct matches ' ?[^\s\p{L}\p{N}]+' followed by a run of trail at i, or
// returns i.
func (sc *scanner) punct(i int, trail uint8, slash bool) int {
	j := i
	if sc.s[i] == ' ' {
		j++
	}
	c, n := sc.at(j)
	if !isOther(c, n) {
		return i
	}
	for isOther(c, n) {
		j += n
		c, n = sc.at(j)
	}
	for n > 0 && (c&trail != 0 || slash && sc.s[j] == '/') {
		j += n
		c, n = sc.at(j)
	}
	return j
}

// ascii returns the end of the piece at i when it is ASCII and ends at
// an ASCII byte, as the general scanners would find it, or 0: a word (an
// optional prefix byte, [^\r\n\p{L}\p{N}] but not an apostrophe, which
// may start a contraction, and a run of letters, upper case then lower
// case when o200k), a run of punctuation with an optional leading space
// and trailing line breaks, a run of whitespace, or up to three digits.
// It records the reads the general scanners would (the run and the byte
// that ends it). The general scanners take everything else: an
// apostrophe first, whatever touches a non-ASCII byte or the end of the
// text. It is one function, the word first, since it finds most pieces
// (BenchmarkFastPaths/run).
func (sc *scanner) ascii(i int, o200k bool) int {
	s := sc.s
	b := s[i]
	if b >= utf8.RuneSelf || b == '\'' {
		return 0
	}
	c := asciiClass[b]
	j := i
	if c&cLetter == 0 {
		if i+1 >= len(s) {
			return 0
		}
		nb := s[i+1]
		if nb >= utf8.RuneSelf {
			return 0
		}
		next := asciiClass[nb]
		if next&cLetter == 0 || c&(cNumber|cNewline) != 0 {
			return sc.asciiOther(i, b, c, next, o200k)
		}
		j++ // a prefix, then letters
	}
	if o200k {
		j = asciiRun(s, j, 'A', 'Z', 0)
		j = asciiRun(s, j, 'a', 'z', 0)
	} else {
		j = asciiRun(s, j, 'a', 'z', 0x20)
	}
	if j >= len(s) || s[j] >= utf8.RuneSelf || s[j] == '\'' {
		return 0
	}
	sc.read(j + 1)
	return j
}

// asciiOther is ascii for a piece that is no word: digits, punctuation
// or whitespace at i, whose byte b and the next have classes c and next.
func (sc *scanner) asciiOther(i int, b, c, next uint8, o200k bool) int {
	s := sc.s
	switch {
	case c&cNumber != 0:
		k := i + 1
		for ; k < i+3; k++ {
			if k >= len(s) || s[k] >= utf8.RuneSelf {
				return 0 // the end, or perhaps a number
			}
			if asciiClass[s[k]]&cNumber == 0 {
				sc.read(k + 1)
				return k
			}
		}
		sc.read(k)
		return k
	case c&cSpace == 0 || b == ' ' && next&(cLetter|cNumber|cSpace) == 0:
		// ' ?[^\s\p{L}\p{N}]+' then line breaks (and slashes for o200k).
		k := i
		if b == ' ' {
			k++
		}
		for k < len(s) && s[k] < utf8.RuneSelf && asciiClass[s[k]]&(cLetter|cNumber|cSpace) == 0 {
			k++
		}
		for k < len(s) && (s[k] == '\n' || s[k] == '\r' || o200k && s[k] == '/') {
			k++
		}
		if k >= len(s) || s[k] >= utf8.RuneSelf {
			return 0
		}
		sc.read(k + 1)
		return k
	}
	// Whitespace: \s*[\r\n]+|\s+(?!\S)|\s+.
	lastNL, k := -1, i
	for ; k < len(s) && s[k] < utf8.RuneSelf && asciiClass[s[k]]&cSpace != 0; k++ {
		if s[k] == '\n' || s[k] == '\r' {
			lastNL = k
		}
	}
	if k >= len(s) || s[k] >= utf8.RuneSelf {
		return 0 // the end, or perhaps more whitespace
	}
	sc.read(k + 1)
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case k-1 > i: // leave the last space to the piece after
		return k - 1
	}
	return k
}

// asciiRun returns the end of the run from j of bytes b with lo ≤ b|fold
// ≤ hi (ASCII lo, hi and fold), eight bytes at a time.
func asciiRun(s []byte, j int, lo, hi, fold byte) int {
	const ones = 0x0101010101010101
	for ; j+8 <= len(s); j += 8 {
		w := binary.LittleEndian.Uint64(s[j:])
		x := (w | ones*uint64(fold)) & (ones * 0x7F)
		// A byte's high bit: set in ge when it is ≥ lo, in gt when > hi
		// (no carries: every byte of x is below 0x80), in w when it is
		// not ASCII.
		ge := x + ones*uint64(0x80-lo)
		gt := x + ones*uint64(0x80-hi-1)
		if in := ge &^ gt &^ w & (ones * 0x80); in != ones*0x80 {
			return j + bits.TrailingZeros64(^in&(ones*0x80))/8
		}
	}
	for j < len(s) && s[j]|fold-lo <= hi-lo {
		j++
	}
	return j
}

// nextCL100K returns the end of the cl100k_base piece starting at i <
// len(sc.s), by the general scanners (ascii first is faster).
func (sc *scanner) nextCL100K(i int) int {
	if sc.s[i] == '\'' {
		if n := sc.contraction(i); n > 0 {
			return i + n
		}
	}
	c, n := sc.at(i)
	if c&cLetter != 0 {
		return sc.run(i, cLetter)
	}
	if isPrefix(c, n) {
		if c1, n1 := sc.at(i + n); n1 > 0 && c1&cLetter != 0 {
			return sc.run(i+n, cLetter)
		}
	}
	if c&cNumber != 0 {
		return sc.numbers(i)
	}
	if j := sc.punct(i, cNewline, false); j > i {
		return j
	}
	if c&cSpace != 0 {
		return sc.spaces(i)
	}
	return i + n // not reached: every code point is a letter, number, space or other
}

// nextO200K returns the end of the o200k_base piece starting at i <
// len(sc.s), by the general scanners (ascii first is faster).
func (sc *scanner) nextO200K(i int) int {
	c, n := sc.at(i)
	prefix := isPrefix(c, n)
	// [^\r\n\p{L}\p{N}]?[upper]*[lower]+(?i:contraction)?
	if prefix {
		if j := sc.upperLower(i + n); j > 0 {
			return j
		}
	}
	if j := sc.upperLower(i); j > 0 {
		return j
	}
	// [^\r\n\p{L}\p{N}]?[upper]+[lower]*(?i:contraction)?
	if prefix {
		if c1, n1 := sc.at(i + n); n1 > 0 && c1&cUpper != 0 {
			return sc.upperThenLower(i + n)
		}
	}
	if c&cUpper != 0 {
		return sc.upperThenLower(i)
	}
	if c&cNumber != 0 {
		return sc.numbers(i)
	}
	if j := sc.punct(i, cNewline, true); j > i {
		return j
	}
	if c&cSpace != 0 {
		return sc.spaces(i)
	}
	return i + n
}

// upperLower matches [upper]*[lower]+(?i:contraction)? at i, backtracking
// as the pattern does, and returns its end, or 0 when it does not match.
func (sc *scanner) upperLower(i int) int {
	// The upper run [i, u), remembering its last code point that is also
	// lower (Lm, Lo, M).
	u, lastBoth, lastBothEnd := i, -1, -1
	for {
		c, n := sc.at(u)
		if n == 0 || c&cUpper == 0 {
			break
		}
		if c&cLower != 0 {
			lastBoth, lastBothEnd = u, u+n
		}
		u += n
	}
	var end int
	if c, n := sc.at(u); n > 0 && c&cLower != 0 {
		end = sc.run(u, cLower)
	} else if lastBoth >= 0 {
		// [lower]+ takes the last code point of the run that is lower;
		// what follows it in the run is upper only.
		end = lastBothEnd
	} else {
		return 0
	}
	return end + sc.contraction(end)
}

// upperThenLower matches [upper]+[lower]*(?i:contraction)? at i, where an
// upper code point is.
func (sc *scanner) upperThenLower(i int) int {
	end := sc.run(sc.run(i, cUpper), cLower)
	return end + sc.contraction(end)
}
