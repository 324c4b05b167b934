package twostep

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// header is one level of a section's header hierarchy.
type header struct {
	level int
	title string
	// line is the heading's source text (its lines, without the final
	// line break), for the whole-line comparison of add_headers.
	line string
}

// section is a run of blocks from a split header (or the document start)
// to the next split header.
type section struct {
	blocks []mdblocks.Block
	hdrs   []header
}

// unit is a sentence or an atomic unit of a section: src[start:end].
type unit struct {
	start, end int
	words      int  // size: words, or tokens of the unit alone in token mode
	heading    bool // a heading line: kept with the unit after it
	lines      bool // a code block or table: target mode may cut it at its line ends
	table      bool // a table: a cut at its line ends keeps math across rows whole
}

// piece is a chunk before overlap and add_headers: its own text, which is
// src[start:end], or for merged pieces the texts of parts joined by
// "\n\n".
type piece struct {
	text       string
	words      int // size: words, or the exact tokens of text in token mode
	hdrs       []header
	oversize   bool
	start, end int
	parts      []span // merged pieces: the source of each joined text
}

// source returns the source offset of byte k of the piece's text (the
// start of the next joined text for a byte of a "\n\n" join).
func (p *piece) source(k int) int {
	if p.parts == nil {
		return p.start + k
	}
	at := 0
	for _, s := range p.parts {
		n := s.End - s.Start
		if k < at+n {
			return s.Start + max(k-at, 0)
		}
		at += n + 2
	}
	return p.end
}

// level returns the piece's own header level (the deepest of its
// hierarchy), or 0 when it has no header.
func (p *piece) level() int {
	if len(p.hdrs) == 0 {
		return 0
	}
	return p.hdrs[len(p.hdrs)-1].level
}

// Document formats the chunker reads.
const (
	formatMarkdown = "markdown"
	formatMDX      = "mdx"
	formatText     = "text"
)

// formatOf returns the document's format (markdown, mdx or text) and its
// file_format metadata value.
func formatOf(doc chunking.Document) (format, fileFormat string, err error) {
	ext := strings.TrimPrefix(chunking.Ext(doc.Path), ".")
	format = doc.Format
	if format == "" {
		switch ext {
		case "mdx":
			format = formatMDX
		case "txt", "text":
			format = formatText
		default:
			format = formatMarkdown
		}
	}
	switch format {
	case formatMarkdown, "md":
		format = formatMarkdown
		fileFormat = "md"
	case formatMDX:
		fileFormat = "mdx"
	case formatText, "txt":
		format = formatText
		fileFormat = "txt"
	default:
		return "", "", fmt.Errorf("%w: %q (twostep reads markdown, mdx and text)", chunking.ErrUnsupportedFormat, format)
	}
	if ext != "" {
		fileFormat = ext
	}
	return format, fileFormat, nil
}

// Chunk splits doc into chunks; it is pure and safe for concurrent use
// and neither modifies nor retains doc.Content. Content that is not UTF-8
// wraps chunking.ErrNotUTF8, an unsupported Format
// chunking.ErrUnsupportedFormat. Chunk is ChunkFunc collecting the chunks.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Collect(c.ChunkFunc)(context.Background(), doc)
}

// ChunkFunc is Chunk handing out the chunks one at a time: it calls yield
// with each chunk in order (the same chunks Chunk returns) and stops
// early when yield returns false. The document's pieces are found before
// the first chunk is yielded. It looks at ctx between sections and every
// few tens of kilobytes of work inside the sentence, unit and packing
// loops, and when ctx ends returns an error wrapping ctx's error.
func (c *Chunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return c.chunkPolled(poll.New(ctx), doc, yield)
}

