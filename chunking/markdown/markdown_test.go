package markdown_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// mustNew returns a chunker of DefaultConfig changed by set (nil: the
// defaults).
func mustNew(t testing.TB, set func(*markdown.Config)) *markdown.Chunker {
	t.Helper()
	cfg := markdown.DefaultConfig()
	if set != nil {
		set(&cfg)
	}
	c, err := markdown.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return c
}

// sizeOf returns what c's sizes count: characters, or tokens of its
// encoding.
func sizeOf(t testing.TB, c *markdown.Chunker) Size {
	t.Helper()
	size, err := SizeOf(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	return size
}

func chunk(t testing.TB, c *markdown.Chunker, doc chunking.Document) []chunking.Chunk {
	t.Helper()
	chunks, _, err := c.Chunk(doc)
	if err != nil {
		t.Fatalf("Chunk(%q): %v", doc.Content, err)
	}
	return chunks
}

func TestHelloWorldHash(t *testing.T) {
	chunks := chunk(t, mustNew(t, nil), chunking.Document{Content: []byte("Hello world")})
	if len(chunks) != 1 {
		t.Fatalf("Chunk(Hello world) = %d chunks, want 1", len(chunks))
	}
	const want = "f1cf36017b964e8158c0cb0414af8ab26af7438229af27ace253852aea5d7bea"
	if got := chunks[0].Hash(); got != want {
		t.Errorf("Chunk(Hello world) hash = %s, want %s (metadata %v)", got, want, chunks[0].Metadata())
	}
}

func TestSpecCases(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts func(*markdown.Config)
		want []string // "content|k=v,k=v" per chunk (index and file left out)
	}{
		{"empty", "", nil, nil},
		{"whitespace", " \n\t \n", nil, nil},
		{"one chunk", "# Title\nIntro para.\n\n## Setup\nInstall it.\n\n### Linux\nRun apt.\n\n## Usage\nUse it.", nil,
			[]string{"# Title\nIntro para.\n\n## Setup\nInstall it.\n\n### Linux\nRun apt.\n\n## Usage\nUse it.|h1=Title,h2=Setup,h3=Linux"}},
		{"header only joined", "# A\n## B\n## C\ntext", func(c *markdown.Config) { c.MinChar = 1 },
			[]string{"# A\n## B|h1=A,h2=B", "## C\ntext|h1=A,h2=C"}},
		{"setext", "Title\n=====\ntext", nil, []string{"Title\n=====\ntext|h1=Title"}},
		{"no space, h4", "#NoSpace\n\n#### Deep\n\nx", func(c *markdown.Config) { c.MinChar = 1 }, []string{"#NoSpace\n\n#### Deep\n\nx|"}},
		{"front matter", "---\ntitle: Foo\n---\n# A\nx", nil, []string{"---\ntitle: Foo\n---\n\n# A\nx|h1=A"}},
		{"preamble fused", "Preamble\n# A\nbody", nil, []string{"Preamble\n\n# A\nbody|h1=A"}},
		{"fuse 31 not", strings.Repeat("x", 9) + "\n\n# " + strings.Repeat("y", 18), func(c *markdown.Config) { c.MinChar = 10; c.MaxChar = 30; c.ChunkOverlap = 0 },
			[]string{strings.Repeat("x", 9) + "|", "# " + strings.Repeat("y", 18) + "|h1=" + strings.Repeat("y", 18)}},
		{"fuse 30", strings.Repeat("x", 9) + "\n\n# " + strings.Repeat("y", 17), func(c *markdown.Config) { c.MinChar = 10; c.MaxChar = 30; c.ChunkOverlap = 0 },
			[]string{strings.Repeat("x", 9) + "\n\n# " + strings.Repeat("y", 17) + "|h1=" + strings.Repeat("y", 17)}},
		{"fuse first wins", "# A\n" + strings.Repeat("x", 21) + "\n# B\nyy\n# C\nzz", func(c *markdown.Config) { c.MinChar = 10; c.MaxChar = 30; c.ChunkOverlap = 0 },
			[]string{"# A\n" + strings.Repeat("x", 21) + "|h1=A", "# B\nyy\n\n# C\nzz|h1=B"}},
		{"fenced hash", "```\n# not header\n    indented\n```", nil, []string{"```\n# not header\n    indented\n```|"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustNew(t, tt.opts)
			chunks := chunk(t, c, chunking.Document{Content: []byte(tt.src)})
			var got []string
			for _, ch := range chunks {
				var kv []string
				for _, f := range ch.Metadata() {
					if strings.HasPrefix(f.Key, "h") {
						kv = append(kv, f.Key+"="+f.Value.(string))
					}
				}
				got = append(got, ch.Content()+"|"+strings.Join(kv, ","))
			}
			if strings.Join(got, "\n~~\n") != strings.Join(tt.want, "\n~~\n") {
				t.Errorf("Chunk(%q) =\n%q\nwant\n%q", tt.src, got, tt.want)
			}
			if err := CheckDocument(chunking.Document{Content: []byte(tt.src)}, chunks, c.Config()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		cfg    markdown.Config
		option string // "" = valid
	}{
		{markdown.DefaultConfig(), ""},
		{markdown.Config{MaxChar: 2048}, ""},
		{markdown.Config{MaxChar: 1}, ""},
		{markdown.Config{MaxChar: 100, ChunkOverlap: 128}, "chunk_overlap"},
		{markdown.Config{MaxChar: 100, ChunkOverlap: 100}, "chunk_overlap"},
		{markdown.Config{MaxChar: 2048, ChunkOverlap: -1}, "chunk_overlap"},
		{markdown.Config{}, "max_char"},
		{markdown.Config{MaxChar: -5}, "max_char"},
		{markdown.Config{MaxChar: 2048, MinChar: -1}, "min_char"},
	}
	for _, tt := range tests {
		verr := tt.cfg.Validate()
		_, err := markdown.New(tt.cfg)
		if fmt.Sprint(err) != fmt.Sprint(verr) {
			t.Errorf("New(%+v) = %v, Validate() = %v: want the same error", tt.cfg, err, verr)
		}
		if tt.option == "" {
			if err != nil {
				t.Errorf("New(%+v) = %v, want no error", tt.cfg, err)
			}
			continue
		}
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tt.option) {
			t.Errorf("New(%+v) = %v, want an ErrInvalidOptions naming %s", tt.cfg, err, tt.option)
		}
	}
}

func TestConfig(t *testing.T) {
	if got, want := markdown.DefaultConfig(), (markdown.Config{MinChar: 1024, MaxChar: 2048, ChunkOverlap: 128}); got != want {
		t.Errorf("DefaultConfig() = %+v, want the reference's %+v", got, want)
	}
	cfg := markdown.Config{MaxChar: 50}
	c := mustNew(t, func(c *markdown.Config) { *c = cfg })
	if got := c.Config(); got != cfg {
		t.Errorf("Config() = %+v, want %+v", got, cfg)
	}
	// Zero is a value: no overlap, no fusing.
	src := strings.Repeat("word ", 100)
	total := 0
	for _, ch := range chunk(t, c, chunking.Document{Content: []byte(src)}) {
		total += len(strings.Fields(ch.Content()))
	}
	if total != 100 {
		t.Errorf("overlap 0: %d words in the chunks, want exactly 100", total)
	}
}

func TestErrors(t *testing.T) {
	c := mustNew(t, nil)
	_, _, err := c.Chunk(chunking.Document{Path: "dir/bad.md", Content: []byte("ok\xff\xfe")})
	if !errors.Is(err, chunking.ErrNotUTF8) || !strings.Contains(err.Error(), "dir/bad.md") {
		t.Errorf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8 naming dir/bad.md", err)
	}
	_, _, err = c.Chunk(chunking.Document{Path: "x.eml", Format: "eml", Content: []byte("x")})
	if !errors.Is(err, chunking.ErrUnsupportedFormat) {
		t.Errorf("Chunk(format eml) = %v, want ErrUnsupportedFormat", err)
	}
}

func TestMDXSelection(t *testing.T) {
	c := mustNew(t, nil)
	src := []byte("import A from 'a'\n\n# T\ntext")
	for _, tt := range []struct {
		doc  chunking.Document
		mdx  bool
		name string
	}{
		{chunking.Document{Path: "a.mdx"}, true, "path"},
		{chunking.Document{Path: "a.MDX"}, true, "path upper"},
		{chunking.Document{Path: "a.md", Format: "mdx"}, true, "format"},
		{chunking.Document{Path: "a.mdx", Format: "markdown"}, false, "format wins"},
		{chunking.Document{Path: "a.md"}, false, "md"},
	} {
		tt.doc.Content = src
		chunks := chunk(t, c, tt.doc)
		cleaned := !strings.Contains(chunks[0].Content(), "import")
		if cleaned != tt.mdx {
			t.Errorf("%s: Chunk(%+v) cleaned = %v, want %v", tt.name, tt.doc.Path, cleaned, tt.mdx)
		}
	}
}

func TestCleanMDX(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a<!-- x -->b", "ab"},
		{"import X from 'y'\nimport {\n  A,\n  B,\n} from \"z\";\ntext", "text"},
		{"import is a word here\n", "import is a word here\n"},
		{"export const a = {\n  b: 1,\n}\n\nkeep", "\nkeep"},
		{"export default X\n# H", "# H"},
		{"<Wrapper>\n\n</Wrapper>x", "x"},
		{"<Note>kept</Note>", "<Note>kept</Note>"},
		{"<Widget a=\"b\" />x<br />", "x<br />"},
		{"a\n\n\n\n\nb", "a\n\nb"},
		{"```\n<!-- k -->\n\n\n\n<W />\n```\n<W />", "```\n<!-- k -->\n\n\n\n<W />\n```\n"},
		{"~~~\nimport X from 'y'\n", "~~~\nimport X from 'y'\n"},
		{"<A", "<A"},
		{"<A>\n</B>", "<A>\n</B>"},
	}
	for _, tt := range tests {
		if got := string(markdown.CleanMDX([]byte(tt.in))); got != tt.want {
			t.Errorf("CleanMDX(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if err := checkOffsetMap([]byte(tt.in)); err != nil {
			t.Errorf("CleanMDXMap(%q): %v", tt.in, err)
		}
	}
	// Each byte is mapped to its own place, runs and cuts alike.
	src := []byte("a<!-- x -->b\n\n\n\nc<W />d")
	clean, m := markdown.CleanMDXMap(src)
	if string(clean) != "ab\n\ncd" {
		t.Fatalf("CleanMDXMap(%q) = %q", src, clean)
	}
	for i, want := range []int{0, 11, 12, 13, 16, 22} {
		if got := m.Start(i); got != want {
			t.Errorf("Start(%d) = %d, want %d", i, got, want)
		}
	}
	if got := m.End(2); got != 12 {
		t.Errorf("End(2) = %d, want 12 (just after the b)", got)
	}
}

// checkOffsetMap checks CleanMDXMap on src: the same text as CleanMDX,
// every cleaned byte mapped to an equal source byte, in increasing order,
// and End(i+1) = Start(i)+1.
func checkOffsetMap(src []byte) error {
	clean, m := markdown.CleanMDXMap(src)
	if want := markdown.CleanMDX(src); !bytes.Equal(clean, want) {
		return fmt.Errorf("text %q, CleanMDX gives %q", clean, want)
	}
	prev := -1
	for i := range clean {
		o := m.Start(i)
		if o <= prev || o >= len(src) || src[o] != clean[i] {
			return fmt.Errorf("cleaned byte %d (%q) mapped to %d (after %d)", i, clean[i], o, prev)
		}
		if e := m.End(i + 1); e != o+1 {
			return fmt.Errorf("End(%d) = %d, want %d", i+1, e, o+1)
		}
		prev = o
	}
	return nil
}

// FuzzCleanMDX holds checkOffsetMap on any input.
func FuzzCleanMDX(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Input)
	}
	f.Add([]byte("a<!-- x -->b\n\n\n\nc<W />d\nimport X from 'y'\nexport const a = 1\n\n<A>\n</A>"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if err := checkOffsetMap(src); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMetadataOrderAndExtras(t *testing.T) {
	c := mustNew(t, func(c *markdown.Config) { c.MaxChar = 40; c.ChunkOverlap = 0 })
	src := "# A\n\n```" + strings.Repeat("x", 50) + "\ncode\n```"
	extra := chunking.Metadata{{Key: "source", Value: "s"}, {Key: "index", Value: "caller"}}
	chunks, warns, err := c.Chunk(chunking.Document{Path: "d/x.md", Content: []byte(src), Metadata: extra})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, ch := range chunks {
		keys = append(keys, strings.Join(ch.Metadata().Keys(), ","))
	}
	want := []string{"h1,index,file,source", "h1,index,file,oversize,source"}
	if strings.Join(keys, ";") != strings.Join(want, ";") {
		t.Errorf("metadata keys = %q, want %q", keys, want)
	}
	if v := chunks[1].Get("index", nil); v != "caller" {
		t.Errorf("extras must win on a clash: index = %v", v)
	}
	if len(warns) != 1 || warns[0].File != "d/x.md" || warns[0].Line != 3 {
		t.Errorf("warnings = %v, want one oversize warning at d/x.md:3", warns)
	}
}

func TestChunkFileAndFolder(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.md", "# B\nb")
	write("a/x.md", "# AX\nx")
	write("c/x.mdx", "import Y from 'y'\n\n# CX\ny")
	write(".hidden/h.md", "# H\nh")
	write("a/.h.md", "# H\nh")
	write("notes.txt", "text")
	write("table.csv", "a,b")
	write("bad.md", "\xff")
	write("bad\xffname.md", "# N\nn") // a name chunk metadata "file" cannot hold
	c := mustNew(t, nil)
	ctx := context.Background()

	chunks, _, err := c.ChunkFile(ctx, filepath.Join(dir, "a", "..", "a", "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chunks[0].Get("file", nil), filepath.ToSlash(filepath.Join(dir, "a", "x.md")); got != want {
		t.Errorf("ChunkFile file = %v, want %v", got, want)
	}
	if _, _, err := c.ChunkFile(ctx, filepath.Join(dir, "missing.md")); err == nil {
		t.Error("ChunkFile(missing) = nil error")
	}

	chunks, warns, err := c.ChunkFolder(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, ch := range chunks {
		files = append(files, ch.Get("file", "").(string))
	}
	if got, want := strings.Join(files, " "), "a/x.md b.md c/x.mdx notes.txt"; got != want {
		t.Errorf("ChunkFolder files = %q, want %q", got, want)
	}
	if strings.Contains(chunks[2].Content(), "import") {
		t.Errorf("ChunkFolder: .mdx not cleaned: %q", chunks[2].Content())
	}
	if len(warns) != 2 || warns[0].File != "bad.md" || !strings.Contains(warns[0].Text, "UTF-8") ||
		warns[1].File != "bad\uFFFDname.md" || warns[1].Text != `"bad\xffname.md": file name is not valid UTF-8` {
		t.Errorf("ChunkFolder warnings = %q, want one for bad.md, one for bad\\xffname.md", warns)
	}
	if _, _, err := c.ChunkFile(ctx, filepath.Join(dir, "bad\xffname.md")); !errors.Is(err, chunking.ErrBadName) {
		t.Errorf("ChunkFile(bad name) = %v, want ErrBadName", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.ChunkFolder(cctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("ChunkFolder(cancelled) = %v, want context.Canceled", err)
	}
}

// TestConcurrent uses one Chunker from many goroutines (run with -race)
// and expects the same output as a sequential run.
func TestConcurrent(t *testing.T) {
	cases := loadCases(t)
	c := mustNew(t, func(c *markdown.Config) { c.MaxChar = 100; c.MinChar = 20; c.ChunkOverlap = 30 })
	want := make([][]chunking.Chunk, len(cases))
	for i, tc := range cases {
		want[i], _, _ = c.Chunk(chunking.Document{Path: tc.Name, Content: tc.Input})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(cases))
	for range 8 {
		wg.Go(func() {
			for i, tc := range cases {
				got, _, _ := c.Chunk(chunking.Document{Path: tc.Name, Content: tc.Input})
				if err := Equal(want[i], got); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// allocBytes returns the bytes one Chunk call allocates: a measure of its
// work that does not flake like wall-clock time.
func allocBytes(c *markdown.Chunker, src []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _ = c.Chunk(chunking.Document{Content: src})
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// adversarial inputs of about n units each.
var adversarial = map[string]func(n int) []byte{
	"nested lists":   func(n int) []byte { return []byte(strings.Repeat("- ", n) + "x\n") },
	"nested quotes":  func(n int) []byte { return []byte(strings.Repeat("> ", n) + "x\n") },
	"unclosed fence": func(n int) []byte { return append([]byte("```\n"), bytes.Repeat([]byte("code line\n\n"), n)...) },
	"single line":    func(n int) []byte { return bytes.Repeat([]byte("word "), n) },
	"one huge word":  func(n int) []byte { return bytes.Repeat([]byte("x"), 5*n) },
	"nul bytes":      func(n int) []byte { return bytes.Repeat([]byte("\x00 \x00\n"), n) },
	"many headers":   func(n int) []byte { return bytes.Repeat([]byte("# h\n"), n) },
	"unclosed math":  func(n int) []byte { return bytes.Repeat([]byte("$$\nx\n\n"), n) },
	"huge fence line": func(n int) []byte {
		return []byte("```" + strings.Repeat("x", 3*n) + "\n" + strings.Repeat("y\n", n) + "```\n")
	},
	"table rows": func(n int) []byte {
		return append([]byte("| a | b |\n|---|---|\n"), bytes.Repeat([]byte("| 1 | 2 |\n"), n)...)
	},
	"mdx tags":      func(n int) []byte { return bytes.Repeat([]byte("<A <B x "), n) },
	"sentence ends": func(n int) []byte { return bytes.Repeat([]byte("a. "), 2*n) },
}

// raceEnabled is set by race_test.go under the race detector.
var raceEnabled bool

// TestBadInputLinear: adversarial inputs never panic and keep the
// invariants; multiplying them by 8 about multiplies the work by 8,
// counted as the work the chunker counts (the bytes its loops look at)
// and as bytes allocated, never as time: quadratic work would cost 64×;
// the bounds are 10× and 12×. The block parse (mdblocks) has its own
// linearity tests. Timing lives in BenchmarkAdversarial.
func TestBadInputLinear(t *testing.T) {
	c := mustNew(t, func(c *markdown.Config) { *c = markdown.Config{MaxChar: 200, MinChar: 50, ChunkOverlap: 40} })
	for name, gen := range adversarial {
		t.Run(name, func(t *testing.T) {
			n := 1250 // 5,000 with CHUNKSTREAM_TEST_FULL=1
			if testutil.Enabled(testutil.Full) {
				n = 5000
			}
			small, large := gen(n), gen(8*n)
			for _, src := range [][]byte{small, large} {
				chunks, _, err := c.Chunk(chunking.Document{Content: src})
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckDocument(chunking.Document{Content: src}, chunks, c.Config()); err != nil {
					t.Fatal(err)
				}
			}
			ws, wl := markdown.Work(c, small), markdown.Work(c, large)
			if ws < len(small) || wl > 10*ws {
				t.Errorf("%s: work %d for %d bytes of input, %d for %d: super-linear", name, ws, len(small), wl, len(large))
			}
			a, b := allocBytes(c, small), allocBytes(c, large)
			if b > 12*a+1<<20 {
				t.Errorf("%s: %d bytes allocated for %d bytes of input, %d for %d: super-linear", name, a, len(small), b, len(large))
			}
		})
	}
}

// TestHugeLine chunks a 50 MB single line (under the race detector, a
// long form: only with CHUNKSTREAM_TEST_FULL=1).
func TestHugeLine(t *testing.T) {
	if testing.Short() || raceEnabled && !testutil.Enabled(testutil.Full) {
		t.Skip("50 MB input, slow under the race detector: CHUNKSTREAM_TEST_FULL=1 runs it")
	}
	src := bytes.Repeat([]byte("lorem ipsum dolor sit amet. "), 50<<20/28)
	c := mustNew(t, nil)
	chunks, _, err := c.Chunk(chunking.Document{Content: src})
	if err != nil {
		t.Fatal(err)
	}
	maxChar := c.Config().MaxChar
	if err := Check(src[:0], chunks, c.Config()); err != nil {
		t.Fatal(err)
	}
	if len(chunks) < len(src)/maxChar {
		t.Errorf("50 MB line: %d chunks, want at least %d", len(chunks), len(src)/maxChar)
	}
}

func TestChunkFunc(t *testing.T) {
	c := mustNew(t, func(c *markdown.Config) { c.MaxChar = 120; c.MinChar = 40; c.ChunkOverlap = 30 })
	for _, tc := range loadCases(t) {
		doc := chunking.Document{Path: tc.Name, Content: tc.Input, Metadata: tc.Metadata}
		want, wantWarns, err := c.Chunk(doc)
		if err != nil {
			t.Fatal(err)
		}
		var got []chunking.Chunk
		warns, err := c.ChunkFunc(context.Background(), doc, func(ch chunking.Chunk) bool { got = append(got, ch); return true })
		if err != nil {
			t.Fatal(err)
		}
		if err := Equal(want, got); err != nil || len(warns) != len(wantWarns) {
			t.Errorf("ChunkFunc(%s) differs from Chunk: %v (warnings %d, want %d)", tc.Name, err, len(warns), len(wantWarns))
		}
		if len(want) > 1 {
			n := 0
			_, _ = c.ChunkFunc(context.Background(), doc, func(chunking.Chunk) bool { n++; return false })
			if n != 1 {
				t.Errorf("ChunkFunc(%s) went on after yield returned false: %d calls", tc.Name, n)
			}
		}
	}
	if _, err := c.ChunkFunc(context.Background(), chunking.Document{Path: "x.md", Content: []byte{0xff}}, func(chunking.Chunk) bool { return true }); !errors.Is(err, chunking.ErrNotUTF8) {
		t.Errorf("ChunkFunc(invalid UTF-8) = %v, want ErrNotUTF8", err)
	}
}

// TestChunkFuncStops ends the context at a quarter, half and three
// quarters of the work on large inputs (poll.EndAfter, no timing): the
// chunker returns an error wrapping context.Canceled and unwinds at once
// once it sees the end (a few calls to the poller, not one per step),
// whatever phase it is in (blocks, cutting a long section at sentences
// or spaces, packing, re-wrapping a long code block).
func TestChunkFuncStops(t *testing.T) {
	c := mustNew(t, func(c *markdown.Config) { *c = markdown.Config{MaxChar: 200, MinChar: 50, ChunkOverlap: 40} })
	scale := 1 // a quarter of the sizes; all of them with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		scale = 4
	}
	inputs := map[string][]byte{
		"document": bytes.Repeat([]byte("## Part\n\nSome text with `code` and *emphasis*. More words here.\n\n```go\nfunc f() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"), 1000*scale),
	}
	for name, gen := range adversarial {
		inputs[name] = gen(10000 * scale)
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			total := markdown.Work(c, src)
			if total < 4*poll.Every {
				t.Fatalf("%d units of work: too little to stop within", total)
			}
			for _, q := range []int{1, 2, 3} {
				pl := poll.EndAfter(total * q / 4)
				_, err := markdown.Polled(c, src, pl)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("ended at %d/4 of the work: err = %v, want context.Canceled", q, err)
				}
				if pl.CallsAfterEnd() > 8 {
					t.Errorf("ended at %d/4 of the work: %d more steps after the end, want at most 8", q, pl.CallsAfterEnd())
				}
			}
		})
	}
	// A context that has ended before the call: no chunk, its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	_, err := c.ChunkFunc(ctx, chunking.Document{Path: "a.md", Content: inputs["document"]}, func(chunking.Chunk) bool { n++; return true })
	if !errors.Is(err, context.Canceled) || n != 0 || !strings.Contains(err.Error(), "a.md") {
		t.Errorf("ChunkFunc(ended context) = %d chunks, %v; want none and context.Canceled naming a.md", n, err)
	}
	// Ended while a chunk is handed out: no further chunk.
	ctx, cancel = context.WithCancel(context.Background())
	n = 0
	_, err = c.ChunkFunc(ctx, chunking.Document{Content: inputs["document"]}, func(chunking.Chunk) bool { n++; cancel(); return true })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("ChunkFunc(cancelled in yield) = %d chunks, %v; want 1 and context.Canceled", n, err)
	}
}
