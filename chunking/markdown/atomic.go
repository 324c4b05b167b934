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
// lines are packed whole; a line too long for a part is cut at words, else
// at characters.
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
	// The budget for body lines; a floor of a quarter of max_char keeps the
	// output linear in the input when the wrapper is nearly max_char long
	// (parts then exceed max_char and are marked oversize).
	budget := max(sp.max-wrap, sp.max/4, 1)
	var part strings.Builder
	partChars := 0
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
		sp.emit(piece{text: text, chars: n, kind: pieceSynth, oversize: over})
		if over && !warned {
			sp.warnOversize(b, alone)
			warned = true
		}
		part.Reset()
		partChars = 0
	}
	add := func(line []byte, n int) {
		if partChars > 0 && partChars+n > budget {
			flush(false)
		}
		if partChars == 0 && len(bytes.TrimSpace(line)) == 0 {
			return // a part never starts with a blank line
		}
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
		if n <= budget {
			add(line, n)
		} else {
			// Cut the line at words, else characters, into lines of at
			// most budget characters (tokens), line break included.
			text := bytes.TrimRight(line, "\r\n")
			for len(text) > 0 {
				k, m := sp.cutPrefix(text, budget-1)
				add(text[:k], m+1)
				text = text[k:]
			}
		}
		p = q
	}
	flush(true)
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
