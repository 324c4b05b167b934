package mdblocks

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// span is a block as the tests describe it: kind, text and the fields that
// matter for that kind.
type span struct {
	kind  Kind
	text  string
	level int
	title string
	body  string // src[BodyStart:BodyEnd] for code, math, tables
}

func describe(src []byte, blocks []Block) []span {
	var out []span
	for _, b := range blocks {
		s := span{kind: b.Kind, text: string(src[b.Start:b.End]), level: b.Level, title: b.Title}
		if b.Kind.Atomic() {
			s.body = string(src[b.BodyStart:b.BodyEnd])
		}
		out = append(out, s)
	}
	return out
}

// checkBlocks holds the scanner's invariants: spans in order, within
// bounds, line-aligned, not overlapping, only blank lines between them,
// body within the block.
func checkBlocks(t testing.TB, src []byte, blocks []Block) {
	t.Helper()
	prev := 0
	if bytes.HasPrefix(src, bom) {
		prev = len(bom)
	}
	for i, b := range blocks {
		if b.Start < prev || b.End > len(src) || b.Start >= b.End {
			t.Fatalf("block %d (%s) span [%d,%d) out of order or bounds (prev end %d, len %d)", i, b.Kind, b.Start, b.End, prev, len(src))
		}
		if b.Start > 0 && src[b.Start-1] != '\n' && !(b.Start == len(bom) && bytes.HasPrefix(src, bom)) {
			t.Fatalf("block %d (%s) starts mid-line at %d", i, b.Kind, b.Start)
		}
		if b.End < len(src) && src[b.End-1] != '\n' {
			t.Fatalf("block %d (%s) ends mid-line at %d", i, b.Kind, b.End)
		}
		if b.BodyStart < b.Start || b.BodyEnd > b.End || b.BodyStart > b.BodyEnd {
			t.Fatalf("block %d (%s) body [%d,%d) outside [%d,%d)", i, b.Kind, b.BodyStart, b.BodyEnd, b.Start, b.End)
		}
		if !isBlank(src[prev:b.Start]) {
			t.Fatalf("non-blank text %q between blocks before block %d", src[prev:b.Start], i)
		}
		if isBlank(src[b.Start:b.End]) {
			t.Fatalf("block %d (%s) is blank", i, b.Kind)
		}
		prev = b.End
	}
	if !isBlank(src[prev:]) {
		t.Fatalf("non-blank text %q after the last block", src[prev:])
	}
}

// checkSegmented checks that parsing src in tiny segments gives the same
// blocks as one parse.
func checkSegmented(t testing.TB, src []byte, want []Block) {
	t.Helper()
	for _, size := range []int{1, 16, 64} {
		if got, _ := scan(src, size); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("scan(%q, segments of %d) =\n%v\nwant (one parse)\n%v", src, size, got, want)
		}
	}
}

