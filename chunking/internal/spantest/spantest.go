// Package spantest holds the span property the chunkers' golden, corpus
// and fuzz tests share: a chunk's span says where its content came from in
// the document.
package spantest

import (
	"bytes"
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
)

// Source is the document the chunks were cut from.
type Source struct {
	// Orig is the document as given: spans are offsets and lines of it.
	Orig []byte
	// Text is the text the chunker cut, when it is not Orig (MDX after
	// cleaning); nil means Orig.
	Text []byte
	// ToText maps a span [start, end) of Orig to the range of Text it
	// came from, reporting false when no range of Text maps to it; nil
	// when Text is nil.
	ToText func(start, end int) (int, int, bool)
}

// Synthetic reports whether line, a line of chunk i's content, may have
// been added by the chunker rather than taken from the source (an
// inserted code fence, a repeated table header, a header line).
type Synthetic func(i int, line string) bool

// Check checks the spans of chunks, cut from src, and returns the first
// violation or nil:
//   - every chunk has a byte range (HasRange), 0 ≤ start < end ≤ len(Orig),
//     and no message ids;
//   - FirstLine and LastLine are the 1-based lines of Orig[start] and
//     Orig[end-1];
//   - starts never decrease from one chunk to the next;
//   - Verbatim is true exactly when the content is Orig[start:end];
//   - otherwise the span covers the source the content came from, and
//     nothing more: line by line, the content's non-space characters are
//     the non-space characters of the source range (of Text, mapped by
//     ToText), in order and all of them, except for lines that synthetic
//     accepts, which are skipped when they do not continue the source.
func Check(src Source, chunks []chunking.Chunk, synthetic Synthetic) error {
	orig := src.Orig
	var breaks []int // offsets of the line breaks
	for i, c := range orig {
		if c == '\n' {
			breaks = append(breaks, i)
		}
	}
	lineOf := func(off int) int { return 1 + sort.SearchInts(breaks, off) }
	prevStart := 0
	for i, c := range chunks {
		sp := c.Span()
		if !sp.HasRange() {
			return fmt.Errorf("chunk %d: no span range (%+v)", i, sp)
		}
		if sp.Start < 0 || sp.Start >= sp.End || sp.End > len(orig) || len(sp.MessageIDs) > 0 {
			return fmt.Errorf("chunk %d: span %+v out of the document's %d bytes", i, sp, len(orig))
		}
		if sp.Start < prevStart {
			return fmt.Errorf("chunk %d: span starts at %d, before chunk %d's start %d", i, sp.Start, i-1, prevStart)
		}
		prevStart = sp.Start
		if want := lineOf(sp.Start); sp.FirstLine != want {
			return fmt.Errorf("chunk %d: first_line %d, byte %d is on line %d", i, sp.FirstLine, sp.Start, want)
		}
		if want := lineOf(sp.End - 1); sp.LastLine != want {
			return fmt.Errorf("chunk %d: last_line %d, byte %d is on line %d", i, sp.LastLine, sp.End-1, want)
		}
		verbatim := c.Content() == string(orig[sp.Start:sp.End])
		if sp.Verbatim != verbatim {
			return fmt.Errorf("chunk %d: verbatim = %v, but the content is %sthe source bytes %d to %d", i, sp.Verbatim, map[bool]string{false: "not ", true: ""}[verbatim], sp.Start, sp.End)
		}
		if verbatim {
			continue
		}
		text, s, e := orig, sp.Start, sp.End
		if src.Text != nil {
			var ok bool
			if s, e, ok = src.ToText(sp.Start, sp.End); !ok {
				return fmt.Errorf("chunk %d: span %d to %d maps to no range of the cleaned text", i, sp.Start, sp.End)
			}
			text = src.Text
		}
		if err := covers(text[s:e], c.Content(), func(line string) bool { return synthetic != nil && synthetic(i, line) }); err != nil {
			return fmt.Errorf("chunk %d (span %d to %d, lines %d-%d): %w", i, sp.Start, sp.End, sp.FirstLine, sp.LastLine, err)
		}
	}
	return nil
}

// IsSpace reports whether r separates words as the chunkers count them:
// Unicode White_Space plus U+001C–U+001F.
func IsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// nonSpace returns the bytes of s's non-space characters.
func nonSpace(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if !IsSpace(r) {
			out = append(out, s[i:i+n]...)
		}
		i += n
	}
	return out
}

// covers reports how content fails to be made of the source text src
// line by line (see Check), or nil.
func covers(src []byte, content string, synthetic func(string) bool) error {
	ns := nonSpace(src)
	type line struct {
		text string
		ns   []byte
	}
	var lines []line
	for _, l := range bytes.Split([]byte(content), []byte{'\n'}) {
		if n := nonSpace(l); len(n) > 0 {
			lines = append(lines, line{string(l), n})
		}
	}
	// Depth-first over the choice "take a synthetic line that continues
	// the source, or skip it"; each choice point is tried once.
	type state struct{ i, cur int }
	var alts []state
	tried := map[state]bool{}
	i, cur := 0, 0
	furthest, at := 0, 0
	for {
		if i > furthest || i == furthest && cur > at {
			furthest, at = i, cur
		}
		if i == len(lines) {
			if cur == len(ns) {
				return nil
			}
		} else {
			l := lines[i]
			if bytes.HasPrefix(ns[cur:], l.ns) {
				if synthetic(l.text) {
					alts = append(alts, state{i, cur})
				}
				i, cur = i+1, cur+len(l.ns)
				continue
			}
			if synthetic(l.text) {
				i++
				continue
			}
		}
		// Back to the last untried choice: skip that synthetic line.
		for {
			if len(alts) == 0 {
				if furthest == len(lines) {
					return fmt.Errorf("the content ends, but the span goes on: %q", clip(ns[at:]))
				}
				return fmt.Errorf("content line %q is not the source that follows (%q)", lines[furthest].text, clip(ns[at:]))
			}
			s := alts[len(alts)-1]
			alts = alts[:len(alts)-1]
			if !tried[s] {
				tried[s] = true
				i, cur = s.i+1, s.cur
				break
			}
		}
	}
}

func clip(b []byte) string {
	if len(b) > 60 {
		b = b[:60]
	}
	return string(b)
}
