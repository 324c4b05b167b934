package mdblocks

import (
	"bytes"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// Kind is the kind of a top-level block.
type Kind uint8

// Block kinds.
const (
	Paragraph     Kind = iota + 1 // a paragraph (also link reference definitions)
	Heading                       // an ATX or setext heading; Level and Title set
	FencedCode                    // a fenced code block; Fence fields set
	IndentedCode                  // an indented code block
	Table                         // a GFM table; Body* fields set
	Math                          // display math: $$…$$, \[…\], \begin{X}…\end{X}
	HTML                          // a CommonMark HTML block
	List                          // a list, with everything nested in it
	Quote                         // a block quote, with everything nested in it
	ThematicBreak                 // a thematic break (---, ***, ___)
	FrontMatter                   // leading YAML (---) or TOML (+++) front matter
)

var kindNames = [...]string{
	Paragraph: "paragraph", Heading: "heading", FencedCode: "fenced_code",
	IndentedCode: "indented_code", Table: "table", Math: "math", HTML: "html",
	List: "list", Quote: "quote", ThematicBreak: "thematic_break", FrontMatter: "front_matter",
}

// String returns the kind's snake_case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Atomic reports whether blocks of kind k must not be cut between lines
// without re-wrapping: fenced code, tables and display math.
func (k Kind) Atomic() bool { return k == FencedCode || k == Table || k == Math }

// Block is one top-level block of a Markdown document: src[Start:End] is
// its text as whole lines, without trailing blank lines (see the package
// documentation).
type Block struct {
	Kind       Kind
	Start, End int

	// Level is the heading level 1–6 (Heading only).
	Level int
	// Title is the heading text (Heading only; see the package
	// documentation).
	Title string
	// Setext reports a setext heading (Heading only).
	Setext bool

	// BodyStart and BodyEnd split the block into an opening part
	// src[Start:BodyStart], a body src[BodyStart:BodyEnd] and a closing
	// part src[BodyEnd:End], all whole lines:
	//   - FencedCode: the opening fence line, the code lines, the closing
	//     fence line (empty when the fence is unclosed);
	//   - Math: the opening line, the inner lines, the closing line; a
	//     one-line block is all body (BodyStart = Start, BodyEnd = End);
	//   - Table: the header and delimiter rows, the body rows, nothing.
	// For other kinds BodyStart = Start and BodyEnd = End.
	BodyStart, BodyEnd int

	// FenceChar and FenceLen are the opening fence's character ('`' or
	// '~') and length (FencedCode only).
	FenceChar byte
	FenceLen  int
	// Closed reports that a fenced code block has a closing fence.
	Closed bool
}

var blockParser = sync.OnceValue(func() parser.Parser { return newBlockParser(MaxNesting) })

// newBlockParser returns the scanner's goldmark parser, with containers
// nested at most maxNesting deep.
func newBlockParser(maxNesting int) parser.Parser {
	bps := append(boundedBlockParsers(maxNesting), util.Prioritized(mathParser{}, 650))
	return parser.NewParser(parser.WithBlockParsers(bps...),
		parser.WithParagraphTransformers(util.Prioritized(dropParagraphLines{}, 100)))
}

// dropParagraphLines empties every closed paragraph's lines (to one empty
// line: goldmark removes a paragraph with none). goldmark walks every
// block's lines after the block parse, which costs more than the parse
// itself, and the scanner needs no lines. A paragraph closed by a setext
// underline keeps them: they become the heading's.
type dropParagraphLines struct{}

func (dropParagraphLines) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if line, _ := reader.PeekLine(); isSetextUnderline(line) {
		return
	}
	lines := node.Lines()
	if lines.Len() == 0 {
		return
	}
	first := lines.At(0)
	lines.SetSliced(0, 1)
	lines.Set(0, text.NewSegment(first.Start, first.Start))
}

// isSetextUnderline reports whether line is a run of '=' or '-' with
// optional spaces around it.
func isSetextUnderline(line []byte) bool {
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 || line[0] != '=' && line[0] != '-' {
		return false
	}
	return len(bytes.TrimLeft(line, string(line[:1]))) == 0
}

var baselineParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...))
})

// ParseOnly parses src with goldmark's CommonMark block parsers alone and
// discards the result: the chunkers' benchmark baseline.
func ParseOnly(src []byte) int {
	doc := baselineParser().Parse(text.NewReader(src))
	return doc.ChildCount()
}

var bom = []byte("\uFEFF")

