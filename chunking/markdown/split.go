package markdown

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
)

// Split levels, coarsest first: the reference's separators.
const (
	levelPara     = iota // blank lines ("\n\n")
	levelLine            // line breaks ("\n")
	levelSentence        // sentence ends, which stay with their sentence
	levelSpace           // whitespace (" ")
	levelChar            // between characters
)

// pieceKind says what a piece is made of.
type pieceKind uint8

const (
	pieceText   pieceKind = iota // source text: overlap may take its words
	pieceAtomic                  // a whole code block, table or math block from the source
	pieceSynth                   // a re-wrapped part of a too-long atomic block
)

// piece is an indivisible unit of a long section. Source pieces are
// contiguous: consecutive ones in the list are adjacent in the source.
type piece struct {
	start, end int    // source span (of a synthetic piece: of its body)
	text       string // content of a synthetic piece
	chars      int    // size in the chunker's unit (tokens of the piece alone in token mode)
	kind       pieceKind
	oversize   bool
	cut        cutKind // target mode: the boundary before the piece
}

// splitter cuts one long section into pieces and packs them, as they
// come, into chunks: only the pieces of the chunk being built and of the
// previous one (for the overlap) are held, so memory stays bounded by
// max_char whatever the section's length.
type splitter struct {
	src          []byte
	max, overlap int
	m            measure.Measure
	lines        *srcspan.Lines
	warns        *[]chunking.Warning
	secStart     int

	yield     func(rawChunk)
	pl        *poll.Poller // counts the work; stops the cutting when its context ends
	hdr       headers
	cur, prev []piece
	curSize   int
	starts    []int // scratch: word starts of a piece
	ovStart   int   // start of the current chunk's overlap, or -1
	ovEnd     int   // end of the overlap (end of the previous chunk)

	// Target mode (target.go): target > 0, and budget is the soft size
	// of each chunk of the section or unit being cut (measure.Balanced);
	// isolated holds the budgets around the units cut into chunks of
	// their own (wholeInTarget), innermost last.
	target, budget int
	isolated       []int
	// run holds the pieces not yet packed, from the start of the next
	// chunk (runSize in all), and cut is the boundary before the next
	// piece emitted (target.go).
	run     []piece
	runSize int
	cut     cutKind
}

// pieceLimit is the size up to which text stays one piece: max_char, or
// in target mode the section's budget, so that the pieces are small
// enough to pack chunks near it.
func (sp *splitter) pieceLimit() int {
	if sp.target > 0 {
		return sp.budget
	}
	return sp.max
}

// section passes on the chunks of a section longer than max_char.
func (sp *splitter) section(s section, hdr headers) {
	sp.hdr = hdr
	sp.cur, sp.prev, sp.curSize = sp.cur[:0], sp.prev[:0], 0
	sp.secStart = s.start
	pos := s.start
	for _, b := range s.atoms {
		if sp.pl.Stopped() {
			return
		}
		if b.Start >= s.end || b.Start < pos {
			continue
		}
		end := min(b.End, s.end)
		if b.Start > pos {
			sp.cut = cutPara
			sp.split(pos, b.Start, levelPara, false)
		}
		sp.cut = cutPara
		if n, ok := sp.fits(sp.src[b.Start:end]); ok {
			sp.emit(piece{start: b.Start, end: end, chars: n, kind: pieceAtomic})
		} else {
			sp.atomic(b, end)
		}
		pos = end
	}
	if pos < s.end {
		// The section is longer than max_char: when no block came
		// before, the span is the whole section and is not measured again.
		sp.cut = cutPara
		sp.split(pos, s.end, levelPara, pos == s.start)
	}
	// A back-off in token mode may carry pieces to a last chunk.
	sp.flushAll()
}

// split appends the pieces of src[s:e] at level or finer; over says
// src[s:e] is known not to fit.
func (sp *splitter) split(s, e, level int, over bool) {
	if sp.pl.Add(e - s) {
		return
	}
	if sp.target > 0 {
		if sp.wholeInTarget(s, e, level, over) {
			return
		}
		if level > levelPara {
			defer sp.endIsolated()
		}
		if level == levelSentence {
			sp.splitSentences(s, e)
			return
		}
	} else if !over {
		if n, ok := sp.fits(sp.src[s:e]); ok {
			sp.emit(piece{start: s, end: e, chars: n})
			return
		}
	}
	if level == levelChar {
		sp.cutChars(s, e)
		return
	}
	q := sp.next(s, e, level)
	if q >= e {
		sp.split(s, e, level+1, false)
		return
	}
	for p := s; p < e && !sp.pl.Stopped(); p = q {
		q = sp.next(p, e, level)
		if p > s && sp.target > 0 {
			sp.cut = sp.cutAt(level, p)
		}
		sp.split(p, q, level+1, false)
	}
}

