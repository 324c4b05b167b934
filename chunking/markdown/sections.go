package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// headers are the H1–H3 titles in force.
type headers struct {
	set   [3]bool
	title [3]string
}

// section is a run of top-level blocks from an H1–H3 heading (or the
// document start) to the next one.
type section struct {
	start, end  int // src[start:end], trailing whitespace left out
	chars       int
	hdr         headers
	level       int // heading level; 0 for the preamble
	headerOnly  bool
	first, last int // blocks[first:last]
}

// rawChunk is a chunk before numbering.
type rawChunk struct {
	content  string
	hdr      headers
	oversize bool
}

// split is the pure core: MDX-cleaned UTF-8 source in, chunks out.
func (c *Chunker) split(src []byte) ([]rawChunk, []chunking.Warning) {
	blocks := mdblocks.Scan(src)
	lines := lineCounter{src: src}
	var warns []chunking.Warning
	for _, b := range blocks {
		if b.Kind == mdblocks.FencedCode && !b.Closed {
			warns = append(warns, chunking.Warning{Line: lines.at(b.Start),
				Text: "unclosed code fence: the code block runs to the end of the document"})
		}
	}
	secs := sections(src, blocks)
	var out []rawChunk
	sp := splitter{src: src, max: c.maxChar, overlap: c.overlap, lines: &lines, warns: &warns}
	emit := func(group []section, hdr headers) {
		if len(group) == 1 && group[0].chars > c.maxChar {
			s := group[0]
			out = sp.section(out, s, blocks[s.first:s.last], hdr)
			return
		}
		var content string
		if len(group) == 1 {
			content = string(src[group[0].start:group[0].end])
		} else {
			var sb strings.Builder
			n := 0
			for _, s := range group {
				n += s.end - s.start + 2
			}
			sb.Grow(n)
			for i, s := range group {
				if i > 0 {
					sb.WriteString("\n\n")
				}
				sb.Write(src[s.start:s.end])
			}
			content = sb.String()
		}
		out = append(out, rawChunk{content: content, hdr: hdr})
	}
	// Fuse: one greedy forward pass.
	for i := 0; i < len(secs); {
		cur := secs[i]
		hdr := cur.hdr
		chars := cur.chars
		j := i + 1
		for j < len(secs) && chars < c.minChar && chars+secs[j].chars+2 <= c.maxChar {
			chars += secs[j].chars + 2
			for l := range 3 {
				if !hdr.set[l] && secs[j].hdr.set[l] {
					hdr.set[l], hdr.title[l] = true, secs[j].hdr.title[l]
				}
			}
			j++
		}
		emit(secs[i:j], hdr)
		i = j
	}
	return out, warns
}

// sections splits the blocks at top-level H1–H3 headings and joins each
// header-only section to a deeper one that follows it.
func sections(src []byte, blocks []mdblocks.Block) []section {
	var secs []section
	var cur headers
	for i, b := range blocks {
		if b.Kind == mdblocks.Heading && b.Level <= 3 {
			l := b.Level - 1
			cur.set[l], cur.title[l] = true, b.Title
			for d := l + 1; d < 3; d++ {
				cur.set[d], cur.title[d] = false, ""
			}
			secs = append(secs, section{start: b.Start, hdr: cur, level: b.Level, first: i})
		} else if len(secs) == 0 {
			secs = append(secs, section{start: b.Start, first: i})
		}
		s := &secs[len(secs)-1]
		s.end, s.last = b.End, i+1
	}
	// Join header-only sections to a deeper section right after them.
	out := secs[:0]
	for i := 0; i < len(secs); i++ {
		s := secs[i]
		s.headerOnly = s.level > 0 && s.last-s.first == 1
		for s.headerOnly && i+1 < len(secs) && secs[i+1].level > s.level {
			next := secs[i+1]
			s.end, s.last, s.hdr, s.level = next.end, next.last, next.hdr, next.level
			s.headerOnly = next.last-next.first == 1
			i++
		}
		out = append(out, s)
	}
	// Trim each section of leading blank lines and trailing whitespace;
	// drop sections left empty (whitespace goldmark took for text, such
	// as a form feed).
	kept := out[:0]
	for _, s := range out {
		s.start, s.end = trimSpan(src, s.start, s.end)
		if s.start == s.end {
			continue
		}
		s.chars = runeCount(src[s.start:s.end])
		kept = append(kept, s)
	}
	return kept
}

// lineCounter turns increasing offsets into 1-based line numbers in time
// linear in the source overall.
type lineCounter struct {
	src       []byte
	off, line int
}

func (lc *lineCounter) at(off int) int {
	if off < lc.off {
		lc.off, lc.line = 0, 0
	}
	lc.line += bytes.Count(lc.src[lc.off:off], []byte{'\n'})
	lc.off = off
	return lc.line + 1
}

func itoa(n int) string { return strconv.Itoa(n) }