// TestSegmentedLarge cuts documents made of many sections, with open
// blocks (fences, HTML comments, math) across candidate cuts.
func TestSegmentedLarge(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "# Section %d\n\ntext %d\n\n", i, i)
		switch i % 5 {
		case 0:
			b.WriteString("```\ncode\n\n# not a heading\n\n```\n\n")
		case 1:
			b.WriteString("<!--\n\n# in a comment\n\n-->\n\n")
		case 2:
			b.WriteString("$$\na\n\n# in math\n\n$$\n\n")
		case 3:
			b.WriteString("- list\n\n  more\n\n")
		case 4:
			b.WriteString("````\nopen across the next heading\n\n# not a heading\n\n````\n\n")
		}
	}
	src := []byte(b.String())
	want, n := scan(src, len(src)+1)
	if n != 1 {
		t.Fatalf("scan(one segment) parsed %d segments", n)
	}
	checkBlocks(t, src, want)
	for _, size := range []int{1, 10, 100, 1000} {
		got, n := scan(src, size)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("scan(segments of %d) differs from one parse", size)
		}
		if min := len(src) / (3 * max(size, 60)); n < min {
			t.Errorf("scan(segments of %d) parsed %d segments, want at least %d", size, n, min)
		}
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []span
	}{
		{"empty", "", nil},
		{"blank", " \n\n\t\n", nil},
		{"paragraph", "Hello\nworld\n\n\nNext", []span{
			{kind: Paragraph, text: "Hello\nworld\n"}, {kind: Paragraph, text: "Next"}}},
		{"atx", "# Title\n## Sub ##\n### C#\n#### x \\#\n#NoSpace\n####### seven", []span{
			{kind: Heading, text: "# Title\n", level: 1, title: "Title"},
			{kind: Heading, text: "## Sub ##\n", level: 2, title: "Sub"},
			{kind: Heading, text: "### C#\n", level: 3, title: "C#"},
			{kind: Heading, text: "#### x \\#\n", level: 4, title: "x \\#"},
			{kind: Paragraph, text: "#NoSpace\n####### seven"}}},
		{"atx empty and markup", "#\n# *em* `code` #####   \n", []span{
			{kind: Heading, text: "#\n", level: 1, title: ""},
			{kind: Heading, text: "# *em* `code` #####   \n", level: 1, title: "*em* `code`"}}},
		{"setext", "Title\n=====\ntext\n\nTwo\n  lines\n---\n", []span{
			{kind: Heading, text: "Title\n=====\n", level: 1, title: "Title"},
			{kind: Paragraph, text: "text\n"},
			{kind: Heading, text: "Two\n  lines\n---\n", level: 2, title: "Two lines"}}},
		{"crlf", "# A\r\n\r\nText\r\nmore\r\n\r\nB\r\n==\r\n", []span{
			{kind: Heading, text: "# A\r\n", level: 1, title: "A"},
			{kind: Paragraph, text: "Text\r\nmore\r\n"},
			{kind: Heading, text: "B\r\n==\r\n", level: 1, title: "B"}}},
		{"front matter yaml", "---\ntitle: Foo\n---\n# A\nx", []span{
			{kind: FrontMatter, text: "---\ntitle: Foo\n---\n"},
			{kind: Heading, text: "# A\n", level: 1, title: "A"},
			{kind: Paragraph, text: "x"}}},
		{"front matter toml crlf", "+++\r\ntitle = 'x'\r\n+++  \r\nbody\r\n", []span{
			{kind: FrontMatter, text: "+++\r\ntitle = 'x'\r\n+++  \r\n"},
			{kind: Paragraph, text: "body\r\n"}}},
		{"no front matter unclosed", "---\ntitle: Foo\n", []span{
			{kind: ThematicBreak, text: "---\n"},
			{kind: Paragraph, text: "title: Foo\n"}}},
		{"front matter not at start", "\n---\na: b\n---\n", []span{
			{kind: ThematicBreak, text: "---\n"},
			{kind: Heading, text: "a: b\n---\n", level: 2, title: "a: b"}}},
		{"fenced code", "```go\n# not header\n    indented\n\n```\nafter", []span{
			{kind: FencedCode, text: "```go\n# not header\n    indented\n\n```\n", body: "# not header\n    indented\n\n"},
			{kind: Paragraph, text: "after"}}},
		{"fence longer close", "~~~~\nx\n~~~\n~~~~~\n", []span{
			{kind: FencedCode, text: "~~~~\nx\n~~~\n~~~~~\n", body: "x\n~~~\n"}}},
		{"unclosed fence", "```\ncode\n\n# in code\n\n", []span{
			{kind: FencedCode, text: "```\ncode\n\n# in code\n", body: "code\n\n# in code\n"}}},
		{"indented code", "    # code\n\n    more\n\ntext", []span{
			{kind: IndentedCode, text: "    # code\n\n    more\n"}, {kind: Paragraph, text: "text"}}},
		{"table", "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\nx", []span{
			{kind: Table, text: "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n", body: "| 1 | 2 |\n| 3 | 4 |\n"},
			{kind: Paragraph, text: "x"}}},
		{"table without pipes, last row no newline", "a | b\n--|--\n1 | 2", []span{
			{kind: Table, text: "a | b\n--|--\n1 | 2", body: "1 | 2"}}},
		{"table after paragraph lines", "intro\na | b\n--|--\n", []span{
			{kind: Paragraph, text: "intro\n"},
			{kind: Table, text: "a | b\n--|--\n", body: ""}}},
		{"delimiter read as list (documented)", "a | b\n- | -\n", []span{
			{kind: Paragraph, text: "a | b\n"}, {kind: List, text: "- | -\n"}}},
		{"table pipes in code", "| `a|b` | c |\n|---|---|\n| `x|y` | z |\n", []span{
			{kind: Table, text: "| `a|b` | c |\n|---|---|\n| `x|y` | z |\n", body: "| `x|y` | z |\n"}}},
		{"not a table: cell count", "| a | b |\n|---|\n", []span{
			{kind: Paragraph, text: "| a | b |\n|---|\n"}}},
		{"math dollars blank line", "text\n$$\na\n\nb\n$$\nafter", []span{
			{kind: Paragraph, text: "text\n"},
			{kind: Math, text: "$$\na\n\nb\n$$\n", body: "a\n\nb\n"},
			{kind: Paragraph, text: "after"}}},
		{"math one line", "$$x = 1$$\n", []span{{kind: Math, text: "$$x = 1$$\n", body: "$$x = 1$$\n"}}},
		{"math inline not block", "$$x$$ and text\n", []span{{kind: Paragraph, text: "$$x$$ and text\n"}}},
		{"math unclosed", "$$\na\n\nb\n", []span{{kind: Paragraph, text: "$$\na\n"}, {kind: Paragraph, text: "b\n"}}},
		{"escaped brackets not math", "\\[Optional\\] drop tables\n\n# H\n\ntext \\]\n", []span{
			{kind: Paragraph, text: "\\[Optional\\] drop tables\n"},
			{kind: Heading, text: "# H\n", level: 1, title: "H"},
			{kind: Paragraph, text: "text \\]\n"}}},
		{"math bracket", "\\[\na\n\n\\]\n", []span{{kind: Math, text: "\\[\na\n\n\\]\n", body: "a\n\n"}}},
		{"math env nested", "\\begin{align}\n\\begin{align}\n\n\\end{align}\n\n\\end{align}\nz", []span{
			{kind: Math, text: "\\begin{align}\n\\begin{align}\n\n\\end{align}\n\n\\end{align}\n", body: "\\begin{align}\n\n\\end{align}\n\n"},
			{kind: Paragraph, text: "z"}}},
		{"math env unbalanced", "\\begin{a}\n\\begin{a}\nx\n\\end{a}\n", []span{
			{kind: Paragraph, text: "\\begin{a}\n"},
			{kind: Math, text: "\\begin{a}\nx\n\\end{a}\n", body: "x\n"}}},
		{"html", "<div>\n# not\n</div>\n\ntext", []span{
			{kind: HTML, text: "<div>\n# not\n</div>\n"}, {kind: Paragraph, text: "text"}}},
		{"list", "- a\n  # h\n- b\n\n  c\n\n> # q\n> more\nlazy\n", []span{
			{kind: List, text: "- a\n  # h\n- b\n\n  c\n"},
			{kind: Quote, text: "> # q\n> more\nlazy\n"}}},
		{"thematic", "***\n- - -\n", []span{{kind: ThematicBreak, text: "***\n"}, {kind: ThematicBreak, text: "- - -\n"}}},
		{"byte-order mark", "\uFEFF---\na: b\n---\n# T\n", []span{
			{kind: FrontMatter, text: "---\na: b\n---\n"},
			{kind: Heading, text: "# T\n", level: 1, title: "T"}}},
		{"nul and invalid utf8", "a\x00b\n\n\xff\xfe\n", []span{{kind: Paragraph, text: "a\x00b\n"}, {kind: Paragraph, text: "\xff\xfe\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := []byte(tt.src)
			blocks := Scan(src)
			checkBlocks(t, src, blocks)
			checkSegmented(t, src, blocks)
			got := describe(src, blocks)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Scan(%q) =\n%+v\nwant\n%+v", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseOnly(t *testing.T) {
	if n := ParseOnly([]byte("# a\n\nb\n")); n != 2 {
		t.Errorf("ParseOnly = %d blocks, want 2", n)
	}
}

// work is what a scan costs, counted rather than timed: the bytes of the
// lines goldmark's block parsers were handed, and the bytes allocated.
type work struct{ peeked, alloc int }

// measure scans src with sc and returns its blocks and its work.
func measure(sc scanner, src []byte) ([]Block, work) {
	var w work
	sc.peeked = &w.peeked
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	blocks, _ := sc.scan(src)
	runtime.ReadMemStats(&after)
	w.alloc = int(after.TotalAlloc - before.TotalAlloc)
	return blocks, w
}

// raceEnabled is set by race_test.go under the race detector.
var raceEnabled bool

// adversarial are inputs that cost a naive parser quadratic time, as
// functions of a size n.
var adversarial = []struct {
	name        string
	gen         func(n int) []byte
	segmentSize int // 0: SegmentSize
}{
	{"nested lists", func(n int) []byte { return []byte(strings.Repeat("- ", n) + "x\n") }, 0},
	{"nested ordered", func(n int) []byte { return []byte(strings.Repeat("1. ", n) + "x\n") }, 0},
	{"nested quotes", func(n int) []byte { return []byte(strings.Repeat("> ", n) + "x\n") }, 0},
	{"quote lines", func(n int) []byte { return bytes.Repeat([]byte(">>>>>>>>>> x\n"), n) }, 0},
	{"deep quote lines", func(n int) []byte { return bytes.Repeat([]byte(strings.Repeat(">", 100)+" x\n"), n/10) }, 0},
	{"unclosed $$", func(n int) []byte { return bytes.Repeat([]byte("$$\nx\n\n"), n) }, 0},
	{"unclosed begin", func(n int) []byte { return bytes.Repeat([]byte("\\begin{a}\nx\n\n"), n) }, 0},
	{"unclosed fence", func(n int) []byte { return append([]byte("```\n"), bytes.Repeat([]byte("x\n\n"), n)...) }, 0},
	{"table rows", func(n int) []byte { return append([]byte("a|b\n-|-\n"), bytes.Repeat([]byte("1|2\n"), n)...) }, 0},
	{"backticks", func(n int) []byte { return []byte(strings.Repeat("`|", n) + "\n" + strings.Repeat("-|", n) + "-\n") }, 0},
	{"long line", func(n int) []byte { return bytes.Repeat([]byte("word "), n) }, 0},
	{"open blocks at cuts", func(n int) []byte { return bytes.Repeat([]byte("# h\n\n````\n\n# x\n\n"), n) }, 1 << 10},
	{"open blocks at cuts, one segment", func(n int) []byte { return bytes.Repeat([]byte("# h\n\n````\n\n# x\n\n"), n) }, 0},
}

// TestLinear multiplies adversarial inputs by 8 and checks that the work
// grows about 8×: linear work grows 8×, quadratic 64×. Both counts are
// exact, so the bounds need no room for a busy machine: 10× for the lines
// goldmark is handed, 16× for allocation (whose bytes per input byte
// settle only at larger sizes: growing buffers, per-document set-up).
func TestLinear(t *testing.T) {
	for _, tt := range adversarial {
		t.Run(tt.name, func(t *testing.T) {
			const n = 5000
			sc := defaultScanner()
			if tt.segmentSize > 0 {
				sc.segmentSize = tt.segmentSize
			}
			small, large := tt.gen(n), tt.gen(8*n)
			blocks, a := measure(sc, small)
			checkBlocks(t, small, blocks)
			blocks, b := measure(sc, large)
			checkBlocks(t, large, blocks)
			if b.peeked > 10*a.peeked+1<<12 {
				t.Errorf("goldmark was handed %d bytes of lines for %d bytes and %d for %d: super-linear", a.peeked, len(small), b.peeked, len(large))
			}
			if b.alloc > 16*a.alloc+1<<16 {
				t.Errorf("Scan allocated %d bytes for %d bytes and %d for %d: super-linear", a.alloc, len(small), b.alloc, len(large))
			}
		})
	}
}

// staircase returns a container nested depth deep over depth lines: line
// i continues the i containers above it (cont(j) for each level j) and
// opens one more (open(i)).
func staircase(depth int, cont, open func(level int) string) []byte {
	var b, prefix bytes.Buffer
	for i := range depth {
		b.Write(prefix.Bytes())
		b.WriteString(open(i))
		fmt.Fprintf(&b, "level %d\n", i+1)
		prefix.WriteString(cont(i))
	}
	return b.Bytes()
}

func always(s string) func(int) string { return func(int) string { return s } }

// staircases are the nested containers of TestNestingWork.
var staircases = []struct {
	name       string
	cont, open func(level int) string
}{
	{"list", always("  "), always("- ")},
	{"ordered", always("   "), always("1. ")},
	{"tabs", always("\t"), always("- ")},
	{"quotes", always("> "), always("> ")},
	{"lists in quotes", func(i int) string { return [2]string{"  ", "> "}[i%2] }, func(i int) string { return [2]string{"- ", "> "}[i%2] }},
}

// maxPeekedPerByte bounds the bytes of lines goldmark is handed per byte
// of a nested document: each line is handed to every open container
// (a list and its item per level, at most MaxNesting levels), about twice.
const maxPeekedPerByte = 4*MaxNesting + 8

// TestNestingWork nests lists and quotes over many lines, each line one
// level deeper (the input grows with the square of the depth). Without a
// bound every line is scanned once for each open container, so the work
// per byte grows with the depth (the whole parse as depth³); with it the
// work per byte is bounded and flat. The bound is goldmark's, so goldmark
// parses alone here (the fast scanner reads such lists line by line).
func TestNestingWork(t *testing.T) {
	gm := defaultScanner()
	gm.goldmarkOnly = true
	for i, s := range staircases {
		// The list (the first) is nested 200 to 2,400 deep, the others
		// less, as they are slower to parse.
		depths := []int{200, 400, 800, 1200, 1600, 2400}
		if i > 0 {
			depths = []int{150, 300, 600, 1200}
		}
		if testing.Short() || raceEnabled {
			depths = []int{100, 200, 400}
		}
		t.Run(s.name, func(t *testing.T) {
			perByte := map[int]float64{}
			allocPerByte := map[int]float64{}
			for _, d := range depths {
				src := staircase(d, s.cont, s.open)
				blocks, w := measure(gm, src)
				checkBlocks(t, src, blocks)
				if len(blocks) != 1 || blocks[0].End != len(src) {
					t.Fatalf("depth %d: %d blocks, want one container spanning the document", d, len(blocks))
				}
				perByte[d] = float64(w.peeked) / float64(len(src))
				allocPerByte[d] = float64(w.alloc) / float64(len(src))
				t.Logf("depth %d: %d bytes, %.1f bytes of lines handed to goldmark and %.1f allocated per byte", d, len(src), perByte[d], allocPerByte[d])
				if perByte[d] > maxPeekedPerByte {
					t.Errorf("depth %d: goldmark was handed %.1f bytes of lines per byte, want at most %d", d, perByte[d], maxPeekedPerByte)
				}
			}
			// Doubling the depth quadruples the input: the work per byte
			// stays flat where the unbounded parse's doubles.
			hi, lo := depths[len(depths)-1], depths[len(depths)-1]/2
			if r := perByte[hi] / perByte[lo]; r > 1.25 {
				t.Errorf("work per byte at depth %d is %.2f× that at depth %d, want at most 1.25× (linear)", hi, r, lo)
			}
			if r := allocPerByte[hi] / allocPerByte[lo]; r > 1.25 {
				t.Errorf("allocation per byte at depth %d is %.2f× that at depth %d, want at most 1.25× (linear)", hi, r, lo)
			}
		})
	}
}

// TestNestingWorkUnbounded shows that the work count sees the cubic case:
// without the bound, a list 300 deep already costs more per byte than
// maxPeekedPerByte allows.
func TestNestingWorkUnbounded(t *testing.T) {
	sc := defaultScanner()
	sc.goldmarkOnly, sc.parser = true, newBlockParser(math.MaxInt)
	src := staircase(300, always("  "), always("- "))
	_, w := measure(sc, src)
	if perByte := float64(w.peeked) / float64(len(src)); perByte < 2*maxPeekedPerByte {
		t.Errorf("unbounded parse of a list 300 deep: %.1f bytes of lines per byte, want over %d: the count does not see the nesting", perByte, 2*maxPeekedPerByte)
	}
}

// nestingDepth returns the deepest nesting of lists and block quotes in
// the parse of src's body (after a byte-order mark and front matter, as
// Scan parses it) without a bound.
func nestingDepth(src []byte) int {
	src = bytes.TrimPrefix(src, bom)
	src = src[frontMatterEnd(src):]
	doc := newBlockParser(math.MaxInt).Parse(text.NewReader(src))
	deepest := 0
	var walk func(n ast.Node, d int)
	walk = func(n ast.Node, d int) {
		if n.Kind() == ast.KindList || n.Kind() == ast.KindBlockquote {
			d++
			deepest = max(deepest, d)
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c, d)
		}
	}
	walk(doc, 0)
	return deepest
}

// checkBound checks that a scan bounded to maxNesting equals the unbounded
// scan when src is nested at most maxNesting deep, and keeps the scanner's
// invariants when it is nested deeper. It returns src's nesting depth.
func checkBound(t testing.TB, src []byte, maxNesting int) int {
	t.Helper()
	bounded := defaultScanner()
	bounded.goldmarkOnly, bounded.parser = true, newBlockParser(maxNesting)
	got, _ := bounded.scan(src)
	checkBlocks(t, src, got)
	depth := nestingDepth(src)
	if depth > maxNesting {
		return depth
	}
	unbounded := defaultScanner()
	unbounded.goldmarkOnly, unbounded.parser = true, newBlockParser(math.MaxInt)
	if want, _ := unbounded.scan(src); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scan(%q) nested %d deep, bounded to %d:\n%v\nunbounded:\n%v", src, depth, maxNesting, got, want)
	}
	return depth
}

// TestNestingBound checks the bound on small nestings (bounds of 1 to 4
// stand for MaxNesting): documents within it scan as without it, deeper
// ones read the over-deep markers as text.
func TestNestingBound(t *testing.T) {
	docs := []string{
		"- a\n  - b\n    - c\n",
		"- a\n  - b\n    - c\n      - d\n",
		"> a\n> > b\n> > > c\n> > > > d\n",
		"- a\n  > b\n  > - c\n  >   > d\ntext\n===\n",
		"- a\n  - b\n    - c\n      - ```\ntext\n===\n",
		"- a\n  - b\n    - ```\ntext\n===\n",
		"1. a\n   1. b\n      1. c\n         1. d\n\n# h\n",
		"- - - - x\n- - - y\n",
		"> > > > # h\n> > >\n",
		"- a\n\n  - b\n\n    - c\n\n      - d\n\n        e\n",
		"- a\n  - b\n    -\n\n      - c\n",
	}
	for _, doc := range docs {
		for _, k := range []int{1, 2, 3, 4} {
			checkBound(t, []byte(doc), k)
		}
	}
	// Over the bound, the marker is text: a fence opened there does not
	// open, the next line is a lazy continuation, and the setext
	// underline is text too.
	src := []byte("- a\n  - b\n    - ```\ntext\n===\n")
	want := []span{{kind: List, text: string(src)}}
	sc := defaultScanner()
	sc.goldmarkOnly, sc.parser = true, newBlockParser(2)
	blocks, _ := sc.scan(src)
	if got := describe(src, blocks); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scan(%q) bounded to 2 = %+v, want %+v", src, got, want)
	}
	sc.parser = newBlockParser(3)
	blocks, _ = sc.scan(src)
	if got := describe(src, blocks); len(got) != 2 || got[1].kind != Heading {
		t.Errorf("scan(%q) bounded to 3 = %+v, want a list and a heading", src, got)
	}
}

