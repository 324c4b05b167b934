package markdown

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// atomic appends the parts of a code block, table or display math block
// src[b.Start:end] longer than max_char, each valid Markdown on its own:
// code parts start with the opening fence line and end with a bare
// closing fence of the same character and length; table parts repeat the
// header and delimiter rows; math parts are wrapped in "$$" lines. Body
// lines are packed whole, greedily, to the full budget (so the parts are
// as few as it allows); a code or math line too long for a part is cut
// into pieces that each take a part's whole budget (cutPrefix). A table row is cut only when it alone
// exceeds max_char and its pieces fit with the header (cutRow); any other
// row too long for a part is a part of its own, with the header.
func (sp *splitter) atomic(b mdblocks.Block, end int) {
	src := sp.src
	var open, close string
	bodyStart, bodyEnd := b.BodyStart, min(b.BodyEnd, end)
	switch b.Kind {
	case mdblocks.FencedCode:
		open = string(src[b.Start:b.BodyStart])
		close = strings.Repeat(string(b.FenceChar), b.FenceLen) + "\n"
	case mdblocks.Table:
		open = string(src[b.Start:b.BodyStart])
		bodyEnd = end
	case mdblocks.Math:
		open, close = "$$\n", "$$\n"
		if b.BodyStart == b.Start || b.BodyEnd == b.End ||
			string(bytes.TrimSpace(src[b.Start:b.BodyStart])) != "$$" ||
			string(bytes.TrimSpace(src[b.BodyEnd:b.End])) != "$$" {
			bodyStart, bodyEnd = b.Start, end // wrap the whole block
		}
	}
	if open != "" && !strings.HasSuffix(open, "\n") {
		open += "\n"
	}
	wrap := sp.m.LenString(open) + sp.m.LenString(close)
	// The last part of a closed code block keeps the original closing
	// line, which may be longer than the opening fence.
	lastClose := close
	if b.Kind == mdblocks.FencedCode && b.Closed && bodyEnd < end {
		lastClose = string(src[bodyEnd:end])
		if !strings.HasSuffix(lastClose, "\n") {
			lastClose += "\n"
		}
		wrap = max(wrap, sp.m.LenString(open)+sp.m.LenString(lastClose))
	}
	if wrap >= sp.max || bodyStart >= bodyEnd {
		// No part could fit: the block is emitted whole.
		n := sp.m.Len(src[b.Start:end])
		sp.emit(piece{start: b.Start, end: end, chars: n, kind: pieceAtomic, oversize: n > sp.max})
		sp.warnOversize(b, n)
		return
	}
	// The budget for body lines, line breaks included: a part's last line
	// break is dropped when the part ends a chunk (and a part that fits
	// only so is never packed with another piece), so the body may take
	// max_char - wrap + 1 characters, or in tokens max_char - wrap plus
	// what that break saves (breakSaved, rowEndsPart). A floor of a
	// quarter of max_char keeps the output linear in the input when the
	// wrapper is nearly max_char long (parts then exceed max_char and are
	// marked oversize).
	fit := sp.max - wrap + sp.breakSaved(b.Kind, close, lastClose)
	budget := max(fit, sp.max/4, 1)
	var part strings.Builder
	partChars := 0
	partStart, partEnd := 0, 0 // the source of the part's body
	warned := false
	flush := func(last bool) {
		if partChars == 0 {
			return
		}
		body := part.String()
		// A part never ends with blank lines either.
		body = strings.TrimRight(body, " \t\r\n") + "\n"
		cl := close
		if last {
			cl = lastClose
		}
		text := open + body + cl
		n := sp.m.LenString(text)
		// Alone in a chunk, the part loses its last line break.
		alone := n - 1
		if !sp.m.Exact() {
			alone = sp.m.LenString(text[:len(text)-1])
		}
		over := alone > sp.max
		sp.emit(piece{start: partStart, end: partEnd, text: text, chars: n, kind: pieceSynth, oversize: over})
		if over && !warned {
			sp.warnOversize(b, alone)
			warned = true
		}
		part.Reset()
		partChars = 0
	}
	add := func(from, to, n int) {
		line := src[from:to]
		if partChars > 0 && partChars+n > budget && !sp.rowEndsPart(b.Kind, line, partChars, sp.max-wrap) {
			flush(false)
		}
		if partChars == 0 && len(bytes.TrimSpace(line)) == 0 {
			return // a part never starts with a blank line
		}
		if partChars == 0 {
			partStart = from
		}
		partEnd = to
		part.Write(line)
		if len(line) == 0 || line[len(line)-1] != '\n' {
			part.WriteByte('\n')
		}
		partChars += n
	}
	for p := bodyStart; p < bodyEnd; {
		q := lineEndOf(src[:bodyEnd], p)
		if sp.pl.Add(q - p) {
			return
		}
		line := src[p:q]
		n := sp.m.Len(line)
		if line[len(line)-1] != '\n' {
			n++ // the line break added before the closing line
		}
		if n <= budget || b.Kind == mdblocks.Table && !sp.cutRow(line, fit) {
			// A table row that is not cut is a part of its own, with the
			// header, oversize when they do not fit together.
			add(p, q, n)
		} else {
			// Cut the line into pieces that each take a whole part's
			// budget, line break included: at word ends (the whitespace
			// at a cut is dropped, so it takes no room), else between
			// characters. (A table row's piece may take budget tokens:
			// the budget counts a token for its line break, which it
			// loses as a part's last line; see rowEndsPart.)
			limit := budget - 1
			if b.Kind == mdblocks.Table && !sp.m.Exact() {
				limit = budget
			}
			for t, e := p, p+len(bytes.TrimRight(line, "\r\n")); t < e; {
				end, next, m := sp.cutPrefix(src[t:e], limit)
				add(t, t+end, m+1)
				t += next
			}
		}
		p = q
	}
	flush(true)
}

