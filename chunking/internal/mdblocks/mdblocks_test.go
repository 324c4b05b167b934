package mdblocks

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

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

// allocBytes returns the bytes Scan allocates for src: a measure of its
// work that does not flake like wall-clock time.
func allocBytes(src []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Scan(src)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLinear doubles adversarial inputs and checks that the work grows
// linearly, not quadratically.
func TestLinear(t *testing.T) {
	gens := map[string]func(n int) []byte{
		"nested lists":   func(n int) []byte { return []byte(strings.Repeat("- ", n) + "x\n") },
		"nested quotes":  func(n int) []byte { return []byte(strings.Repeat("> ", n) + "x\n") },
		"quote lines":    func(n int) []byte { return bytes.Repeat([]byte(">>>>>>>>>> x\n"), n) },
		"unclosed $$":    func(n int) []byte { return bytes.Repeat([]byte("$$\nx\n\n"), n) },
		"unclosed begin": func(n int) []byte { return bytes.Repeat([]byte("\\begin{a}\nx\n\n"), n) },
		"unclosed fence": func(n int) []byte { return append([]byte("```\n"), bytes.Repeat([]byte("x\n\n"), n)...) },
		"table rows":     func(n int) []byte { return append([]byte("a|b\n-|-\n"), bytes.Repeat([]byte("1|2\n"), n)...) },
		"backticks":      func(n int) []byte { return []byte(strings.Repeat("`|", n) + "\n" + strings.Repeat("-|", n) + "-\n") },
		"long line":      func(n int) []byte { return bytes.Repeat([]byte("word "), n) },
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			const n = 5000
			small, large := gen(n), gen(2*n)
			checkBlocks(t, small, Scan(small))
			checkBlocks(t, large, Scan(large))
			a, b := allocBytes(small), allocBytes(large)
			if b > 3*a+1<<16 {
				t.Errorf("%s: Scan allocated %d bytes for %d bytes and %d for %d: super-linear", name, a, len(small), b, len(large))
			}
		})
	}
}

// raceEnabled is set by race_test.go under the race detector.
var raceEnabled bool

// minTime returns the least thread CPU time of three runs of Scan(src).
func minTime(src []byte) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1 << 62)
	for range 3 {
		start := testutil.ThreadCPU()
		Scan(src)
		best = min(best, testutil.ThreadCPU()-start)
	}
	return best
}

// TestLinearTime multiplies adversarial inputs by 8: linear work takes
// about 8× the CPU time, quadratic 64×. The bound (24×) leaves room for
// cache and GC effects; thread CPU time ignores other processes.
func TestLinearTime(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing (meaningless under the race detector)")
	}
	gens := map[string]func(n int) []byte{
		"nested lists":        func(n int) []byte { return []byte(strings.Repeat("- ", n) + "x\n") },
		"nested ordered":      func(n int) []byte { return []byte(strings.Repeat("1. ", n) + "x\n") },
		"nested quotes":       func(n int) []byte { return []byte(strings.Repeat("> ", n) + "x\n") },
		"deep quote lines":    func(n int) []byte { return bytes.Repeat([]byte(strings.Repeat(">", 100)+" x\n"), n/100) },
		"unclosed math":       func(n int) []byte { return bytes.Repeat([]byte("$$\nx\n\n"), n) },
		"unclosed envs":       func(n int) []byte { return bytes.Repeat([]byte("\\begin{a}\nx\n\n"), n) },
		"open blocks at cuts": func(n int) []byte { return bytes.Repeat([]byte("# h\n\n````\n\n# x\n\n"), n) },
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			const n = 25000
			small, large := gen(n), gen(8*n)
			a, b := minTime(small), minTime(large)
			if b > 24*a+20*time.Millisecond {
				t.Errorf("%s: Scan took %v for %d bytes and %v for %d: super-linear", name, a, len(small), b, len(large))
			}
		})
	}
}

func TestLimitNesting(t *testing.T) {
	normal := []byte("- a\n  - b\n> > > q\n1. x\n" + strings.Repeat("- ", MaxNesting) + "y\n" + strings.Repeat("- ", 40) + "\n")
	if got := limitNesting(normal); &got[0] != &normal[0] {
		t.Errorf("limitNesting changed a document within MaxNesting (or a thematic break): %q", got)
	}
	deep := []byte(strings.Repeat("> ", MaxNesting+5) + "x\n")
	got := limitNesting(deep)
	if len(got) != len(deep) || bytes.Equal(got, deep) || deep[0] != '>' {
		t.Errorf("limitNesting(deep) = %q", got)
	}
	if got[2*MaxNesting] != 'x' {
		t.Errorf("limitNesting(deep): marker %d = %q, want 'x'", MaxNesting+1, got[2*MaxNesting])
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

func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"# a\n", "---\na: b\n---\n", "```\nx\n", "| a |\n|---|\n", "$$\n\n$$\n", "\\begin{a}\n\\end{a}\n",
		"a\r\n===\r\n", "> - # x\n", "<!-- x\n\n-->\n", "    code\n", "+++\n+++\n",
		"# a\n\n```\n\n# b\n\n```\n\n# c\n", "x\n\n<pre>\n\n# in\n\n</pre>\n\n# out\n",
		"$$\n\n# m\n\n$$\n\n# n\n\\begin{a}\n\n# e\n\n\\end{a}\n", "- a\n\n# h\n\n> q\n\n# i\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		blocks := Scan(src)
		checkBlocks(t, src, blocks)
		checkSegmented(t, src, blocks)
		for _, b := range blocks {
			if b.Kind == Heading && (b.Level < 1 || b.Level > 6) {
				t.Fatalf("heading level %d", b.Level)
			}
		}
	})
}

func BenchmarkScanAdversarial(b *testing.B) {
	for name, src := range map[string][]byte{
		"nested-lists-10k":  []byte(strings.Repeat("- ", 10000) + "x\n"),
		"nested-quotes-10k": []byte(strings.Repeat("> ", 10000) + "x\n"),
		"unclosed-math":     bytes.Repeat([]byte("$$\nx\n\n"), 10000),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Scan(src)
			}
		})
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
	ScanFunc(src, func(b Block) bool { got = append(got, b); return true })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ScanFunc differs from Scan: %d blocks, want %d", len(got), len(want))
	}
	n := 0
	ScanFunc(src, func(Block) bool { n++; return n < 5 })
	if n != 5 {
		t.Errorf("ScanFunc did not stop when yield returned false: %d calls", n)
	}
}