// chunkPolled is ChunkFunc counting its work on pl and stopping when pl
// sees its context end (tests read the count and end it at will).
func (c *Chunker) chunkPolled(pl *poll.Poller, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := cmp.Or(doc.Path, "document")
	if err := codec.CheckText(doc.Content); err != nil {
		return nil, fmt.Errorf("twostep: %s: %w", name, err)
	}
	format, fileFormat, err := formatOf(doc)
	if err != nil {
		return nil, fmt.Errorf("twostep: %s: %w", name, err)
	}
	stopped := func() ([]chunking.Warning, error) {
		return nil, fmt.Errorf("twostep: %s: %w", name, pl.Err())
	}
	if pl.Check() {
		return stopped()
	}
	src := string(doc.Content)
	var blocks []mdblocks.Block
	if format == formatText {
		if from, to := sentences.TrimSpace(src, 0, len(src)); from < to {
			blocks = []mdblocks.Block{{Kind: mdblocks.Paragraph, Start: 0, End: len(src), BodyEnd: len(src)}}
		}
	} else {
		blocks = mdblocks.ScanPolled(doc.Content, pl)
	}
	pl.Add(len(src))
	if pl.Check() {
		return stopped()
	}
	unit := measure.OfWords()
	if c.target > 0 {
		unit = measure.OfChars() // target_char; target_tokens has c.enc
	}
	m, release := measure.ForEncoding(c.enc, unit)
	defer release()
	pieces, unclosed := c.split(src, c.sections(src, blocks), m, pl)
	if c.merge && !pl.Stopped() {
		pieces = c.mergePieces(pieces, m, pl)
	}
	if pl.Stopped() {
		return stopped()
	}
	lines := srcspan.New(doc.Content)
	for i := range pieces {
		md := make(chunking.Metadata, 0, 5+len(doc.Metadata))
		hs := make([]any, len(pieces[i].hdrs))
		for j, h := range pieces[i].hdrs {
			hs[j] = strings.Repeat("#", h.level) + h.title // "##Title"
		}
		md = append(md, chunking.Field{Key: "headers", Value: hs}, chunking.Field{Key: "index", Value: i})
		if doc.Path != "" {
			md = append(md, chunking.Field{Key: "file", Value: doc.Path})
		}
		md = append(md, chunking.Field{Key: "file_format", Value: fileFormat})
		if pieces[i].oversize {
			md = append(md, chunking.Field{Key: "oversize", Value: true})
		}
		if len(doc.Metadata) > 0 {
			md = md.Merge(doc.Metadata)
		}
		content, overlap := c.content(pieces, i, m)
		if pl.Add(len(content)); pl.Check() {
			return stopped()
		}
		ch := chunking.NewChunk(content, md)
		if !c.noSpans {
			start := pieces[i].start
			if k := strings.LastIndex(pieces[max(i-1, 0)].text, overlap); overlap != "" && k >= 0 {
				start = pieces[i-1].source(k)
			}
			ch = ch.WithSpan(lines.Span(start, pieces[i].end, content))
		}
		if !yield(ch) {
			break
		}
	}
	return unclosedWarnings(doc.Path, src, unclosed), nil
}

// unclosedWarnings reports the unclosed \begin{X} of the split sections
// (offsets in order), one warning each with its line.
func unclosedWarnings(file, src string, offsets []int) []chunking.Warning {
	if len(offsets) == 0 {
		return nil
	}
	ws := make([]chunking.Warning, 0, len(offsets))
	line, at := 1, 0
	for _, off := range offsets {
		line += strings.Count(src[at:off], "\n")
		at = off
		name := src[off:]
		if e := strings.IndexByte(name, '}'); e >= 0 {
			name = name[:e+1]
		}
		ws = append(ws, chunking.Warning{Kind: chunking.WarnUnclosed, File: file, Line: line,
			Text: "twostep: " + name + " has no matching \\end: kept as text, not as one unit"})
	}
	return ws
}