// SegmentSize is about the size of the segments whose blocks the scan
// functions hand on at a time. goldmark parses only the stretches the
// fast scanner hands it, each up to a safe cut, so its tree (several
// times the text's size) is never built for a whole huge document. (With
// goldmark alone, the tests' reference, a document longer than
// SegmentSize is parsed in segments cut before a column-0 ATX heading
// after a blank line. Either cut is kept only where no fenced code, HTML
// block of types 1–5 or math block is open, so the blocks are one
// parse's; else the stretch is parsed again twice as long, and the work
// stays linear.)
const SegmentSize = 2 << 20

// Scan returns the top-level blocks of the Markdown document src, in
// order, in time linear in len(src). Any byte sequence is some Markdown.
// It is safe for concurrent use and does not retain src.
func Scan(src []byte) []Block {
	blocks, _ := defaultScanner().scan(src)
	return blocks
}

// ScanFuncPolled calls yield with each block Scan returns, in order,
// until yield returns false, holding one segment's blocks at a time. It
// counts the parse's work on pl (the bytes of every line goldmark's
// parsers are handed) and stops soon after pl sees its context end, even
// inside a segment, whose blocks are then never yielded; pl.Stopped()
// tells a stop from the end.
func ScanFuncPolled(src []byte, pl *poll.Poller, yield func(Block) bool) {
	sc := defaultScanner()
	sc.pl = pl
	sc.scanFunc(src, func(seg []Block) bool {
		for _, b := range seg {
			if !yield(b) {
				return false
			}
		}
		return true
	})
}

// ScanPolled is Scan polling pl as ScanFuncPolled does; it returns nil
// once pl sees its context end.
func ScanPolled(src []byte, pl *poll.Poller) []Block {
	sc := defaultScanner()
	sc.pl = pl
	blocks, _ := sc.scan(src)
	if pl.Stopped() {
		return nil
	}
	return blocks
}

// scanner holds what the Scan functions fix and tests vary.
type scanner struct {
	parser      parser.Parser
	segmentSize int
	// goldmarkOnly parses every segment with goldmark, the fast scanner
	// off: the reference the fast scanner is tested against.
	goldmarkOnly bool
	// stats, when not nil, counts the bytes each scanner took (tests).
	stats *scanStats
	// peeked, when not nil, counts the bytes of every line goldmark's
	// parsers are handed and of the lines the fast scanner reads: the
	// parse's work, which tests count.
	peeked *int
	// pl, when not nil, is charged the same work and stops the parse.
	pl *poll.Poller
}

// bytesPerBlock is a little under the mean size of a block of
// documentation (184 bytes in the corpus the benchmarks read).
const bytesPerBlock = 128

// scanStats counts the bytes of a document's body the fast scanner read
// blocks from and those goldmark parsed.
type scanStats struct{ fast, goldmark int }

func defaultScanner() scanner {
	return scanner{parser: blockParser(), segmentSize: SegmentSize}
}

// scan returns the blocks of src and the number of segments parsed.
func (sc scanner) scan(src []byte) ([]Block, int) {
	var blocks []Block
	segments := sc.scanFunc(src, func(seg []Block) bool {
		if blocks == nil { // room for the document at the first segment's density
			covered := max(1, seg[len(seg)-1].End)
			blocks = make([]Block, 0, len(seg)+len(seg)*(len(src)-covered)/covered)
		}
		blocks = append(blocks, seg...)
		return true
	})
	return blocks, segments
}

// scanFunc scans src segment by segment and hands each segment's blocks
// to yield (the slice is reused: yield must not keep it). It returns the
// number of segments scanned.
func (sc scanner) scanFunc(src []byte, yield func([]Block) bool) int {
	// Room for a segment's blocks at about the density of documentation,
	// so that most documents' blocks are gathered without growing the
	// buffer block by block.
	blocks := make([]Block, 0, min(len(src), sc.segmentSize)/bytesPerBlock+4)
	off := 0
	if bytes.HasPrefix(src, bom) {
		off = len(bom) // an encoding mark, in no block
	}
	if end := frontMatterEnd(src[off:]); end > 0 {
		blocks = append(blocks, Block{Kind: FrontMatter, Start: off, End: off + end, BodyStart: off, BodyEnd: off + end})
		off += end
	}
	body := src[off:]
	shared := &lazyMathIndex{doc: body}
	if sc.goldmarkOnly {
		return sc.scanGoldmark(body, off, shared, blocks, yield)
	}
	segments := 0
	for pos := 0; pos < len(body); {
		// A segment: blocks read by the fast scanner and stretches parsed
		// by goldmark, up to segmentSize bytes or a little more.
		limit := pos + sc.segmentSize
		for pos < len(body) && pos < limit {
			var stop int
			var fallback bool
			blocks, stop, fallback = sc.fast(body, pos, limit, off, blocks)
			if stop == fastStopped {
				return segments
			}
			if sc.stats != nil {
				sc.stats.fast += stop - pos
			}
			pos = stop
			if !fallback {
				continue
			}
			// goldmark parses from pos to the first safe cut after it
			// where nothing is left open, trying cuts twice as far each
			// time (so the work stays linear).
			end := pos
			var doc ast.Node
			for size := 0; ; size = 2 * (end - pos) {
				end = nextSafeCut(body, max(end, pos+size))
				if doc = sc.parse(body, pos, end, shared); doc == nil {
					return segments // stopped: pl's context ended
				}
				if end == len(body) || closedAtEnd(body, pos, end, doc.LastChild()) {
					break
				}
			}
			blocks = appendBlocks(blocks, body, pos, end, doc, off)
			if sc.stats != nil {
				sc.stats.goldmark += end - pos
			}
			pos = end
		}
		segments++
		if len(blocks) > 0 && !yield(blocks) {
			return segments
		}
		blocks = blocks[:0]
	}
	if len(blocks) > 0 {
		yield(blocks) // front matter alone
	}
	return segments
}