// breakSaved returns what a part loses with its last line break, dropped
// when the part ends a chunk: one character; in tokens, what the closing
// line of a code or math part loses without its line break (the least of
// close's and lastClose's: a token for "```", none for "~~~", in
// cl100k_base), and nothing for a table, whose rows are looked at one by
// one (rowEndsPart).
func (sp *splitter) breakSaved(kind mdblocks.Kind, close, lastClose string) int {
	if sp.m.Exact() {
		return 1
	}
	if kind == mdblocks.Table {
		return 0
	}
	saved := func(s string) int { return sp.m.LenString(s) - sp.m.LenString(strings.TrimSuffix(s, "\n")) }
	return min(saved(close), saved(lastClose))
}

// rowEndsPart reports, in token mode, whether a table row (or a piece of
// one) that does not fit in the budget after used tokens of rows still
// fits as the part's last row, which loses its line break (limit is
// max_char less the header): the budget assumes that break saves nothing,
// as for a row ending in "|", but after other text it often saves a token.
// In characters the budget is exact already.
func (sp *splitter) rowEndsPart(kind mdblocks.Kind, row []byte, used, limit int) bool {
	if sp.m.Exact() || kind != mdblocks.Table || used >= limit {
		return false
	}
	return sp.m.LenLimit(bytes.TrimSuffix(row, []byte("\n")), limit-used) <= limit-used
}

// cutRow reports whether a table row too long for a part is cut into
// pieces: only when the row alone is longer than max_char (in the
// chunker's unit) and each piece can fit with the header (fit, the body
// budget, is at least a quarter of max_char). Otherwise cutting would
// only make oversize parts, each repeating the header.
func (sp *splitter) cutRow(line []byte, fit int) bool {
	return fit >= sp.max/4 && sp.m.LenLimit(bytes.TrimRight(line, " \t\r\n"), sp.max) > sp.max
}