// sections groups blocks into sections at the split levels: a section runs
// from a split header to the next one; blocks before the first form a
// section without headers. A section holding only header lines is joined
// to a deeper section that follows it and takes its hierarchy.
func (c *Chunker) sections(src string, blocks []mdblocks.Block) []section {
	var secs []section
	var hier []header
	begin := 0 // first block of the current section
	flush := func(end int, next *mdblocks.Block) {
		if end <= begin {
			return
		}
		// Join a header-only section to a deeper one that follows.
		if next != nil && len(hier) > 0 && next.Level > hier[len(hier)-1].level &&
			!slices.ContainsFunc(blocks[begin:end], func(b mdblocks.Block) bool { return b.Kind != mdblocks.Heading || !c.splitOn[b.Level] }) {
			return // the next section starts at begin
		}
		secs = append(secs, section{blocks: blocks[begin:end], hdrs: hier})
		begin = end
	}
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != mdblocks.Heading || !c.splitOn[b.Level] {
			continue
		}
		flush(i, b)
		// The hierarchy of the new section: shallower levels kept.
		n := 0
		for n < len(hier) && hier[n].level < b.Level {
			n++
		}
		_, end := sentences.TrimSpace(src, b.Start, b.End)
		hier = append(slices.Clone(hier[:n]), header{level: b.Level, title: b.Title, line: src[b.Start:end]})
	}
	flush(len(blocks), nil)
	return secs
}

// atomicKind reports whether blocks of kind k are atomic units.
func atomicKind(k mdblocks.Kind) bool {
	switch k {
	case mdblocks.FencedCode, mdblocks.IndentedCode, mdblocks.Table, mdblocks.Math, mdblocks.FrontMatter:
		return true
	}
	return false
}

// split turns sections into pieces: a section within the budget is one
// piece; a longer one is cut into sentences and atomic units, packed
// greedily. It also returns the offsets of the unclosed \begin{X} met in
// the sections it cut.
func (c *Chunker) split(src string, secs []section, m measure.Measure, pl *poll.Poller) ([]piece, []int) {
	pieces := make([]piece, 0, len(secs))
	var units []unit
	sc := scratch{pl: pl, m: m}
	for _, s := range secs {
		if pl.Stopped() {
			return nil, nil
		}
		first, last := s.blocks[0], s.blocks[len(s.blocks)-1]
		start, end := first.Start, last.End
		// A section of whitespace alone (U+001C–U+001F and \v are text
		// to the block scanner) is no piece, in tokens as in words.
		from, to := sentences.TrimSpace(src, start, end)
		if from >= to {
			continue
		}
		end = to
		text := src[start:end]
		pl.Add(len(text))
		words := m.LenStringLimit(text, c.maxWords)
		if words == 0 {
			continue
		}
		if words <= c.maxWords {
			pieces = append(pieces, piece{text: text, words: words, hdrs: s.hdrs, start: start, end: end})
			continue
		}
		units = sc.sectionUnits(src, s.blocks, units[:0])
		if pl.Stopped() {
			return nil, nil
		}
		budget := c.maxWords
		if c.target > 0 {
			pieces = c.packTarget(src, units, s.hdrs, m, pieces, pl)
		} else {
			pieces = c.pack(src, units, s.hdrs, m, budget, pieces, pl)
		}
	}
	return pieces, sc.unclosed
}

// scratch holds buffers reused across the sections of one document.
type scratch struct {
	display, inline, sents []span
	unclosed               []int // unclosed \begin{X} offsets, in order
	pl                     *poll.Poller
	m                      measure.Measure
}

