package mdblocks

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// goldmarkScan scans src with goldmark alone, in one parse: the
// specification the fast scanner is held to.
func goldmarkScan(src []byte) []Block {
	sc := defaultScanner()
	sc.goldmarkOnly, sc.segmentSize = true, len(src)+1
	blocks, _ := sc.scan(src)
	return blocks
}

// checkFast checks that the fast scanner, with its hand-overs to goldmark,
// gives the blocks of goldmark's one parse of src, in segments of several
// sizes.
func checkFast(t testing.TB, src []byte) {
	t.Helper()
	want := fmt.Sprint(goldmarkScan(src))
	for _, size := range []int{SegmentSize, 64, 1} {
		sc := defaultScanner()
		sc.segmentSize = size
		if got, _ := sc.scan(src); fmt.Sprint(got) != want {
			t.Fatalf("fast scan(%q, segments of %d) =\n%v\ngoldmark:\n%v", src, size, got, want)
		}
	}
}

// fastCases are inputs at the edges of what the fast scanner decides
// itself: each rule it copies from goldmark, and each line it must hand
// over.
var fastCases = []string{
	// ATX headings, and lines that are not.
	"a\n# b\n", "a\n#b\n", "a\n####### b\n", "a\n    # b\n", "#\n", "#", "# \r\n", "#\rx\n", "#\tx\n",
	"   # x\n", "    # x\n", "## x ##\ny\n", "#5 bolt\n\ntext\n",
	// Code fences: info strings, lengths, indentation, closing lines.
	"a\n```\nb\n```\n", "a\n``` `x\nb\n", "```a`b\nx\n", "``` \n", "```", "``` x", "```x`", "````\n```\n````\n",
	"~~~\n```\n~~~\n", "~~~ a`b\nx\n~~~\n", "   ```\nx\n   ```\n", "    ```\nx\n", "```\n    ```\n", "```\n   ```\t\r\n",
	"```\n```x\n```\n", "``\nx\n``\n", "a\n``\nb\n", "```\n\n\n", "```\nx\n\n\n# h\n",
	// Setext underlines, thematic breaks and list markers after a paragraph.
	"a\n---\n", "a\n===\n", "a\n= =\n", "a\n***\n", "a\n___\n", "a\n- b\n", "a\n-b\n", "a\n1. b\n", "a\n2. b\n", "a\n1.\n",
	"a\n-\n", "a\n- \n", "a\n-\r\n", "a\n*\tb\n", "a\n+ b\n", "a\n--|--\n", "a\n__init__\n", "a\n*em*\n",
	"a\n   ---\n", "a\n    ---\n", "a\n\t---\n",
	// Block quotes, HTML and math after a paragraph.
	"a\n> b\n", "a\n<div>\n", "a\n<b>x</b>\n", "a\n$$\nx\n$$\n", "a\n$$x$$\n", "a\n$x$\n", "a\n\\[\nx\n\\]\n",
	"a\n\\begin{x}\ny\n\\end{x}\n", "a\n\\emph{x}\n",
	// Indented code.
	"    code\n\n    more\n  x\n", "\tcode\n", "  \tcode\n", " \t code\n", "    code\n\n\n", "    \n    x\n",
	"a\n    b\n", "    a\n\n\n    b\n\nc\n", "    a\n# h\n",
	// Block starts.
	"***\n", "* * *\n", "_ _ _\n", "- - -\n", "--\n", "**\n", "__init__\n", "-foo\n", "+ a\n", "+a\n", "*a*\n",
	"1) a\n", "1234567890. a\n", "2024. year\n", "1.5 x\n", "1.\n", "1.\tx\n", "=\n", "==\n\n--\n",
	"$x$\n", "$$\n", "\\x\n", "\\[x\\]\n",
	// Containers and open blocks across the cuts where goldmark hands back.
	"- a\n\nb\n", "- a\n\n  b\n\nc\n", "- a\n\n- b\n\nc\n", "> a\n\nb\n", "> a\nb\n\nc\n", "<div>\n\nx\n",
	"<!--\n\nx\n\n-->\ny\n", "<!--\n\nx\n", "<pre>\n\nx\n</pre>\n", "<?\n\nx\n\n?>\n", "<![CDATA[\n\nx\n\n]]>\n",
	"$$\n\nx\n\n$$\ny\n", "- ```\n\nx\n\n```\n", "> ```\n\nx\n\n```\n", "\\begin{a}\n\nx\n\n\\end{a}\n",
	"- a\n\n[x]: /y\n", "1. a\n\n2. b\n\nc\n", "-\n\nfoo\n", "- a\n  ```\n\nb\n  ```\n", "<div>\n```\n\nx\n\n```\n",
	"- a\n\n\tb\n\nc\n", "> a\n>\n> b\n\nc\n",
	// HTML blocks of every type, opened and ended.
	"<div>\nx\n\ny\n", "a\n<div>\nb\n", "a\n<span>\nb\n", "<span>\nx\n\ny\n", "<a href=\"x\">\nb\n\nc\n",
	"<!-- x -->\ny\n", "<!-- x\ny -->\nz\n", "<!-- x -->", "<?x?>\ny\n", "<!X\ny>\nz\n", "<![CDATA[x]]>\ny\n",
	"<script>\nx\n</script>\ny\n", "<pre>x</pre>\ny\n", "<PRE>\nx\n</pRe>\ny\n", "<style>\n</ſtyle>\nx\n",
	"<img src=x>\n![a](b)\n", "</div>\nx\n", "<div\nx\n", "<x-y z='1'/>\n\nq\n", "< div>\nx\n", "<>\n",
	"a\n<!-- x\n\ny -->\n", "- a\n\n<div>\nb\n", "> a\n<div>\n",
	// Lists and block quotes the fast scanner reads, and those it hands over.
	"- a\n- b\n", "- a\n* b\n", "1. a\n2) b\n", "1. a\n1. b\n\n\n  c\nd\n", "- a\nb\n", "- a\n# b\n", "- a\n```\nb\n```\n",
	"- a\n  - b\n    -\n\n  c\n", "- a\n\n  -\n\n  b\n", "- a\n- - -\n", "- a\n-\n", "-    a\n     b\n", "-\ta\n  b\n",
	"10.  a\n    b\n", "- a\n    b\n", "a\n1) b\n", "a\n01. b\n", "a\n+ b\n", "a\n- \n", "a\n2) b\n",
	"- a\n  -\n\n  b\n", "- a\n  -\n  b\n\nc\n", "- a\n  - \n  x\n\n  y\n", "- a\n  * \n\n  x\n", "- a\n  > -\n  >\n  x\n",
	"- a\n***\n", "- a\n---\n", "- a\n===\n", "- a\n> b\n", "- a\n<div>\n", "- a\n<span>\n", "- a\n<x>\n", "- ```\n<span>\n",
	"> a\n- b\n", "> a\n1. b\n", "> a\n2. b\n", "> a\n---\n", "> a\n<div>\n", "> a\n<span>\n", "> ```\n<span>\n", "> - a\n- b\n",
	"> a\n> b\n", "> a\nb\n", "> a\n# b\n", "> a\n\n> b\n", ">\n ", "a\n>\n ", "> ```\n> a\nb\n",
	// Line ends and odd bytes.
	"\r\n", "a\r\n\r\nb", "a\r\n===\r\n", "\f\n", "a\n\f\nb\n", "\v# x\n", "x\n\n\x00\n", "a\rb\n\nc\n",
	// Tables.
	"a|b\n-|-\n1|2\n", "a|b\n--|--\n", "x\na | b\n--|--\n",
}