// scanGoldmark is scanFunc with every segment parsed by goldmark, cut
// before a column-0 ATX heading after a blank line.
func (sc scanner) scanGoldmark(body []byte, off int, shared *lazyMathIndex, blocks []Block, yield func([]Block) bool) int {
	segments := 0
	for pos := 0; pos < len(body); {
		end := pos
		var doc ast.Node
		for size := sc.segmentSize; ; size *= 2 {
			last := end
			end = len(body)
			if len(body)-pos > size {
				end = nextCut(body, max(last+1, pos+size))
			}
			if doc = sc.parse(body, pos, end, shared); doc == nil {
				return segments // stopped: pl's context ended
			}
			if end == len(body) || closedAtEnd(body, pos, end, doc.LastChild()) {
				break
			}
		}
		blocks = appendBlocks(blocks, body, pos, end, doc, off)
		if sc.stats != nil {
			sc.stats.goldmark += end - pos
		}
		segments++
		pos = end
		if len(blocks) > 0 && !yield(blocks) {
			return segments
		}
		blocks = blocks[:0]
	}
	if len(blocks) > 0 {
		yield(blocks) // front matter alone
	}
	return segments
}

// parse runs goldmark on body[start:end]; it returns nil when sc.pl
// stopped the parse.
func (sc scanner) parse(body []byte, start, end int, shared *lazyMathIndex) (doc ast.Node) {
	pc := parser.NewContext()
	pc.Set(mathSourceKey, &mathSource{base: start, shared: shared})
	var r text.Reader = text.NewReader(body[start:end])
	if sc.peeked != nil {
		r = countingReader{Reader: r, peeked: sc.peeked}
	}
	if sc.pl != nil {
		if sc.pl.Check() {
			return nil
		}
		r = pollingReader{Reader: r, pl: sc.pl}
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stopParse); !ok {
					panic(v)
				}
				doc = nil
			}
		}()
	}
	return sc.parser.Parse(r, parser.WithContext(pc))
}

// stopParse is the panic value with which pollingReader leaves goldmark's
// parse once the context has ended (ending its input early could leave a
// block parser reading past the end it was promised); parse recovers it.
type stopParse struct{}

// pollingReader charges the bytes of every line goldmark's parsers peek at
// to a Poller and stops the parse once it has seen its context end.
type pollingReader struct {
	text.Reader
	pl *poll.Poller
}

// PeekLine implements text.Reader.
func (r pollingReader) PeekLine() ([]byte, text.Segment) {
	line, seg := r.Reader.PeekLine()
	if r.pl.Add(len(line) + 1) {
		panic(stopParse{})
	}
	return line, seg
}

// countingReader counts the bytes of the lines goldmark's parsers peek at:
// the parse's work.
type countingReader struct {
	text.Reader
	peeked *int
}

// PeekLine implements text.Reader.
func (r countingReader) PeekLine() ([]byte, text.Segment) {
	line, seg := r.Reader.PeekLine()
	*r.peeked += len(line)
	return line, seg
}

// nextCut returns the start of the first line at or after p that is an ATX
// heading at column 0 following a blank line, or len(text).
func nextCut(input []byte, p int) int {
	p = lineStart(input, p)
	for p < len(input) {
		e := lineEnd(input, p)
		if e < len(input) && isBlank(input[p:e]) && input[e] == '#' {
			le := lineEnd(input, e)
			if isATX(bytes.TrimRight(input[e:le], " \t\r\n")) {
				return e
			}
		}
		p = e
	}
	return len(input)
}