func TestDeepNesting(t *testing.T) {
	for _, src := range [][]byte{
		[]byte(strings.Repeat("- ", 10000) + "x\n"),
		[]byte(strings.Repeat("> ", 10000) + "x\n"),
		[]byte(strings.Repeat(">", 10000) + "\n" + strings.Repeat(">", 10000) + " # h\n"),
	} {
		blocks := Scan(src)
		checkBlocks(t, src, blocks)
		if len(blocks) != 1 || blocks[0].Kind == Heading {
			t.Errorf("Scan(deep) = %d blocks, first %v; want one container", len(blocks), blocks[0].Kind)
		}
	}
}

// FuzzScan checks the scanner's invariants on any input, that segments
// change nothing, and that a bound on nesting (3 here, standing for
// MaxNesting) changes nothing for documents nested within it.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"# a\n", "---\na: b\n---\n", "```\nx\n", "| a |\n|---|\n", "$$\n\n$$\n", "\\begin{a}\n\\end{a}\n",
		"a\r\n===\r\n", "> - # x\n", "<!-- x\n\n-->\n", "    code\n", "+++\n+++\n",
		"# a\n\n```\n\n# b\n\n```\n\n# c\n", "x\n\n<pre>\n\n# in\n\n</pre>\n\n# out\n",
		"$$\n\n# m\n\n$$\n\n# n\n\\begin{a}\n\n# e\n\n\\end{a}\n", "- a\n\n# h\n\n> q\n\n# i\n",
		"- a\n  - b\n    - c\n      - ```\ntext\n===\n", "> a\n> > b\n> > > c\n> > > > d\nlazy\n",
	} {
		f.Add([]byte(s))
	}
	// Nested deeper than MaxNesting, one level a line.
	for _, s := range staircases {
		f.Add(append(staircase(MaxNesting+8, s.cont, s.open), "text\n===\n"...))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		blocks := Scan(src)
		checkBlocks(t, src, blocks)
		checkSegmented(t, src, blocks)
		checkBound(t, src, 3)
		for _, b := range blocks {
			if b.Kind == Heading && (b.Level < 1 || b.Level > 6) {
				t.Fatalf("heading level %d", b.Level)
			}
		}
	})
}

