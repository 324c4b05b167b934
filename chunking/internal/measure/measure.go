// Package measure sizes text in the unit a chunker counts its budgets in:
// characters (code points), words, or tokens of an encoding, so one
// packing loop serves every unit. The unit is tested once per span, never
// per character. Characters and words are additive (a concatenation's
// size is the sum of its parts'); tokens are not, so a packer that sums
// parts' tokens to decide where to cut must check the text it emits with
// an exact count (Exact). target.go holds what the target mode of the
// Markdown and two-step chunkers shares: the ceiling, the near-equal share
// and the costs of where a chunk ends (Cut, SizeCost).
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

// String returns "characters", "words" or "tokens".
func (u Unit) String() string {
	switch u {
	case Words:
		return "words"
	case Tokens:
		return "tokens"
	}
	return "characters"
}

// Measure sizes text in one unit; the zero value counts characters. A
// Measure of tokens, like its tokens.Counter, is not safe for concurrent
// use.
type Measure struct {
	unit Unit
	tok  *tokens.Counter
	ix   *tokens.Index // spans of its text are counted through it
}

// OfChars returns the Measure of characters (code points).
func OfChars() Measure { return Measure{unit: Chars} }

// OfWords returns the Measure of words (sentences.CountWords).
func OfWords() Measure { return Measure{unit: Words} }

// OfTokens returns the Measure of tokens of c's encoding.
func OfTokens(c *tokens.Counter) Measure { return Measure{unit: Tokens, tok: c} }

// ForEncoding returns the Measure of tokens of enc, or other when enc is
// nil, and a function that releases it.
func ForEncoding(enc *tokens.Encoding, other Measure) (Measure, func()) {
	if enc == nil {
		return other, func() {}
	}
	ctr := enc.Counter()
	return OfTokens(ctr), ctr.Release
}

// WithIndex returns m counting the spans of ix's text through ix (a
// Measure of tokens, with ix built with its counter): each span is then
// counted by scanning only its ends. Other text is counted as by m.
func (m Measure) WithIndex(ix *tokens.Index) Measure {
	m.ix = ix
	return m
}

// indexed counts b through the index when b lies in its text and the
// index counts exactly up to limit.
func (m Measure) indexed(b []byte, limit int) (int, bool) {
	if m.ix == nil || !m.ix.Exact(limit) {
		return 0, false
	}
	off, ok := m.ix.Span(b)
	if !ok {
		return 0, false
	}
	return m.ix.CountLimit(off, off+len(b), limit), true
}

// Unit returns what m counts.
func (m Measure) Unit() Unit { return m.unit }

// Exact reports whether sizes add up (characters; words, when parts meet
// at whitespace); false for tokens.
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
	if n, ok := m.indexed(b, len(b)); ok {
		return n
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
// number above limit (tokens stop being counted past limit).
func (m Measure) LenLimit(b []byte, limit int) int {
	if m.unit == Tokens {
		if n, ok := m.indexed(b, limit); ok {
			return n
		}
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

// LongestSuffix returns the first of starts (ascending offsets into s)
// from which the rest of s measures at most limit, with that size, or -1,
// 0. It bisects, sizes shrinking as the start moves right (for tokens
// nearly always), then moves right until the size fits: the result
// always fits, though where token counts are not monotonic a longer
// suffix that fits may be missed.
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

// RuneCount returns the number of code points in b, which must be valid
// UTF-8: its length less its continuation bytes, counted eight bytes at a
// time (BenchmarkRuneCount: utf8.RuneCount takes about 5×).
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