// deepCases are containers nested past MaxNesting, where goldmark reads
// the deeper markers as text, followed by lines whose place depends on it.
func deepCases() [][]byte {
	var out [][]byte
	for _, s := range staircases {
		deep := staircase(MaxNesting+8, s.cont, s.open)
		for _, tail := range []string{"text\n===\n", "text\n", "\ntext\n", "```\nx\n", "# h\n"} {
			out = append(out, append(deep[:len(deep):len(deep)], tail...))
		}
	}
	return out
}

func TestFastCases(t *testing.T) {
	for _, src := range deepCases() {
		checkFast(t, src)
	}
	for _, s := range fastCases {
		checkFast(t, []byte(s))
		// The same after a block the fast scanner reads, and before one.
		checkFast(t, []byte("# h\n\ntext\n"+s))
		checkFast(t, []byte(s+"\n\nend\n"))
	}
}

// FuzzFastScan compares the fast scanner's blocks with goldmark's one
// parse on every input. Seeds: fastCases and the chunker's golden inputs.
func FuzzFastScan(f *testing.F) {
	for _, s := range fastCases {
		f.Add([]byte(s))
	}
	for _, src := range deepCases() {
		f.Add(src)
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "..", "markdown", "testdata", "*.md"))
	for _, p := range goldens {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkFast(t, src)
	})
}