// BenchmarkScanAdversarial scans TestLinear's inputs at 8 × 25,000.
func BenchmarkScanAdversarial(b *testing.B) {
	for _, tt := range adversarial {
		src := tt.gen(200000)
		sc := defaultScanner()
		if tt.segmentSize > 0 {
			sc.segmentSize = tt.segmentSize
		}
		b.Run(strings.ReplaceAll(tt.name, " ", "-"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				sc.scan(src)
			}
		})
	}
}

// BenchmarkNesting scans lists nested 800, 1,600 and 2,400 deep, one level
// a line, with the bound and without it (as goldmark parses them: about
// depth³). The unbounded runs take seconds to a minute each: run with
// -benchtime 1x, e.g.
//
//	go test -run '^$' -bench Nesting -benchtime 1x ./chunking/internal/mdblocks
func BenchmarkNesting(b *testing.B) {
	for _, d := range []int{800, 1600, 2400} {
		src := staircase(d, always("  "), always("- "))
		for _, bound := range []int{MaxNesting, math.MaxInt} {
			name := fmt.Sprintf("depth-%d/bounded", d)
			if bound == math.MaxInt {
				name = fmt.Sprintf("depth-%d/unbounded", d)
			}
			sc := defaultScanner()
			sc.goldmarkOnly, sc.parser = true, newBlockParser(bound)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					sc.scan(src)
				}
			})
		}
	}
}

