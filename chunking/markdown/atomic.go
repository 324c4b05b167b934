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
	wrap := utf8.RuneCountInString(open) + utf8.RuneCountInString(close)
	// The last part of a closed code block keeps the original closing
	// line, which may be longer than the opening fence.
	lastClose := close
	if b.Kind == mdblocks.FencedCode && b.Closed && bodyEnd < end {
		lastClose = string(src[bodyEnd:end])
		if !strings.HasSuffix(lastClose, "\n") {
			lastClose += "\n"
		}
		wrap = max(wrap, utf8.RuneCountInString(open)+utf8.RuneCountInString(lastClose))
	}
	if wrap >= sp.max || bodyStart >= bodyEnd {
		// No part could fit: the block is emitted whole.
		n := runeCount(src[b.Start:end])
		sp.emit(piece{start: b.Start, end: end, chars: n, kind: pieceAtomic, oversize: n > sp.max})
		sp.warnOversize(b, n)
		return
	}
	// The budget for body lines, line breaks included: a part's last line
	// break is dropped when the part ends a chunk (and a part that fits
	// only so is never packed with another piece), so the body may take
	// max_char - wrap + 1 characters. A floor of a quarter of max_char
	// keeps the output linear in the input when the wrapper is nearly
	// max_char long (parts then exceed max_char and are marked oversize).
	fit := sp.max - wrap + 1
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
		n := utf8.RuneCountInString(text)
		// Alone in a chunk, the part loses its last line break.
		over := n-1 > sp.max
		sp.emit(piece{start: partStart, end: partEnd, text: text, chars: n, kind: pieceSynth, oversize: over})
		if over && !warned {
			sp.warnOversize(b, n-1)
			warned = true
		}
		part.Reset()
		partChars = 0
	}
	add := func(from, to, n int) {
		line := src[from:to]
		if partChars > 0 && partChars+n > budget {
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
		n := runeCount(line)
		if line[len(line)-1] != '\n' {
			n++ // the line break added before the closing line
		}
		if n <= budget || b.Kind == mdblocks.Table && !cutRow(line, sp.max, fit) {
			// A table row that is not cut is a part of its own, with the
			// header, oversize when they do not fit together.
			add(p, q, n)
		} else {
			// Cut the line at words, else characters, into lines of at
			// most budget characters, line break included.
			for t, e := p, p+len(bytes.TrimRight(line, "\r\n")); t < e; {
				k, m := cutPrefix(src[t:e], budget-1)
				add(t, t+k, m+1)
				t += k
			}
		}
		p = q
	}
	flush(true)
}

// cutRow reports whether a table row too long for a part is cut into
// pieces: only when the row alone is longer than max_char and each piece
// can fit with the header (fit, the body budget, is at least a quarter of
// max_char). Otherwise cutting would only make oversize parts, each
// repeating the header.
func cutRow(line []byte, maxChar, fit int) bool {
	return fit >= maxChar/4 && runeCount(bytes.TrimRight(line, " \t\r\n")) > maxChar
}

// cutPrefix returns the byte length and character count of the longest
// prefix of text of at most limit (≥ 1) characters that ends after
// whitespace, or, when the first word is longer, of exactly limit
// characters.
func cutPrefix(text []byte, limit int) (int, int) {
	limit = max(limit, 1)
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
		Text: "a " + b.Kind.String() + " part of " + itoa(n) + " characters exceeds max_char " + itoa(sp.max) + ": emitted with oversize: true"})
}