// fits returns the size of text and whether it fits in max once its
// trailing whitespace is left out, as it is when it ends a chunk. (A
// piece that fits only so is never packed with another: its full size,
// trailing whitespace included, is what packing counts; in token mode a
// size past max is only known to be past it.)
func (sp *splitter) fits(text []byte) (int, bool) {
	return sp.fitsIn(text, sp.max)
}

// fitsIn is fits with limit for max.
func (sp *splitter) fitsIn(text []byte, limit int) (int, bool) {
	n := sp.m.LenLimit(text, limit)
	if n <= limit {
		return n, true
	}
	trimmed := bytes.TrimRightFunc(text, unicode.IsSpace)
	if sp.m.Exact() {
		return n, n-sp.m.Len(text[len(trimmed):]) <= limit
	}
	return n, sp.m.LenLimit(trimmed, limit) <= limit
}

// cutChars appends pieces of at most pieceLimit characters (tokens),
// never inside a rune.
func (sp *splitter) cutChars(s, e int) {
	limit := sp.pieceLimit()
	for s < e && !sp.pl.Stopped() {
		var p, n int
		if sp.m.Exact() {
			p = s
			for p < e && n < limit {
				_, size := utf8.DecodeRune(sp.src[p:e])
				p += size
				n++
			}
		} else {
			p, n = sp.cutTokens(s, e, limit)
		}
		sp.emit(piece{start: s, end: p, chars: n})
		sp.pl.Add(p - s)
		s = p
	}
}

// cutTokens returns the end of the longest prefix of src[s:e] of about
// limit tokens that has at most limit tokens on its own (at least one
// character), and its tokens.
func (sp *splitter) cutTokens(s, e, limit int) (int, int) {
	c := sp.m.Counter()
	for k := limit; ; {
		p := s + c.Cut(sp.src[s:e], k)
		n := sp.m.LenLimit(sp.src[s:p], limit)
		if n <= limit || k == 1 {
			return p, n
		}
		k = max(1, k-(n-limit))
	}
}

// next returns the end of the unit of level starting at p: the offset just
// after the next separator, or e.
func (sp *splitter) next(p, e, level int) int {
	src := sp.src[:e]
	switch level {
	case levelPara:
		// After a run of blank lines that follows a non-blank line.
		i, polled := p, p
		for {
			if i-polled >= poll.Every {
				if sp.pl.Add(i - polled) {
					return e
				}
				polled = i
			}
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return e
			}
			k := i + j + 1
			if k < e && blankLineAt(src, k) && !blankLineAt(src, bytes.LastIndexByte(src[:i+j], '\n')+1) {
				for k < e && blankLineAt(src, k) {
					k = lineEndOf(src, k)
				}
				return k
			}
			i = k
			if i >= e {
				return e
			}
		}
	case levelLine:
		if j := bytes.IndexByte(src[p:], '\n'); j >= 0 {
			return p + j + 1
		}
		return e
	case levelSentence:
		polled := p
		for i := p; i < e; {
			if i-polled >= poll.Every {
				if sp.pl.Add(i - polled) {
					return e
				}
				polled = i
			}
			c := src[i]
			end := -1
			switch {
			case c == '.' || c == '!' || c == '?':
				end = i + 1
			case c == 0xE3 && i+2 < e && src[i+1] == 0x80 && src[i+2] == 0x82: // 。
				end = i + 3
			case c == 0xEF && i+2 < e && src[i+1] == 0xBC && (src[i+2] == 0x81 || src[i+2] == 0x9F): // ！？
				end = i + 3
			}
			if end < 0 {
				i++
				continue
			}
			cjk := c >= 0x80
			for end < e && strings.IndexByte(`"')]}*_`, src[end]) >= 0 {
				end++
			}
			if end < e && (cjk || isSpaceAt(src, end)) {
				return skipSpace(src, end) // src ends at e
			}
			i = max(end, i+1)
		}
		return e
	case levelSpace:
		i := p
		for i < e && !isSpaceAt(src, i) {
			_, size := utf8.DecodeRune(src[i:])
			i += size
		}
		return skipSpace(src, i)
	}
	return e
}