// closedAtEnd reports whether segment body[base:end], whose last
// top-level block is n, leaves no fenced code, HTML block of types 1–5 or
// display math open.
func closedAtEnd(body []byte, base, end int, n ast.Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *ast.FencedCodeBlock:
		if n.Pos() < 0 {
			return false
		}
		start := lineStart(body, base+n.Pos())
		b := Block{Start: start, End: trimBlankLines(body, start, end)}
		if b.End <= b.Start {
			return false
		}
		fenceInfo(body, &b)
		return b.Closed
	case *ast.HTMLBlock:
		if n.HTMLBlockType >= ast.HTMLBlockType6 || n.HasClosure() {
			return true
		}
		// Closed on its first line, it has no closure: its last line
		// holds the end condition iff it is closed.
		if n.Pos() < 0 {
			return false
		}
		start := lineStart(body, base+n.Pos())
		stop := trimBlankLines(body, start, end)
		if stop <= start {
			return false
		}
		last := body[lineStart(body, stop-1):stop]
		switch n.HTMLBlockType {
		case ast.HTMLBlockType1:
			l := bytes.ToLower(last)
			return bytes.Contains(l, []byte("</script>")) || bytes.Contains(l, []byte("</pre>")) ||
				bytes.Contains(l, []byte("</style>")) || bytes.Contains(l, []byte("</textarea>"))
		case ast.HTMLBlockType2:
			return bytes.Contains(last, []byte("-->"))
		case ast.HTMLBlockType3:
			return bytes.Contains(last, []byte("?>"))
		case ast.HTMLBlockType4:
			return bytes.Contains(last, []byte(">"))
		case ast.HTMLBlockType5:
			return bytes.Contains(last, []byte("]]>"))
		}
		return false
	case *mathBlock:
		return n.closed
	}
	return true
}

// appendBlocks appends the top-level blocks of doc, the parse of
// body[base:end], to blocks, shifted by off (the front matter's length).
func appendBlocks(blocks []Block, body []byte, base, end int, doc ast.Node, off int) []Block {
	if blocks == nil {
		blocks = make([]Block, 0, doc.ChildCount()+4)
	}
	prevStart := -1
	var prevNode ast.Node
	prev := base
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		p := n.Pos()
		if p < 0 {
			if n.Lines().Len() > 0 {
				p = n.Lines().At(0).Start
			} else {
				p = prev - base
			}
		}
		p = max(lineStart(body, base+p), prev)
		if prevNode != nil {
			blocks = appendNode(blocks, body, prevNode, prevStart, p, off)
		}
		prevNode, prevStart, prev = n, p, p
	}
	if prevNode != nil {
		blocks = appendNode(blocks, body, prevNode, prevStart, end, off)
	}
	return blocks
}

// appendNode appends the block of the top-level node n, which spans
// body[start:stop] with the blank lines that follow it.
func appendNode(blocks []Block, body []byte, n ast.Node, start, stop, off int) []Block {
	kind, level := Paragraph, 0
	switch n.Kind() {
	case ast.KindHeading:
		kind, level = Heading, n.(*ast.Heading).Level
	case ast.KindFencedCodeBlock:
		kind = FencedCode
	case ast.KindCodeBlock:
		kind = IndentedCode
	case ast.KindHTMLBlock:
		kind = HTML
	case ast.KindList:
		kind = List
	case ast.KindBlockquote:
		kind = Quote
	case ast.KindThematicBreak:
		kind = ThematicBreak
	case KindMathBlock:
		kind = Math
	}
	return appendBlock(blocks, body, kind, level, start, stop, off)
}

// appendBlock appends the top-level block of kind (a heading of level)
// that spans body[start:stop] with the blank lines that follow it, shifted
// by off; a paragraph holding a table becomes the table (and the
// paragraph lines before it). Both scanners, goldmark's and the fast one,
// report their blocks through it.
func appendBlock(blocks []Block, body []byte, kind Kind, level, start, stop, off int) []Block {
	stop = trimBlankLines(body, start, stop)
	if stop <= start {
		return blocks
	}
	b := Block{Kind: kind, Start: start, End: stop, BodyStart: start, BodyEnd: stop}
	switch kind {
	case Heading:
		b.Level = level
		b.Title, b.Setext = headingTitle(body[start:stop])
	case FencedCode:
		fenceInfo(body, &b)
	case Math:
		if first := lineEnd(body, start); first < stop {
			b.BodyStart, b.BodyEnd = first, lineStart(body, stop-1)
		}
	case Paragraph:
		if split := splitTable(body, &b); split != nil {
			split.shift(off)
			blocks = append(blocks, *split)
		}
	}
	b.shift(off)
	return append(blocks, b)
}