// sectionUnits appends the units of a section's blocks to dst: headings
// and atomic blocks are one unit each; runs of other blocks are scanned for
// display math and cut into sentences.
func (sc *scratch) sectionUnits(src string, blocks []mdblocks.Block, dst []unit) []unit {
	add := func(start, end int) {
		start, end = sentences.TrimSpace(src, start, end)
		if start < end {
			dst = append(dst, unit{start: start, end: end, words: sc.m.LenString(src[start:end])})
		}
	}
	// A sentence that is a heading line nested in a block quote or list
	// item ("> ### Title") is kept with the unit after it, as headings are.
	addSentence := func(start, end int) {
		add(start, end)
		if n := len(dst); n > 0 && isHeadingLine(src[dst[n-1].start:dst[n-1].end]) {
			dst[n-1].heading = true
		}
	}
	// Atomic units keep the indentation of their first line (indented
	// code, a fence nested in a list item).
	addAtomic := func(start, end int, kind mdblocks.Kind) {
		from, to := sentences.TrimSpace(src, start, end)
		if from >= to {
			return
		}
		if ls := strings.LastIndexByte(src[start:from], '\n'); ls >= 0 {
			start += ls + 1
		}
		dst = append(dst, unit{start: start, end: to, words: sc.m.LenString(src[start:to]),
			lines: kind == mdblocks.FencedCode || kind == mdblocks.IndentedCode || kind == mdblocks.Table,
			table: kind == mdblocks.Table})
	}
	for i := 0; i < len(blocks) && !sc.pl.Stopped(); {
		b := blocks[i]
		if b.Kind == mdblocks.Heading {
			add(b.Start, b.End)
			if n := len(dst); n > 0 && dst[n-1].start >= b.Start {
				dst[n-1].heading = true
			}
			i++
			continue
		}
		if atomicKind(b.Kind) {
			addAtomic(b.Start, b.End, b.Kind)
			i++
			continue
		}
		j := i + 1
		for j < len(blocks) && blocks[j].Kind != mdblocks.Heading && !atomicKind(blocks[j].Kind) {
			j++
		}
		a, e := b.Start, blocks[j-1].End
		sc.display, sc.inline, sc.unclosed = scanRegionUnclosed(src, a, e, sc.display[:0], sc.inline[:0], sc.unclosed, sc.pl)
		from := a
		for _, d := range sc.display {
			if sc.pl.Stopped() {
				return dst
			}
			sc.sents = sentences.Append(sc.sents[:0], src, from, d.Start, sc.inline, sc.pl)
			for _, s := range sc.sents {
				addSentence(s.Start, s.End)
			}
			addAtomic(d.Start, d.End, mdblocks.Math)
			from = d.End
		}
		sc.sents = sentences.Append(sc.sents[:0], src, from, e, sc.inline, sc.pl)
		for _, s := range sc.sents {
			addSentence(s.Start, s.End)
		}
		i = j
	}
	return dst
}