// emit adds a piece to the chunk being built, first closing that chunk
// when the piece does not fit in it. A new chunk starts with the overlap
// taken from the previous one, shrunk so that the piece fits with it.
func (sp *splitter) emit(p piece) {
	if sp.target > 0 {
		sp.queue(p)
		return
	}
	if len(sp.cur) > 0 && sp.curSize+p.chars > sp.max {
		// A heading that would end the chunk moves to the next one, with
		// the text it heads (and no overlap before it).
		if n := len(sp.cur); n > 1 && sp.isHeading(sp.cur[n-1]) && sp.cur[n-1].chars+p.chars <= sp.max {
			carry := sp.cur[n-1]
			sp.cur = sp.cur[:n-1]
			sp.curSize -= carry.chars
			sp.flush()
			if len(sp.cur) > 0 { // pieces a back-off carried over start the chunk
				sp.emit(carry)
				sp.emit(p)
				return
			}
			sp.cur = append(sp.cur, carry, p)
			sp.curSize = carry.chars + p.chars
			sp.ovStart = -1
			return
		}
		sp.flush()
	}
	if len(sp.cur) == 0 {
		sp.ovStart, sp.curSize = -1, 0
		if sp.overlap > 0 && len(sp.prev) > 0 && p.chars < sp.max {
			sp.ovStart, sp.curSize = sp.overlapStart(sp.prev, min(sp.overlap, sp.max-p.chars))
			sp.ovEnd = sp.prev[len(sp.prev)-1].end
		}
	}
	sp.cur = append(sp.cur, p)
	sp.curSize += p.chars
}

