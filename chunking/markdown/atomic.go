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
// as few as it allows); a code or math line too long for a part is cut at
// words, else at characters. A table row is cut only when it alone
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
			// Cut the line at words, else characters, into lines of at
			// most budget characters (tokens), line break included. (A
			// table row's piece may take budget tokens: the budget counts
			// a token for its line break, which it loses as a part's last
			// line; see rowEndsPart.)
			limit := budget - 1
			if b.Kind == mdblocks.Table && !sp.m.Exact() {
				limit = budget
			}
			for t, e := p, p+len(bytes.TrimRight(line, "\r\n")); t < e; {
				k, m := sp.cutPrefix(src[t:e], limit)
				add(t, t+k, m+1)
				t += k
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

// cutPrefix returns the byte length and size of the longest prefix of text
// of at most limit (≥ 1) characters that ends after whitespace, or, when
// the first word is longer, of exactly limit characters. In token mode
// the prefix is found by the text's own tokens (the first limit of them,
// then back to a word start) and its size is its exact count, which may
// differ from limit by a token or two: the part's text is counted again.
func (sp *splitter) cutPrefix(text []byte, limit int) (int, int) {
	limit = max(limit, 1)
	if !sp.m.Exact() {
		c := sp.m.Counter()
		q := c.Cut(text, limit)
		for p := q; p > 0 && q < len(text); p-- {
			if !utf8.RuneStart(text[p]) || isSpaceAt(text, p) {
				continue
			}
			if r, _ := utf8.DecodeLastRune(text[:p]); isSpace(r) {
				q = p
				break
			}
		}
		return q, c.Count(text[:q])
	}
	lastCut, lastN := 0, 0
	p, n := 0, 0
	for p < len(text) && n < limit {
		_, size := utf8.DecodeRune(text[p:])
		space := isSpaceAt(text, p)
		p += size
		n++
		if space && (p == len(text) || !isSpaceAt(text, p)) {
			lastCut, lastN = p, n
		}
	}
	if p == len(text) || lastCut == 0 {
		return p, n
	}
	return lastCut, lastN
}

func (sp *splitter) warnOversize(b mdblocks.Block, n int) {
	*sp.warns = append(*sp.warns, chunking.Warning{Line: sp.lines.at(b.Start),
		Text: "a " + b.Kind.String() + " part of " + itoa(n) + " " + sp.m.Unit().String() + " exceeds max_char " + itoa(sp.max) + ": emitted with oversize: true"})
}