// cutPrefix cuts the first piece of at most limit (≥ 1) characters
// (tokens) off text, a line without its line break: the longest prefix
// that ends at a word end (before whitespace), or, when the first word
// alone is longer, the longest prefix of whole characters. It returns the
// piece's end, where the next piece starts (after the whitespace at a
// word end, which belongs to neither piece and so takes no room), and the
// piece's size. When all of text fits, the piece is text.
func (sp *splitter) cutPrefix(text []byte, limit int) (end, next, n int) {
	limit = max(limit, 1)
	if !sp.m.Exact() {
		return sp.cutPrefixTokens(text, limit)
	}
	p := 0
	wordEnd, wordN, inWord := 0, 0, false
	for p < len(text) {
		space := isSpaceAt(text, p)
		if space && inWord {
			wordEnd, wordN = p, n
		}
		inWord = !space
		if n == limit {
			break
		}
		_, size := utf8.DecodeRune(text[p:])
		p += size
		n++
	}
	if p == len(text) || wordEnd == 0 {
		return p, p, n
	}
	return wordEnd, skipSpace(text, wordEnd), wordN
}

// cutPrefixTokens is cutPrefix in tokens. Counts do not add up, so the
// cut is searched: the word ends up to a prefix known to be over the
// limit are bisected by the exact count of the prefix before each, and
// without one that fits, the character offsets are.
func (sp *splitter) cutPrefixTokens(text []byte, limit int) (end, next, n int) {
	c := sp.m.Counter()
	if n := c.CountLimit(text, limit); n <= limit {
		return len(text), len(text), n
	}
	fits := func(p int) bool { return c.CountLimit(text[:p], limit) <= limit }
	// over: a prefix with more than limit tokens, about twice the piece at
	// most, which bounds the search.
	over := c.Cut(text, limit)
	for over < len(text) && fits(over) {
		over = runeStartBefore(text, min(len(text), 2*over+16))
	}
	ends := sp.starts[:0]
	inWord := false
	for p := 0; p < over; {
		r, size := utf8.DecodeRune(text[p:])
		if isSpace(r) && inWord {
			ends = append(ends, p)
		}
		inWord = !isSpace(r)
		p += size
	}
	if over < len(text) && inWord && isSpaceAt(text, over) {
		ends = append(ends, over)
	}
	sp.starts = ends
	lo, hi := -1, len(ends) // ends[lo] fits, ends[hi] does not
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if fits(ends[mid]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo >= 0 {
		end = ends[lo]
		return end, skipSpace(text, end), c.Count(text[:end])
	}
	// No word end fits: whole characters, bisected between one character
	// (always taken) and over.
	first := 0
	if len(text) > 0 {
		_, first = utf8.DecodeRune(text)
	}
	lo, hi = first, over
	for {
		mid := runeStartBefore(text, int(uint(lo+hi)>>1))
		if mid <= lo {
			_, size := utf8.DecodeRune(text[lo:])
			mid = lo + size
		}
		if mid >= hi {
			break
		}
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, lo, c.Count(text[:lo])
}

// skipSpace returns the end of the whitespace run of text starting at p.
func skipSpace(text []byte, p int) int {
	for p < len(text) && isSpaceAt(text, p) {
		_, size := utf8.DecodeRune(text[p:])
		p += size
	}
	return p
}

// runeStartBefore returns p moved back to the start of a character.
func runeStartBefore(text []byte, p int) int {
	for p > 0 && p < len(text) && !utf8.RuneStart(text[p]) {
		p--
	}
	return p
}

func (sp *splitter) warnOversize(b mdblocks.Block, n int) {
	*sp.warns = append(*sp.warns, chunking.Warning{Line: sp.lines.at(b.Start),
		Text: "a " + b.Kind.String() + " part of " + itoa(n) + " " + sp.m.Unit().String() + " exceeds max_char " + itoa(sp.max) + ": emitted with oversize: true"})
}