// TestFastCorpus checks the fast scanner against goldmark on a sample of
// ../shared/corpus/markdown (every tenth file; all with
// CHUNKSTREAM_TEST_FULL=1) and counts how much of it the fast scanner
// reads itself: the rest goes to goldmark.
func TestFastCorpus(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && (filepath.Ext(p) == ".md" || filepath.Ext(p) == ".mdx") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	step := 10
	if testutil.Enabled(testutil.Full) {
		step = 1
	}
	var st scanStats
	for i := 0; i < len(files); i += step {
		src, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		want := goldmarkScan(src)
		sc := defaultScanner()
		sc.stats = &st
		got, _ := sc.scan(src)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			first := firstDifference(src, got, want)
			t.Fatalf("%s: fast scan differs from goldmark's at %s", files[i], first)
		}
	}
	total := st.fast + st.goldmark
	if total == 0 {
		t.Fatal("no bytes scanned")
	}
	share := float64(st.fast) / float64(total)
	t.Logf("%d files, %d bytes: %.1f%% read by the fast scanner, %.1f%% parsed by goldmark", (len(files)+step-1)/step, total, 100*share, 100*(1-share))
	// The corpus is mostly headings, paragraphs and code: a fast scanner
	// that hands over much more than now has lost its use.
	if share < minFastShare {
		t.Errorf("the fast scanner read %.1f%% of the corpus, want at least %.0f%%", 100*share, 100*minFastShare)
	}
}

// minFastShare is the least share of the corpus the fast scanner reads.
const minFastShare = 0.85

// firstDifference describes the first block where got and want differ.
func firstDifference(src []byte, got, want []Block) string {
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			at := min(got[i].Start, want[i].Start)
			return fmt.Sprintf("block %d:\nfast     %+v\ngoldmark %+v\ntext: %q", i, got[i], want[i], src[at:min(len(src), at+300)])
		}
	}
	return fmt.Sprintf("block counts: fast %d, goldmark %d", len(got), len(want))
}

// TestFastWork checks that the fast scanner counts its work (the bytes of
// the lines it reads) where goldmark counts the lines it is handed.
func TestFastWork(t *testing.T) {
	src := bytes.Repeat([]byte("# h\n\nSome text.\nMore text.\n\n```\ncode\n```\n\n"), 1000)
	_, w := measure(defaultScanner(), src)
	if w.peeked < len(src)/2 || w.peeked > 2*len(src) {
		t.Errorf("work counted for %d bytes read by the fast scanner: %d, want about %d", len(src), w.peeked, len(src))
	}
}

// TestTrimBlankLines compares trimBlankLines with the line-by-line
// definition on every span of inputs mixing blank and other lines.
func TestTrimBlankLines(t *testing.T) {
	simple := func(src []byte, start, end int) int {
		for end > start {
			ls := max(lineStart(src, end-1), start)
			if !isBlank(src[ls:end]) {
				return end
			}
			end = ls
		}
		return start
	}
	for _, s := range []string{"", "\n", "a\n\n \n\t\r\n", " a \n  \n", "\r\n\r\n", "a\r", "x\n \n\ny", "\n\na", "a\n\n\n"} {
		src := []byte(s)
		for start := 0; start <= len(src); start++ {
			for end := start; end <= len(src); end++ {
				if got, want := trimBlankLines(src, start, end), simple(src, start, end); got != want {
					t.Errorf("trimBlankLines(%q, %d, %d) = %d, want %d", s, start, end, got, want)
				}
			}
		}
	}
}