// isHeadingLine reports whether s is one line holding an ATX heading,
// possibly behind block quote markers or a list marker.
func isHeadingLine(s string) bool {
	if strings.IndexByte(s, '\n') >= 0 {
		return false
	}
	i := 0
	for i < len(s) && (s[i] == '>' || s[i] == ' ' || s[i] == '\t' || s[i] == '-' || s[i] == '*' || s[i] == '+') {
		i++
	}
	n := 0
	for i+n < len(s) && s[i+n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (i+n == len(s) || s[i+n] == ' ' || s[i+n] == '\t')
}

// pack appends to dst the pieces of one long section: units packed
// greedily while their sizes sum to at most max_chunk_size, the source
// text between them kept; a unit over the budget is a piece of its own,
// marked oversize. A heading line that fits in the next piece together
// with the unit after it starts that piece instead of ending this one.
//
// Words add up; tokens do not (pieces merge across seams), so in token
// mode the sum is the search and each piece's text is then counted whole:
// when it is over the budget, its last units (and a heading left last
// with them) go to the next piece until it fits. A single unit always
// fits, being counted alone.
//
// In target mode, budget is the section's share (measure.Balanced): a
// piece is also closed before a unit when it is nearer to the budget
// without it; max_chunk_size (the ceiling) still bounds it.
func (c *Chunker) pack(src string, units []unit, hdrs []header, m measure.Measure, budget int, dst []piece, pl *poll.Poller) []piece {
	first, words := -1, 0
	// gap estimates the tokens of the source between two units (their
	// own counts leave it out): a line break is a token of its own, a
	// space joins the next word's token. Words: none.
	gap := func(a, b unit) int {
		if m.Unit() == measure.Chars {
			return utf8.RuneCountInString(src[a.end:b.start])
		}
		if m.Exact() || strings.IndexByte(src[a.end:b.start], '\n') < 0 {
			return 0
		}
		return 1
	}
	// flush closes the piece of units[first..last] and returns the index
	// of the first unit it left for the next piece.
	flush := func(last int) int {
		if first < 0 {
			return last + 1
		}
		s := units[first].start
		e := units[last].end
		if !m.Exact() {
			words = m.LenStringLimit(src[s:e], c.maxWords)
			for words > c.maxWords && last > first {
				last--
				if last > first && units[last].heading {
					last--
				}
				e = units[last].end
				words = m.LenStringLimit(src[s:e], c.maxWords)
			}
		}
		dst = append(dst, piece{text: src[s:e], words: words, hdrs: hdrs, start: s, end: e})
		first, words = -1, 0
		return last + 1
	}
	for i := 0; ; {
		if i == len(units) {
			if first < 0 {
				break
			}
			i = flush(len(units) - 1)
			continue
		}
		u := units[i]
		if u.words > c.maxWords {
			if first >= 0 {
				i = flush(i - 1)
				continue
			}
			dst = append(dst, piece{text: src[u.start:u.end], words: u.words, hdrs: hdrs, oversize: true, start: u.start, end: u.end})
		} else {
			// A heading starts a new chunk rather than end one, when it
			// fits there with the unit after it.
			need := u.words
			if u.heading && i+1 < len(units) {
				if n := u.words + gap(u, units[i+1]) + units[i+1].words; n <= c.maxWords {
					need = n
				}
			}
			if first >= 0 {
				need += gap(units[i-1], u)
			}
			if first >= 0 && (words+need > c.maxWords || c.target > 0 && measure.NearerWithout(words, need, budget)) {
				i = flush(i - 1)
				continue
			}
			if first < 0 {
				first = i
			}
			if first < i {
				words += gap(units[i-1], u)
			}
			words += u.words
		}
		if pl.Add(u.end - u.start) {
			return dst
		}
		i++
	}
	return dst
}

// mergePieces merges small pieces greedily left to right, as
// docs/chunkers.md (Two-step, Merging) describes; in token mode the joined
// text is counted whole, incrementally.
func (c *Chunker) mergePieces(pieces []piece, m measure.Measure, pl *poll.Poller) []piece {
	if len(pieces) < 2 {
		return pieces
	}
	out := pieces[:0:0]
	cur := pieces[0]
	var sb strings.Builder
	merged := false
	// Token mode: app holds the current piece's text (written when a merge
	// is first tried), try a scratch copy.
	var app, try tokens.Appender
	appFresh := false
	joined := func(next *piece) (int, bool) {
		if m.Exact() {
			n := cur.words + next.words
			if m.Unit() == measure.Chars {
				n += 2 // the "\n\n" join
			}
			return n, n <= c.maxWords && (c.target == 0 || !measure.NearerWithout(cur.words, n-cur.words, c.target))
		}
		if !appFresh {
			app.Reset(m.Counter(), c.maxWords)
			app.WriteString(cur.text)
			appFresh = true
		}
		try.CopyFrom(&app)
		try.WriteString("\n\n")
		try.WriteString(next.text)
		n := try.Count()
		return n, n <= c.maxWords && (c.target == 0 || !measure.NearerWithout(cur.words, n-cur.words, c.target))
	}
	finish := func() {
		if merged {
			cur.text = sb.String()
			sb = strings.Builder{}
			merged = false
		}
		out = append(out, cur)
	}
	for _, next := range pieces[1:] {
		if pl.Add(len(next.text)) {
			return nil
		}
		l, nl := cur.level(), next.level()
		if l == 0 || nl == 0 || l <= nl {
			if n, ok := joined(&next); ok {
				if !merged {
					sb.WriteString(cur.text)
					merged = true
					cur.parts = []span{{Start: cur.start, End: cur.end}}
				}
				sb.WriteString("\n\n")
				sb.WriteString(next.text)
				cur.words = n
				cur.parts = append(cur.parts, span{Start: next.start, End: next.end})
				cur.end = next.end
				app, try = try, app
				continue
			}
		}
		finish()
		cur = next
		appFresh = false
	}
	finish()
	return out
}

// content returns the final text of piece i: the header lines it lacks
// (add_headers), the overlap from the previous piece's own text, then its
// own text; and the overlap, a substring of the previous piece's text
// ending at its last word.
func (c *Chunker) content(pieces []piece, i int, m measure.Measure) (string, string) {
	p := &pieces[i]
	var overlap string
	if i > 0 {
		prev := pieces[i-1].text
		switch {
		case !m.Exact() && (c.wordOverlap > 0 || c.charOverlap > 0):
			n := c.wordOverlap
			if n == 0 {
				n = c.charOverlap
			}
			overlap = lastTokens(prev, n, m)
		case c.wordOverlap > 0:
			overlap = lastWords(prev, c.wordOverlap)
		case c.charOverlap > 0:
			overlap = lastChars(prev, c.charOverlap)
		}
	}
	var missing []string
	if c.addHeaders {
		missing = missingHeaders(p.text, p.hdrs)
	}
	if overlap == "" && len(missing) == 0 {
		return p.text, ""
	}
	var sb strings.Builder
	for _, h := range missing {
		sb.WriteString(h)
		sb.WriteByte('\n')
	}
	if overlap != "" {
		sb.WriteString(overlap)
		sb.WriteByte(' ')
	}
	sb.WriteString(p.text)
	return sb.String(), overlap
}

// trailingSpaceStart returns the end of s without its trailing spaces.
func trailingSpaceStart(s string) int {
	end := len(s)
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if !sentences.IsSpace(r) {
			break
		}
		end -= size
	}
	return end
}

