package markdown

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// atomic appends the parts of a code block, table or display math block
// src[b.Start:end] longer than max_char, by the rules of the package
// documentation: body lines packed whole, greedily, to the full budget; a
// line too long for a part cut into pieces that each take a part's whole
// budget (cutPrefix), a table row only when it alone exceeds max_char
// (cutRow).
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
	if b.Kind != mdblocks.Table && wrap >= sp.max || bodyStart >= bodyEnd {
		// No part could fit: the block is emitted whole. (A table's
		// header that does not fit is a part of its own instead, and its
		// rows go in parts without it.)
		n := sp.m.Len(src[b.Start:end])
		sp.emit(piece{start: b.Start, end: end, chars: n, kind: pieceAtomic, oversize: n > sp.max})
		sp.warnOversize(b, n)
		return
	}
	// The budget for body lines, line breaks included: a part's last line
	// break is dropped when the part ends a chunk (and a part that fits
	// only so is never packed with another piece), so the body may take
	// max_char - wrap + 1 characters, or in tokens max_char - wrap plus
	// what that break saves (breakSaved, rowEndsPart). For code and math
	// a floor of a quarter of max_char keeps the output linear in the
	// input when the wrapper is nearly max_char long (parts then exceed
	// max_char and are marked oversize). Tables have no floor: their
	// header is repeated only where it leaves a quarter of max_char
	// (repeat) and fits with the part's first row; other parts after the
	// first are bare rows with the whole budget.
	saved := sp.breakSaved(b.Kind, close, lastClose)
	fit := sp.max - wrap + saved
	budget := max(fit, sp.max/4, 1)
	table := b.Kind == mdblocks.Table
	repeat := true
	if table {
		budget = fit
		repeat = fit >= max(sp.max/4, 1)
	}
	partBudget := func(hdr bool) int {
		if hdr {
			return budget
		}
		return sp.max + saved
	}
	// partLimit is what a part leaves for rows when its last line break
	// is dropped (rowEndsPart).
	partLimit := func(hdr bool) int {
		if hdr {
			return sp.max - wrap
		}
		return sp.max
	}
	var part strings.Builder
	partChars := 0
	// The part being built: inPart says one is started, hdr that it has
	// the wrapper, partStart and partEnd bound the source of its lines. A
	// table's first part starts with its header, which is a part of its
	// own (spanning itself) when no row fits with it.
	inPart, hdr := table, true
	partStart, partEnd := b.Start, bodyStart
	warned, parts := false, 0
	flush := func(last bool) {
		if !inPart {
			return
		}
		parts++
		body := part.String()
		if partChars > 0 {
			// A part never ends with blank lines either.
			body = strings.TrimRight(body, " \t\r\n") + "\n"
		}
		prefix, cl := open, close
		if last {
			cl = lastClose
		}
		if !hdr {
			prefix, cl = "", ""
		}
		text := prefix + body + cl
		n := sp.m.LenString(text)
		// Alone in a chunk, the part loses its last line break.
		alone := n - 1
		if !sp.m.Exact() {
			alone = sp.m.LenString(text[:len(text)-1])
		}
		over := alone > sp.max
		if parts > 1 {
			sp.cut = cutLine // between the lines of one block
		}
		sp.emit(piece{start: partStart, end: partEnd, text: text, chars: n, kind: pieceSynth, oversize: over})
		if over && !warned {
			sp.warnOversize(b, alone)
			warned = true
		}
		part.Reset()
		partChars = 0
		inPart = false
	}
	add := func(from, to, n int) {
		line := src[from:to]
		full := inPart && partChars+n > partBudget(hdr) && !sp.rowEndsPart(b.Kind, line, partChars, partLimit(hdr))
		if skipSpace(line, 0) == len(line) && (partChars == 0 || full) {
			return // a part never starts with a blank line, nor ends for one
		}
		if full {
			flush(false)
		}
		if !inPart {
			inPart = true
			hdr = !table || repeat && (n <= budget || sp.rowEndsPart(b.Kind, line, 0, partLimit(true)))
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
		if table && !sp.cutRow(line) || !table && n <= budget {
			add(p, q, n)
		} else {
			// Cut the line into pieces that each take a whole part's
			// budget, line break included: at word ends (the whitespace
			// at a cut is dropped, so it takes no room), else between
			// characters. (A table row's piece may take the whole budget
			// in tokens: the budget counts a token for its line break,
			// which it loses as a part's last line; see rowEndsPart.)
			limit := budget - 1
			if table {
				limit = partBudget(repeat)
				if sp.m.Exact() {
					limit--
				}
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
	if parts == 0 {
		// Every body line is blank, and parts never start with one: the
		// wrapper alone is the block's part.
		inPart, partStart, partEnd = true, b.Start, end
		flush(true)
	}
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

// cutRow reports whether a table row is cut into pieces: only when it
// alone is longer than max_char (in the chunker's unit). A row that fits
// alone but not with the header goes whole into a part without it.
func (sp *splitter) cutRow(line []byte) bool {
	return sp.m.LenLimit(bytes.TrimRight(line, " \t\r\n"), sp.max) > sp.max
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
// cut is searched by exact counts of prefixes: among the word ends before
// a prefix known to be over the limit, from the one just before the
// counter's estimate (Cut), galloping then bisecting to the last that
// fits; without one, among the character offsets the same way.
func (sp *splitter) cutPrefixTokens(text []byte, limit int) (end, next, n int) {
	c := sp.m.Counter()
	if n := sp.m.LenLimit(text, limit); n <= limit {
		return len(text), len(text), n
	}
	count := func(p int) int { return sp.m.LenLimit(text[:p], limit) }
	guess := c.Cut(text, limit)
	// over: a prefix with more than limit tokens (about twice the guess
	// is), which bounds the search.
	over := runeStartBefore(text, min(len(text), 2*guess+16))
	for over < len(text) && count(over) <= limit {
		over = runeStartBefore(text, min(len(text), 2*over+16))
	}
	ends := sp.starts[:0]
	inWord := false
	for p := 0; p <= over && p < len(text); {
		r, size := utf8.DecodeRune(text[p:])
		if isSpace(r) && inWord {
			ends = append(ends, p)
		}
		inWord = !isSpace(r)
		p += size
	}
	sp.starts = ends
	if i, n := search(len(ends), sort.SearchInts(ends, guess+1)-1, func(i int) int { return count(ends[i]) }, limit); i >= 0 {
		return ends[i], skipSpace(text, ends[i]), n
	}
	// No word end fits: whole characters, from one (always taken) to over.
	offs := ends[:0]
	for p := 0; p < over; {
		_, size := utf8.DecodeRune(text[p:])
		p += size
		offs = append(offs, p)
	}
	sp.starts = offs
	i, n := search(len(offs), sort.SearchInts(offs, guess+1)-1, func(i int) int { return count(offs[i]) }, limit)
	if i < 0 {
		return offs[0], offs[0], count(offs[0])
	}
	return offs[i], offs[i], n
}

// search returns the last index i < n with size(i) ≤ limit, assuming
// sizes grow with i, and its size (-1, 0 when there is none): it gallops
// from guess, forward when guess fits and backward when not, then
// bisects, asking for each size at most once.
func search(n, guess int, size func(int) int, limit int) (int, int) {
	lo, hi, loN := -1, n, 0 // lo fits (or -1), hi does not (or n)
	probe := func(i int) bool {
		if k := size(i); k <= limit {
			lo, loN = i, k
			return true
		}
		hi = i
		return false
	}
	if guess = min(guess, n-1); guess < 0 || probe(guess) {
		for step := 1; lo+step < hi && probe(lo+step); step *= 2 {
		}
	} else {
		for step := 1; hi-step > lo && !probe(hi-step); step *= 2 {
		}
	}
	for hi-lo > 1 {
		probe(int(uint(lo+hi) >> 1))
	}
	return lo, loN
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
	*sp.warns = append(*sp.warns, chunking.Warning{Kind: chunking.WarnOversize, Line: sp.lines.At(b.Start),
		Text: "a " + b.Kind.String() + " part of " + strconv.Itoa(n) + " " + sp.m.Unit().String() + " exceeds max_char " + strconv.Itoa(sp.max) + ": emitted with oversize: true"})
}
