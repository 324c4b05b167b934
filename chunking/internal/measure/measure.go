// Package measure sizes text in the unit a chunker counts its budgets in:
// characters (code points), words, or tokens of an encoding.
//
// The packers ask a Measure for the size of a span instead of counting
// code points or words themselves, so one packing loop serves every unit.
// The unit is a field tested once per span, never per character: the
// character and word paths keep their speed. Characters and words are
// additive (the size of a concatenation is the sum of its parts, less
// what trimming removes); tokens are not, so a packer that sums the
// tokens of its parts to decide where to cut (a search) must check the
// text it emits with an exact count (Exact reports which case holds).
package measure

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// Unit is what a Measure counts.
type Unit uint8

// Units.
const (
	Chars Unit = iota
	Words
	Tokens
)

// String returns the unit as messages name it: "characters", "words" or
// "tokens".
func (u Unit) String() string {
	switch u {
	case Words:
		return "words"
	case Tokens:
		return "tokens"
	}
	return "characters"
}

// Measure sizes text in one unit. Its zero value counts characters. A
// Measure of tokens holds a tokens.Counter and, like it, is not safe for
// concurrent use: make one per call.
type Measure struct {
	unit Unit
	tok  *tokens.Counter
}

// OfChars returns the Measure of characters (code points).
func OfChars() Measure { return Measure{unit: Chars} }

// OfWords returns the Measure of words (maximal runs of non-whitespace,
// as package sentences reads them).
func OfWords() Measure { return Measure{unit: Words} }

// OfTokens returns the Measure of tokens of c's encoding.
func OfTokens(c *tokens.Counter) Measure { return Measure{unit: Tokens, tok: c} }

// Unit returns what m counts.
func (m Measure) Unit() Unit { return m.unit }

// Exact reports whether sizes add up: the size of a concatenation is the
// sum of its parts' sizes (characters; words, when parts meet at
// whitespace). It is false for tokens.
func (m Measure) Exact() bool { return m.unit != Tokens }

// Counter returns the token counter of a Measure of tokens, else nil.
func (m Measure) Counter() *tokens.Counter { return m.tok }

// Len returns the size of b (UTF-8).
func (m Measure) Len(b []byte) int {
	switch m.unit {
	case Chars:
		return RuneCount(b)
	case Words:
		return sentences.CountWords(unsafe.String(unsafe.SliceData(b), len(b)))
	}
	return m.tok.Count(b)
}

// LenString returns the size of s.
func (m Measure) LenString(s string) int {
	switch m.unit {
	case Chars:
		return utf8.RuneCountInString(s)
	case Words:
		return sentences.CountWords(s)
	}
	return m.tok.CountString(s)
}

// LenLimit returns the size of b when it is at most limit, else some
// number above limit (tokens stop being counted past limit; characters
// and words are counted whole, which is cheap).
func (m Measure) LenLimit(b []byte, limit int) int {
	if m.unit == Tokens {
		return m.tok.CountLimit(b, limit)
	}
	return m.Len(b)
}

// LenStringLimit is LenLimit for a string.
func (m Measure) LenStringLimit(s string, limit int) int {
	if m.unit == Tokens {
		return m.tok.CountStringLimit(s, limit)
	}
	return m.LenString(s)
}

// LongestSuffix returns the first of starts (ascending byte offsets into
// s) from which the rest of s measures at most limit, with that size, or
// -1, 0 when none does. Sizes shrink as the start moves right for
// characters and words; for tokens they nearly always do, and the search
// bisects on that, then checks its answer and moves right until the size
// is within limit: the result always fits, though a longer suffix that
// also fits may be missed where the count is not monotonic.
func LongestSuffix[T string | []byte](m Measure, s T, starts []int, limit int) (int, int) {
	size := func(start int) int {
		if b, ok := any(s).([]byte); ok {
			return m.LenLimit(b[start:], limit)
		}
		return m.LenStringLimit(string(s[start:]), limit)
	}
	lo, hi := 0, len(starts) // the answer is in [lo, hi); hi means none
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if size(starts[mid]) <= limit {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for ; lo < len(starts); lo++ {
		if n := size(starts[lo]); n <= limit {
			return starts[lo], n
		}
	}
	return -1, 0
}

// RuneCount returns the number of characters (code points) in b, which
// must be valid UTF-8: its length less its continuation bytes
// (0b10xxxxxx), counted eight bytes at a time.
func RuneCount(b []byte) int {
	n := len(b)
	cont := 0
	i := 0
	for ; i+8 <= n; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&0x8080808080808080 == 0 {
			continue
		}
		cont += bits.OnesCount64(w &^ (w << 1) & 0x8080808080808080)
	}
	for ; i < n; i++ {
		if b[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return n - cont
}