// lastWords returns the suffix of s that starts at its n-th last word (all
// of s when it has fewer words), trailing spaces left out.
func lastWords(s string, n int) string {
	end := trailingSpaceStart(s)
	starts := sentences.WordStarts(nil, s[:end])
	if len(starts) < n {
		return s[:end]
	}
	return s[starts[len(starts)-n]:end]
}

// lastTokens returns the longest suffix of s (trailing spaces left out)
// that starts at a word and has at most n tokens, found by bisection over
// the word starts ("" when the last word alone has more).
func lastTokens(s string, n int, m measure.Measure) string {
	end := trailingSpaceStart(s)
	starts := sentences.WordStarts(nil, s[:end])
	if start, _ := measure.LongestSuffix(m, s[:end], starts, n); start >= 0 {
		return s[start:end]
	}
	return ""
}

// lastChars returns the longest suffix of s of at most n characters that
// starts at a word start ("" when the last word alone is longer).
func lastChars(s string, n int) string {
	end := trailingSpaceStart(s)
	// Walk back n characters.
	p := end
	for k := 0; k < n && p > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:p])
		p -= size
	}
	// Move forward to a word start.
	for p < end {
		if p == 0 {
			break
		}
		prev, _ := utf8.DecodeLastRuneInString(s[:p])
		cur, size := utf8.DecodeRuneInString(s[p:])
		if sentences.IsSpace(prev) && !sentences.IsSpace(cur) {
			break
		}
		p += size
	}
	return s[p:end]
}

// missingHeaders returns the canonical header lines ("## Title") of hdrs,
// shallowest first, that are not already the leading lines of text.
// Lines are compared whole, against both the heading's source text and
// its canonical form, so "# Intro" is not taken for "## Introduction".
func missingHeaders(text string, hdrs []header) []string {
	var out []string
	pos := 0
	for _, h := range hdrs {
		if n := leadingLine(text[pos:], h.line); n > 0 {
			pos += n
			continue
		}
		canon := strings.Repeat("#", h.level) + " " + h.title
		if n := leadingLine(text[pos:], canon); n > 0 {
			pos += n
			continue
		}
		out = append(out, canon)
	}
	return out
}

// leadingLine returns the length of line plus its line break and any
// blank lines after it when s starts with line as whole lines, else 0.
func leadingLine(s, line string) int {
	if line == "" || !strings.HasPrefix(s, line) {
		return 0
	}
	n := len(line)
	if n < len(s) && s[n] != '\n' && s[n] != '\r' {
		return 0
	}
	for n < len(s) && (s[n] == '\n' || s[n] == '\r' || s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return n
}