func (b *Block) shift(d int) {
	if d == 0 {
		return
	}
	b.Start += d
	b.End += d
	b.BodyStart += d
	b.BodyEnd += d
}

// frontMatterEnd returns the end of leading front matter, or 0.
func frontMatterEnd(src []byte) int {
	var delim []byte
	switch {
	case bytes.HasPrefix(src, []byte("---")):
		delim = []byte("---")
	case bytes.HasPrefix(src, []byte("+++")):
		delim = []byte("+++")
	default:
		return 0
	}
	first := lineEnd(src, 0)
	if !isDelimLine(src[:first], delim) || first == len(src) {
		return 0
	}
	for i := first; i < len(src); {
		e := lineEnd(src, i)
		if isDelimLine(src[i:e], delim) {
			return e
		}
		i = e
	}
	return 0
}

// isDelimLine reports whether line is delim and optional blanks.
func isDelimLine(line, delim []byte) bool {
	return bytes.HasPrefix(line, delim) && isBlank(line[len(delim):])
}

// lineStart returns the offset of the start of the line holding src[p].
func lineStart(src []byte, p int) int {
	p = min(p, len(src))
	if i := bytes.LastIndexByte(src[:p], '\n'); i >= 0 {
		return i + 1
	}
	return 0
}

// lineEnd returns the offset just past the line break of the line holding
// src[p], or len(src).
func lineEnd(src []byte, p int) int {
	if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
		return p + i + 1
	}
	return len(src)
}

// isBlank reports whether a line holds only spaces, tabs and line breaks.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// trimBlankLines returns end moved back over the trailing blank lines of
// src[start:end] (start is a line start).
func trimBlankLines(src []byte, start, end int) int {
	for end > start {
		i := end - 1
		if src[i] == '\n' { // the last line's break
			i--
		}
		for i >= start && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
			i--
		}
		if i >= start && src[i] != '\n' {
			return end // the last line holds more than spaces
		}
		end = i + 1 // a blank last line
	}
	return start
}

// headingTitle returns the title of a top-level heading block's text.
func headingTitle(blk []byte) (string, bool) {
	first := lineEnd(blk, 0)
	line := bytes.Trim(blk[:first], " \t\r\n")
	if len(line) > 0 && line[0] == '#' && first == len(blk) || len(line) > 0 && line[0] == '#' && isATX(line) {
		i := 0
		for i < len(line) && line[i] == '#' {
			i++
		}
		t := bytes.Trim(line[i:], " \t")
		j := len(t) // a closing sequence of #s
		for j > 0 && t[j-1] == '#' {
			j--
		}
		if j == 0 {
			t = t[:0]
		} else if j < len(t) && (t[j-1] == ' ' || t[j-1] == '\t') {
			t = bytes.TrimRight(t[:j], " \t")
		}
		return string(t), false
	}
	// Setext: every line but the underline, trimmed, joined by spaces.
	var sb []byte
	for i := 0; i < len(blk); {
		e := lineEnd(blk, i)
		if e == len(blk) {
			break // the underline
		}
		if l := bytes.Trim(blk[i:e], " \t\r\n"); len(l) > 0 {
			if len(sb) > 0 {
				sb = append(sb, ' ')
			}
			sb = append(sb, l...)
		}
		i = e
	}
	return string(sb), true
}

// isATX reports whether a trimmed line opens an ATX heading.
func isATX(line []byte) bool {
	i := 0
	for i < len(line) && line[i] == '#' {
		i++
	}
	return i >= 1 && i <= 6 && (i == len(line) || line[i] == ' ' || line[i] == '\t')
}

// fenceInfo fills the fence fields of a top-level fenced code block.
func fenceInfo(src []byte, b *Block) {
	first := lineEnd(src, b.Start)
	line := src[b.Start:first]
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i < len(line) {
		b.FenceChar = line[i]
	}
	n := 0
	for i+n < len(line) && line[i+n] == b.FenceChar {
		n++
	}
	b.FenceLen = n
	b.BodyStart, b.BodyEnd = first, b.End
	if first >= b.End {
		return
	}
	last := lineStart(src, b.End-1)
	l := bytes.TrimLeft(src[last:b.End], " ")
	if b.End-last-len(l) < 4 {
		k := 0
		for k < len(l) && l[k] == b.FenceChar {
			k++
		}
		if k >= b.FenceLen && isBlank(l[k:]) {
			b.BodyEnd, b.Closed = last, true
		}
	}
}