func TestScanFunc(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "# Section %d\n\ntext %d\n\n```\ncode\n\n# no\n```\n\n", i, i)
	}
	src := []byte(b.String())
	want := Scan(src)
	var got []Block
	ScanFuncPolled(src, new(poll.Poller), func(b Block) bool { got = append(got, b); return true })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ScanFunc differs from Scan: %d blocks, want %d", len(got), len(want))
	}
	n := 0
	ScanFuncPolled(src, new(poll.Poller), func(Block) bool { n++; return n < 5 })
	if n != 5 {
		t.Errorf("ScanFunc did not stop when yield returned false: %d calls", n)
	}
}

// TestScanPolledStops ends the context part-way through the scan of one
// segment (a list nested 600 deep, 1,200 with CHUNKSTREAM_TEST_FULL=1, has
// no cut, so it is one segment; read by the fast scanner, and by goldmark
// after an HTML block) and
// checks that the parse stops within a bounded amount of work after the
// end, that nothing of the stopped segment is yielded, and that a Poller
// that never ends gives Scan's blocks.
func TestScanPolledStops(t *testing.T) {
	depth := 600 // 1,200 with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		depth = 1200
	}
	list := staircase(depth, always("  "), always("- "))
	for name, src := range map[string][]byte{
		"fast":     list,
		"goldmark": append([]byte("<!-- what follows is goldmark's, up to a cut -->\n"), list...),
	} {
		t.Run(name, func(t *testing.T) { checkPolledStops(t, src) })
	}
}

