package markdown

import (
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// headers are the H1–H3 titles in force.
type headers struct {
	set   [3]bool
	title [3]string
}

// section is a run of top-level blocks from an H1–H3 heading (or the
// document start) to the next one.
type section struct {
	start, end int // src[start:end], trailing whitespace left out
	chars      int
	hdr        headers
	level      int  // heading level; 0 for the preamble
	blocks     int  // number of top-level blocks
	headerOnly bool // the section holds its heading only
	atoms      []mdblocks.Block
}

// rawChunk is a chunk before numbering.
type rawChunk struct {
	content  string
	hdr      headers
	oversize bool
	// start and end bound the source text the content holds (in the
	// MDX-cleaned source): exactly it, or for content made from it
	// (joined sections, re-wrapped parts) the text it came from.
	start, end int
}

// pipeline turns the stream of top-level blocks into chunks, holding only
// the section being built, a header-only section waiting for a deeper one,
// and the sections being fused: memory stays bounded by the longest
// section, not the document.
type pipeline struct {
	c     *Chunker
	src   []byte
	lines *srcspan.Lines // of the MDX-cleaned source, as warnings count lines
	warns []chunking.Warning
	yield func(rawChunk) bool
	stop  bool // yield returned false
	pl    *poll.Poller

	hdr     headers  // headers in force
	cur     *section // the section being built
	pending *section // a finished section that may still join the next
	group   []section
	gchars  int
	ghdr    headers
	sp      splitter

	// Sizes: m measures. In token mode each section is counted once, into
	// an index of its pieces (ix; gix is the index of the section that
	// started the group, which the splitter counts its spans through when
	// it is split); gtok holds the fused group's text (sections joined by
	// "\n\n") so that a join is counted exactly by scanning only the
	// joint, and try is a scratch copy.
	m       measure.Measure
	ix, gix tokens.Index
	gixOK   bool // gix indexes the group's first section
	gtok    tokens.Appender
	try     tokens.Appender
}

// split is the pure core: it chunks MDX-cleaned UTF-8 source and calls
// yield with each chunk in order, stopping when yield returns false or
// when pl sees its context end (the caller then reports pl.Err()).
func (c *Chunker) split(src []byte, m measure.Measure, pl *poll.Poller, yield func(rawChunk) bool) []chunking.Warning {
	p := &pipeline{c: c, src: src, yield: yield, pl: pl, m: m, lines: srcspan.New(src)}
	p.sp = splitter{src: src, max: c.maxChar, overlap: c.overlap, m: m, lines: p.lines, warns: &p.warns, yield: p.out, pl: pl, target: c.target}
	mdblocks.ScanFuncPolled(src, pl, func(b mdblocks.Block) bool {
		p.block(b)
		return !p.stop && !pl.Add(b.End-b.Start+1)
	})
	if pl.Stopped() {
		return nil
	}
	p.finish(p.cur)
	p.cur = nil
	if p.pending != nil {
		p.push(*p.pending)
	}
	if len(p.group) > 0 {
		p.emit()
	}
	return p.warns
}

// out passes a chunk on unless the consumer has stopped or the context
// has ended.
func (p *pipeline) out(r rawChunk) {
	if p.pl.Add(len(r.content)); p.stop || p.pl.Check() {
		p.stop = true
		return
	}
	if !p.yield(r) {
		p.stop = true
	}
}

// block adds one top-level block.
func (p *pipeline) block(b mdblocks.Block) {
	if b.Kind == mdblocks.FencedCode && !b.Closed {
		p.warns = append(p.warns, chunking.Warning{Kind: chunking.WarnUnclosed, Line: p.lines.At(b.Start),
			Text: "unclosed code fence: the code block runs to the end of the document"})
	}
	if b.Kind == mdblocks.Heading && b.Level <= 3 {
		p.finish(p.cur)
		l := b.Level - 1
		p.hdr.set[l], p.hdr.title[l] = true, b.Title
		for d := l + 1; d < 3; d++ {
			p.hdr.set[d], p.hdr.title[d] = false, ""
		}
		p.cur = &section{start: b.Start, hdr: p.hdr, level: b.Level}
	} else if p.cur == nil {
		p.cur = &section{start: b.Start} // the preamble
	}
	p.cur.end = b.End
	p.cur.blocks++
	if b.Kind.Atomic() {
		p.cur.atoms = append(p.cur.atoms, b)
	}
}

// finish closes a section: a header-only section waits for the next one,
// which joins it when deeper.
func (p *pipeline) finish(s *section) {
	if s == nil {
		return
	}
	s.headerOnly = s.level > 0 && s.blocks == 1
	if q := p.pending; q != nil {
		if q.headerOnly && s.level > q.level {
			s.start = q.start // the header-only section joins the deeper one
			s.atoms = append(q.atoms, s.atoms...)
		} else {
			p.push(*q)
		}
	}
	p.pending = s
}

// push trims a finished section and fuses it: one greedy forward pass.
func (p *pipeline) push(s section) {
	s.start, s.end = trimSpan(p.src, s.start, s.end)
	if s.start == s.end {
		return // whitespace goldmark took for text, such as a form feed
	}
	text := p.src[s.start:s.end]
	if !p.m.Exact() {
		p.pushTokens(s, text)
		return
	}
	s.chars = p.m.Len(text)
	if len(p.group) > 0 {
		if p.gchars < p.c.minChar && p.gchars+s.chars+2 <= p.c.maxChar {
			p.fuse(s, p.gchars+s.chars+2)
			return
		}
		p.emit()
	}
	p.group = append(p.group[:0], s)
	p.gchars, p.ghdr = s.chars, s.hdr
}

// fuse adds s to the group, whose text then has size n.
func (p *pipeline) fuse(s section, n int) {
	p.group = append(p.group, s)
	p.gchars = n
	for l := range 3 {
		if !p.ghdr.set[l] && s.hdr.set[l] {
			p.ghdr.set[l], p.ghdr.title[l] = true, s.hdr.title[l]
		}
	}
}

// pushTokens is push in token mode. The join is counted whole (its tokens
// are not the sum of its parts'), yet each section's text is counted once:
// into an index of its pieces, through which the join scans only the
// joint with the group before it, a fresh group takes the section's count,
// and the splitter counts the spans of a section too long for one chunk.
// Counts are exact up to max_char (in target mode, exact).
func (p *pipeline) pushTokens(s section, text []byte) {
	// A section too long to index (or with the index switched off, as
	// the differential test does) is written to the Appenders whole.
	indexed := !p.c.noIndex && tokens.Indexable(len(text))
	if indexed {
		limit := p.c.maxChar
		if p.c.target > 0 {
			limit = len(text) // sectionSize needs the exact count
		}
		p.ix.Build(p.m.Counter(), text, limit)
	}
	if len(p.group) > 0 {
		if p.gchars < p.c.minChar {
			p.try.CopyFrom(&p.gtok)
			p.try.WriteString("\n\n")
			p.appendSection(&p.try, text, indexed)
			if n := p.try.Count(); n <= p.c.maxChar {
				p.gtok, p.try = p.try, p.gtok
				p.fuse(s, n)
				return
			}
		}
		p.emit()
	}
	p.gtok.Reset(p.m.Counter(), p.c.maxChar)
	p.appendSection(&p.gtok, text, indexed)
	s.chars = p.gtok.Count() // above max_char when the section is to be split
	if indexed {
		p.ix, p.gix = p.gix, p.ix
	}
	p.gixOK = indexed
	p.group = append(p.group[:0], s)
	p.gchars, p.ghdr = s.chars, s.hdr
}

// appendSection writes the section's text to a: through its index, which
// scans only the joint, when it has one.
func (p *pipeline) appendSection(a *tokens.Appender, text []byte, indexed bool) {
	if indexed {
		p.ix.AppendTo(a)
	} else {
		a.Write(text)
	}
}

// emit turns the fused group into chunks.
func (p *pipeline) emit() {
	group, src := p.group, p.src
	defer func() { p.group = p.group[:0] }()
	if p.stop {
		return
	}
	if len(group) == 1 && group[0].chars > p.c.maxChar {
		if !p.m.Exact() && p.gixOK {
			p.sp.m = p.m.WithIndex(&p.gix)
			defer func() { p.sp.m = p.m }()
		}
		if p.c.target > 0 {
			p.sp.budget = measure.Balanced(p.sectionSize(group[0]), p.c.target)
		}
		p.sp.section(group[0], p.ghdr)
		return
	}
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
	p.out(rawChunk{content: sb.String(), hdr: p.ghdr, start: group[0].start, end: group[len(group)-1].end})
}

// sectionSize returns the size of a section to be split, in the
// chunker's unit: in token mode the count stopped past max_char, so the
// section is counted whole (target mode only; through its index, which
// target mode builds exact).
func (p *pipeline) sectionSize(s section) int {
	if p.m.Exact() {
		return s.chars
	}
	return p.sp.m.Len(p.src[s.start:s.end])
}