// isHeading reports whether a text piece is one ATX heading line (with
// the blank lines after it).
func (sp *splitter) isHeading(p piece) bool {
	if p.kind != pieceText || p.start >= p.end || sp.src[p.start] != '#' {
		return false
	}
	line := sp.src[p.start:p.end]
	k := bytes.IndexByte(line, '\n')
	if k >= 0 && len(bytes.TrimSpace(line[k:])) > 0 {
		return false // more than one line
	}
	if k >= 0 {
		line = line[:k]
	}
	i := 0
	for i < len(line) && line[i] == '#' {
		i++
	}
	return i <= 6 && (i == len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\r')
}

// flush closes the chunk being built.
func (sp *splitter) flush() {
	if len(sp.cur) == 0 {
		return
	}
	content := sp.content()
	// Oversize is decided on the text as emitted (trimmed).
	oversize := sp.over(content)
	var carry []piece
	if oversize && !sp.m.Exact() {
		content, oversize, carry = sp.backOff(content)
	}
	if content != "" {
		s := sp.cur[0].start
		if sp.ovStart >= 0 {
			s = sp.ovStart
		}
		s, e := trimSpan(sp.src, s, sp.cur[len(sp.cur)-1].end)
		sp.yield(rawChunk{content: content, hdr: sp.hdr, oversize: oversize, start: s, end: e})
		sp.prev, sp.cur = sp.cur, sp.prev[:0]
	} else {
		sp.prev, sp.cur = sp.prev[:0], sp.cur[:0]
	}
	sp.curSize = 0
	if sp.target > 0 && len(carry) > 0 {
		sp.unqueue(carry)
		return
	}
	for _, p := range carry {
		sp.emit(p)
	}
}

// over reports whether content, the text of the chunk being built, is
// longer than max. Content made of source text alone is counted as the
// source span it was copied from (in token mode, through the section's
// index).
func (sp *splitter) over(content string) bool {
	if len(content) <= sp.max {
		return false
	}
	ps := sp.cur
	if sp.m.Exact() || slices.ContainsFunc(ps, func(p piece) bool { return p.kind == pieceSynth }) {
		return sp.m.LenStringLimit(content, sp.max) > sp.max
	}
	s := ps[0].start
	if sp.ovStart >= 0 {
		s = sp.ovStart
	}
	return sp.m.LenLimit(trimBlank(sp.src[s:ps[len(ps)-1].end]), sp.max) > sp.max
}

// backOff makes the chunk being built fit when the sum of its pieces'
// tokens (the search) fit but its text's exact count does not: it drops
// pieces from its end (and a heading left last with them), then its
// overlap, until the text fits or one piece is left, which is then
// oversize. It returns the content, whether it is still oversize, and the
// pieces dropped, in order, for the next chunk.
func (sp *splitter) backOff(content string) (string, bool, []piece) {
	k := len(sp.cur)
	for {
		switch {
		case k > 1:
			k--
			if k > 1 && sp.isHeading(sp.cur[k-1]) {
				k--
			}
		case sp.ovStart >= 0:
			sp.ovStart = -1
		default:
			return content, true, sp.carried(k)
		}
		all := sp.cur
		sp.cur = all[:k]
		content = sp.content()
		over := sp.over(content)
		sp.cur = all
		if !over {
			return content, false, sp.carried(k)
		}
	}
}

// carried cuts the chunk being built to its first k pieces and returns a
// copy of the others.
func (sp *splitter) carried(k int) []piece {
	if k == len(sp.cur) {
		return nil
	}
	rest := append([]piece(nil), sp.cur[k:]...)
	sp.cur = sp.cur[:k]
	return rest
}

// overlapStart returns where the overlap taken from the chunk of pieces ps
// starts, and its length: the longest run of whole text pieces at its end
// of at most limit characters, else the longest run of whole words at the
// end of its last piece; never the whole chunk, never a cut word. It
// returns -1, 0 when there is none.
func (sp *splitter) overlapStart(ps []piece, limit int) (int, int) {
	b := len(ps)
	if limit <= 0 || b == 0 || ps[b-1].kind != pieceText {
		return -1, 0
	}
	best, bestChars, sum := -1, 0, 0
	for k := b - 1; k > 0; k-- {
		if ps[k].kind != pieceText || sum+ps[k].chars > limit {
			break
		}
		sum += ps[k].chars
		if sp.wordStart(ps[k].start) {
			best, bestChars = ps[k].start, sum
		}
	}
	if best >= 0 {
		return best, bestChars
	}
	// Whole words at the end of the last piece.
	last := ps[b-1]
	if !sp.m.Exact() {
		return sp.overlapTokens(last, limit)
	}
	n := 0
	for p := last.end; p > last.start; {
		_, size := utf8.DecodeLastRune(sp.src[last.start:p])
		p -= size
		n++
		if n > limit {
			break
		}
		if p > last.start && sp.wordStart(p) {
			best, bestChars = p, n
		}
	}
	return best, bestChars
}

// overlapTokens returns where the longest run of whole words at the end of
// the piece last of at most limit tokens starts, and its tokens, or -1, 0.
func (sp *splitter) overlapTokens(last piece, limit int) (int, int) {
	starts := sp.starts[:0]
	for p := last.start + 1; p < last.end; p++ {
		if utf8.RuneStart(sp.src[p]) && sp.wordStart(p) {
			starts = append(starts, p)
		}
	}
	sp.starts = starts
	return measure.LongestSuffix(sp.m, sp.src[:last.end], starts, limit)
}

// wordStart reports whether a word starts at p: a non-space character at
// the section start or after whitespace.
func (sp *splitter) wordStart(p int) bool {
	if p >= len(sp.src) || isSpaceAt(sp.src, p) {
		return false
	}
	if p == sp.secStart {
		return true
	}
	r, _ := utf8.DecodeLastRune(sp.src[:p])
	return isSpace(r)
}

// content returns the text of the chunk being built, overlap included,
// trimmed of surrounding blank lines.
func (sp *splitter) content() string {
	ps := sp.cur
	if !slices.ContainsFunc(ps, func(p piece) bool { return p.kind == pieceSynth }) {
		s := ps[0].start
		if sp.ovStart >= 0 {
			s = sp.ovStart
		}
		return string(trimBlank(sp.src[s:ps[len(ps)-1].end]))
	}
	var sb strings.Builder
	if sp.ovStart >= 0 {
		sb.Write(sp.src[sp.ovStart:sp.ovEnd])
	}
	for _, p := range ps {
		if p.kind == pieceSynth {
			sb.WriteString(p.text)
		} else {
			sb.Write(sp.src[p.start:p.end])
		}
	}
	return string(trimBlank([]byte(sb.String())))
}

// trimBlank removes leading blank lines and trailing whitespace.
func trimBlank(b []byte) []byte {
	s, e := trimSpan(b, 0, len(b))
	return b[s:e]
}

// trimSpan returns [s, e) without its leading blank lines (lines of
// Unicode whitespace) and trailing whitespace.
func trimSpan(b []byte, s, e int) (int, int) {
	e = s + len(bytes.TrimRightFunc(b[s:e], unicode.IsSpace))
	for s < e {
		k := bytes.IndexByte(b[s:e], '\n')
		if k < 0 || len(bytes.TrimSpace(b[s:s+k])) > 0 {
			break
		}
		s += k + 1
	}
	return s, e
}

// isSpace reports whether r separates words: Unicode White_Space plus
// U+001C–U+001F, as Python's str.split.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// isSpaceAt reports whether src[i:] starts with a space, deciding ASCII
// bytes without decoding (BenchmarkIsSpaceAt).
func isSpaceAt(src []byte, i int) bool {
	if c := src[i]; c < utf8.RuneSelf {
		return c == ' ' || c >= '\t' && c <= '\r' || c >= 0x1c && c <= 0x1f
	}
	r, _ := utf8.DecodeRune(src[i:])
	return isSpace(r)
}

// blankLineAt reports whether the line starting at i holds only
// whitespace (or nothing, at the end).
func blankLineAt(src []byte, i int) bool {
	for ; i < len(src) && src[i] != '\n'; i++ {
		if c := src[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func lineEndOf(src []byte, p int) int {
	if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
		return p + i + 1
	}
	return len(src)
}
