package markdown

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// Split levels, coarsest first: the separators of the spec.
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
	start, end int    // source span (text and atomic pieces)
	text       string // content of a synthetic piece
	chars      int
	kind       pieceKind
	oversize   bool
}

// splitter splits one long section into pieces and packs them into chunks.
type splitter struct {
	src          []byte
	max, overlap int
	lines        *lineCounter
	warns        *[]chunking.Warning
	pieces       []piece
	secStart     int
}

// section appends the chunks of a section longer than max_char.
func (sp *splitter) section(out []rawChunk, s section, blocks []mdblocks.Block, hdr headers) []rawChunk {
	sp.pieces = sp.pieces[:0]
	sp.secStart = s.start
	pos := s.start
	for _, b := range blocks {
		if !b.Kind.Atomic() || b.Start >= s.end {
			continue
		}
		end := min(b.End, s.end)
		if b.Start > pos {
			sp.split(pos, b.Start, levelPara)
		}
		if n := utf8.RuneCount(sp.src[b.Start:end]); n <= sp.max {
			sp.pieces = append(sp.pieces, piece{start: b.Start, end: end, chars: n, kind: pieceAtomic})
		} else {
			sp.atomic(b, end)
		}
		pos = end
	}
	if pos < s.end {
		sp.split(pos, s.end, levelPara)
	}
	return sp.pack(out, hdr)
}

// split appends the pieces of src[s:e] at level or finer.
func (sp *splitter) split(s, e, level int) {
	n := utf8.RuneCount(sp.src[s:e])
	if n <= sp.max {
		sp.pieces = append(sp.pieces, piece{start: s, end: e, chars: n})
		return
	}
	if level == levelChar {
		sp.cutChars(s, e)
		return
	}
	q := sp.next(s, e, level)
	if q >= e {
		sp.split(s, e, level+1)
		return
	}
	for p := s; p < e; p = q {
		q = sp.next(p, e, level)
		sp.split(p, q, level+1)
	}
}

// cutChars appends pieces of at most max characters, never inside a rune.
func (sp *splitter) cutChars(s, e int) {
	for s < e {
		p, n := s, 0
		for p < e && n < sp.max {
			_, size := utf8.DecodeRune(sp.src[p:e])
			p += size
			n++
		}
		sp.pieces = append(sp.pieces, piece{start: s, end: p, chars: n})
		s = p
	}
}

// next returns the end of the unit of level starting at p: the offset just
// after the next separator, or e.
func (sp *splitter) next(p, e, level int) int {
	src := sp.src[:e]
	switch level {
	case levelPara:
		// After a run of blank lines that follows a non-blank line.
		i := p
		for {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return e
			}
			k := i + j + 1
			if k < e && blankLineAt(src, k) && !blankLineAt(src, lineStartOf(src, i+j)) {
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
		for i := p; i < e; {
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
				for end < e && isSpaceAt(src, end) {
					_, size := utf8.DecodeRune(src[end:])
					end += size
				}
				if end < e {
					return end
				}
				return e
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
		for i < e && isSpaceAt(src, i) {
			_, size := utf8.DecodeRune(src[i:])
			i += size
		}
		return i
	}
	return e
}

// pack groups the pieces into chunks of at most max characters, overlap
// included, and appends them to out.
func (sp *splitter) pack(out []rawChunk, hdr headers) []rawChunk {
	ps := sp.pieces
	prevA, prevB := -1, -1
	for i := 0; i < len(ps); {
		ovStart, ovChars := -1, 0
		if prevB == i && sp.overlap > 0 && ps[i].chars < sp.max {
			ovStart, ovChars = sp.overlapStart(prevA, prevB, min(sp.overlap, sp.max-ps[i].chars))
		}
		size := ovChars
		j := i
		for j < len(ps) && size+ps[j].chars <= sp.max {
			size += ps[j].chars
			j++
		}
		oversize := false
		if j == i {
			j = i + 1
			oversize = ps[i].oversize || ps[i].chars > sp.max
		}
		if content := sp.content(ovStart, i, j); content != "" {
			out = append(out, rawChunk{content: content, hdr: hdr, oversize: oversize})
			prevA, prevB = i, j
		} else {
			prevA, prevB = -1, -1
		}
		i = j
	}
	return out
}

// overlapStart returns where the overlap taken from the chunk of pieces
// ps[a:b] starts, and its length: the longest run of whole text pieces at
// its end of at most limit characters, else the longest run of whole words
// at the end of its last piece; never the whole chunk, never a cut word.
// It returns -1, 0 when there is none.
func (sp *splitter) overlapStart(a, b, limit int) (int, int) {
	ps := sp.pieces
	if limit <= 0 || b <= a || ps[b-1].kind != pieceText {
		return -1, 0
	}
	best, bestChars, sum := -1, 0, 0
	for k := b - 1; k > a; k-- {
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

// content returns the text of the chunk made of the overlap starting at
// ovStart (or none when ovStart < 0) and pieces [i, j), trimmed of
// surrounding blank lines.
func (sp *splitter) content(ovStart, i, j int) string {
	ps := sp.pieces[i:j]
	synth := false
	for _, p := range ps {
		if p.kind == pieceSynth {
			synth = true
			break
		}
	}
	if !synth {
		s := ps[0].start
		if ovStart >= 0 {
			s = ovStart
		}
		return string(trimBlank(sp.src[s:ps[len(ps)-1].end]))
	}
	var sb strings.Builder
	if ovStart >= 0 {
		sb.Write(sp.src[ovStart:ps[0].start])
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
	b = bytes.TrimRightFunc(b, unicode.IsSpace)
	for len(b) > 0 {
		k := bytes.IndexByte(b, '\n')
		if k < 0 || len(bytes.TrimSpace(b[:k])) > 0 {
			break
		}
		b = b[k+1:]
	}
	return b
}

// isSpace reports whether r separates words: Unicode White_Space plus
// U+001C–U+001F, as Python's str.split.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

func isSpaceAt(src []byte, i int) bool {
	c := src[i]
	if c < utf8.RuneSelf {
		return c == ' ' || c >= '\t' && c <= '\r' || c >= 0x1c && c <= 0x1f || c == 0x85
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

func lineStartOf(src []byte, p int) int {
	if i := bytes.LastIndexByte(src[:p], '\n'); i >= 0 {
		return i + 1
	}
	return 0
}

func lineEndOf(src []byte, p int) int {
	if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
		return p + i + 1
	}
	return len(src)
}