// checkPolledStops is TestScanPolledStops on one document.
func checkPolledStops(t *testing.T, src []byte) {
	if got, want := ScanPolled(src, &poll.Poller{}), Scan(src); !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanPolled with a Poller that never ends = %d blocks, want Scan's %d", len(got), len(want))
	}
	full := poll.EndAfter(1 << 62)
	ScanPolled(src, full)
	for _, frac := range []int{4, 2} {
		end := full.Work() / frac
		pl := poll.EndAfter(end)
		yielded := 0
		ScanFuncPolled(src, pl, func(Block) bool { yielded++; return true })
		if !pl.Stopped() {
			t.Fatalf("end after %d of %d units: the scan did not stop", end, full.Work())
		}
		if yielded != 0 {
			t.Errorf("end after %d units: %d blocks of the stopped segment yielded, want 0", end, yielded)
		}
		// One look per poll.Every units, plus one line's work (bounded by
		// the nesting bound) before the next look.
		if over := pl.Work() - end; over > poll.Every+longestLine(src)*(4*MaxNesting+8) {
			t.Errorf("end after %d units: the parse went on for %d more", end, over)
		}
		if got := ScanPolled(src, poll.EndAfter(end)); got != nil {
			t.Errorf("ScanPolled after its context ended = %d blocks, want nil", len(got))
		}
	}
}

func longestLine(src []byte) int {
	n := 0
	for line := range bytes.Lines(src) {
		n = max(n, len(line))
	}
	return n
}

// scan is Scan with a given segment size; it also returns the number of
// segments parsed.
func scan(src []byte, segmentSize int) ([]Block, int) {
	sc := defaultScanner()
	sc.segmentSize = segmentSize
	return sc.scan(src)
}

func TestListItemAt(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"- a", true}, {"  * a", true}, {"+\tb", true}, {"1. a", true}, {"123456789) a", true},
		{"1234567890. a", false}, {"-a", false}, {"1.a", false}, {"a - b", false}, {"", false}, {"-", false}, {"12", false},
	} {
		if got := ListItemAt(tc.line, 0); got != tc.want || ListItemAt([]byte(tc.line), 0) != tc.want {
			t.Errorf("ListItemAt(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
