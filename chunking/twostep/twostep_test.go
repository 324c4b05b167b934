package twostep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tokens/tokenstest"
)

// mustNew returns a chunker of DefaultConfig changed by set (nil: the
// defaults).
func mustNew(t testing.TB, set func(*Config)) *Chunker {
	t.Helper()
	cfg := DefaultConfig()
	if set != nil {
		set(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return c
}

type want struct {
	content string
	headers []string
}

func headersOf(ch chunking.Chunk) []string {
	v, _ := ch.Metadata().Get("headers")
	var out []string
	for _, h := range v.([]any) {
		out = append(out, h.(string))
	}
	return out
}

// TestSpecCases holds the reference's documented cases and a few more, as explicit
// expectations.
func TestSpecCases(t *testing.T) {
	eleven := "Let " + strings.Join(func() []string {
		var s []string
		for i := range 12 {
			s = append(s, fmt.Sprintf("$a_%d$", i))
		}
		return s
	}(), ", ") + " hold. Next."
	tests := []struct {
		name string
		in   string
		opts func(*Config)
		want []want
	}{
		{"intro", "# Intro\nHello world.", nil, []want{{"# Intro\nHello world.", []string{"#Intro"}}}},
		{"merge on", "# A\nx\n## B\ny", nil, []want{{"# A\nx\n\n## B\ny", []string{"#A"}}}},
		{"merge off", "# A\nx\n## B\ny", func(c *Config) { c.MergeSmallChunks = false },
			[]want{{"# A\nx", []string{"#A"}}, {"## B\ny", []string{"#A", "##B"}}}},
		{"merge refused", "## B\ny\n# A\nx", nil, []want{{"## B\ny", []string{"##B"}}, {"# A\nx", []string{"#A"}}}},
		{"max 7", "The cat sat. The dog ran. The bird flew.", func(c *Config) { c.MaxChunkSize = 7 },
			[]want{{"The cat sat. The dog ran.", []string{}}, {"The bird flew.", []string{}}}},
		{"equation oversize", `Intro words here. \begin{equation} a + b = c + d + e \end{equation} Outro words here.`,
			func(c *Config) { c.MaxChunkSize = 5 },
			[]want{{"Intro words here.", []string{}}, {`\begin{equation} a + b = c + d + e \end{equation}`, []string{}}, {"Outro words here.", []string{}}}},
		{"fig one sentence", "See Fig. 3. The result holds.", func(c *Config) { c.MaxChunkSize = 3 },
			[]want{{"See Fig. 3. The result holds.", []string{}}}},
		{"eq paren", "See Eq. (4). It holds.", func(c *Config) { c.MaxChunkSize = 3 },
			[]want{{"See Eq. (4).", []string{}}, {"It holds.", []string{}}}},
		{"eleven maths", eleven, func(c *Config) { c.MaxChunkSize = 3 },
			[]want{{strings.TrimSuffix(eleven, " Next."), []string{}}, {"Next.", []string{}}}},
		{"split on 1,2", "# A\n### C\nt", func(c *Config) { c.HeadersToSplitOn = []int{1, 2} },
			[]want{{"# A\n### C\nt", []string{"#A"}}}},
		{"front matter", "---\ntitle: Foo\n---\n# A\nx", func(c *Config) { c.MergeSmallChunks = false },
			[]want{{"---\ntitle: Foo\n---", []string{}}, {"# A\nx", []string{"#A"}}}},
		{"header-only join", "# A\n## B\ntext", func(c *Config) { c.MergeSmallChunks = false },
			[]want{{"# A\n## B\ntext", []string{"#A", "##B"}}}},
		{"header-only not deeper", "## A\n# B\ntext", func(c *Config) { c.MergeSmallChunks = false },
			[]want{{"## A", []string{"##A"}}, {"# B\ntext", []string{"#B"}}}},
		{"code header not split", "```\n# not a header\n```\n# A\nx", func(c *Config) { c.MergeSmallChunks = false },
			[]want{{"```\n# not a header\n```", []string{}}, {"# A\nx", []string{"#A"}}}},
		{"add headers whole lines", "# Intro\nText.\n## Introduction\nMore.", func(c *Config) { c.MergeSmallChunks = false; c.AddHeaders = true },
			[]want{{"# Intro\nText.", []string{"#Intro"}}, {"# Intro\n## Introduction\nMore.", []string{"#Intro", "##Introduction"}}}},
		{"word overlap", "One two three. Four five six.", func(c *Config) { c.MaxChunkSize = 3; c.WordOverlap = 2 },
			[]want{{"One two three.", []string{}}, {"two three. Four five six.", []string{}}}},
		{"char overlap at word start", "One two three. Four five six.", func(c *Config) { c.MaxChunkSize = 3; c.ChunkOverlap = 9 },
			[]want{{"One two three.", []string{}}, {"three. Four five six.", []string{}}}},
		{"char overlap word too long", "One two three. Four five six.", func(c *Config) { c.MaxChunkSize = 3; c.ChunkOverlap = 5 },
			[]want{{"One two three.", []string{}}, {"Four five six.", []string{}}}},
		{"overlap then headers", "# H\nOne two. Three four.", func(c *Config) { c.MaxChunkSize = 2; c.WordOverlap = 1; c.AddHeaders = true },
			[]want{{"# H", []string{"#H"}}, {"# H\nH One two.", []string{"#H"}}, {"# H\ntwo. Three four.", []string{"#H"}}}},
		{"quoted heading kept with next", "One two three. Four five.\n> ### Head\n> Six seven.", func(c *Config) { c.MaxChunkSize = 8 },
			[]want{{"One two three. Four five.", []string{}}, {"> ### Head\n> Six seven.", []string{}}}},
		{"source whitespace kept", "Intro line.\n\n- a b.\n- c d.\n\nEnd now.", func(c *Config) { c.MaxChunkSize = 5 },
			[]want{{"Intro line.\n\n- a b.", []string{}}, {"- c d.\n\nEnd now.", []string{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.opts)
			chunks := checkInvariants(t, c, chunking.Document{Path: "x.md", Content: []byte(tt.in)})
			var got []want
			for _, ch := range chunks {
				h := headersOf(ch)
				if h == nil {
					h = []string{}
				}
				got = append(got, want{ch.Content(), h})
			}
			if !slices.EqualFunc(got, tt.want, func(a, b want) bool { return a.content == b.content && slices.Equal(a.headers, b.headers) }) {
				t.Errorf("Chunk(%q) =\n%q\nwant\n%q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		set  func(*Config)
		name string // parameter the error must name; "" = valid
	}{
		{nil, ""},
		{func(c *Config) { c.MaxChunkSize = 1 }, ""},
		{func(c *Config) { c.MaxChunkSize = 0 }, "max_chunk_size"},
		{func(c *Config) { c.MaxChunkSize = -3 }, "max_chunk_size"},
		{func(c *Config) { c.WordOverlap = -1 }, "word_overlap"},
		{func(c *Config) { c.WordOverlap = 512 }, "word_overlap"},
		{func(c *Config) { c.WordOverlap = 511 }, ""},
		{func(c *Config) { c.ChunkOverlap = -1 }, "chunk_overlap"},
		{func(c *Config) { c.ChunkOverlap = 100000 }, ""},
		{func(c *Config) { c.HeadersToSplitOn = []int{0} }, "headers_to_split_on"},
		{func(c *Config) { c.HeadersToSplitOn = []int{1, 7} }, "headers_to_split_on"},
		{func(c *Config) { c.HeadersToSplitOn = nil }, ""},
		{func(c *Config) { *c = Config{} }, "max_chunk_size"},
		{func(c *Config) { c.Tokenizer = "cl100k_base" }, ""},
		{func(c *Config) { c.Tokenizer = "o200k_base" }, ""},
		{func(c *Config) { c.Tokenizer = "r50k_base" }, "tokenizer"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		if tt.set != nil {
			tt.set(&cfg)
		}
		_, err := New(cfg)
		if verr := cfg.Validate(); fmt.Sprint(err) != fmt.Sprint(verr) {
			t.Errorf("New(%+v) = %v, Validate = %v: want the same error", cfg, err, verr)
		}
		if tt.name == "" {
			if err != nil {
				t.Errorf("New(%+v) = %v, want no error", cfg, err)
			}
			continue
		}
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions naming %s", cfg, err, tt.name)
		}
	}
}

func TestConfig(t *testing.T) {
	if got, want := fmt.Sprintf("%+v", DefaultConfig()), "{MaxChunkSize:512 ChunkOverlap:0 WordOverlap:0 AddHeaders:false MergeSmallChunks:true HeadersToSplitOn:[1 2 3 4 5 6] Tokenizer: TargetChar:0 TargetTokens:0}"; got != want {
		t.Errorf("DefaultConfig() = %s, want the reference's defaults %s", got, want)
	}
	levels := []int{3, 1, 3}
	c := mustNew(t, func(c *Config) { c.HeadersToSplitOn = levels; c.AddHeaders = true })
	levels[0] = 6 // the chunker keeps its own copy
	got := c.Config()
	if !slices.Equal(got.HeadersToSplitOn, []int{1, 3}) || !got.AddHeaders || got.MaxChunkSize != 512 {
		t.Errorf("Config() = %+v, want headers [1 3] and add_headers", got)
	}
	got.HeadersToSplitOn[0] = 2
	if c.Config().HeadersToSplitOn[0] != 1 {
		t.Error("Config() shares the chunker's levels")
	}
	if got := mustNew(t, func(c *Config) { c.Tokenizer = "o200k_base" }).Config().Tokenizer; got != "o200k_base" {
		t.Errorf("Config().Tokenizer = %q, want o200k_base", got)
	}
}

func TestMetadata(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 2 })
	doc := chunking.Document{
		Path:     "docs/a.mdx",
		Content:  []byte("# A\nOne two three four."),
		Metadata: chunking.Metadata{{Key: "source", Value: "s3"}, {Key: "index", Value: "theirs"}},
	}
	chunks := checkInvariants(t, c, doc)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	got := fmt.Sprint(chunks[1].Metadata())
	want := "[{headers [#A]} {index theirs} {file docs/a.mdx} {file_format mdx} {oversize true} {source s3}]"
	if got != want {
		t.Errorf("metadata = %s, want %s", got, want)
	}
	for _, tt := range []struct {
		path, format, want string
		err                error
	}{
		{"", "", "md", nil},
		{"a.markdown", "", "markdown", nil},
		{"a.txt", "", "txt", nil},
		{"", "text", "txt", nil},
		{"", "mdx", "mdx", nil},
		{"a.md", "eml", "", chunking.ErrUnsupportedFormat},
	} {
		chunks, _, err := c.Chunk(chunking.Document{Path: tt.path, Format: tt.format, Content: []byte("x")})
		if !errors.Is(err, tt.err) {
			t.Errorf("Chunk(%q, %q) error = %v, want %v", tt.path, tt.format, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		md := chunks[0].Metadata()
		if v, _ := md.Get("file_format"); v != tt.want {
			t.Errorf("Chunk(%q, %q) file_format = %v, want %s", tt.path, tt.format, v, tt.want)
		}
		if _, ok := md.Get("file"); ok != (tt.path != "") {
			t.Errorf("Chunk(%q) file present = %v", tt.path, ok)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	c := mustNew(t, nil)
	_, _, err := c.Chunk(chunking.Document{Path: "bad.md", Content: []byte("ok \xff\xfe bad")})
	if !errors.Is(err, chunking.ErrNotUTF8) || !strings.Contains(err.Error(), "bad.md") {
		t.Errorf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8 naming the file", err)
	}
}

// TestConcurrentChunk runs one chunker from many goroutines (run with
// -race).
func TestConcurrentChunk(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 4; c.WordOverlap = 1; c.AddHeaders = true })
	doc := chunking.Document{Path: "c.md", Content: []byte("# A\nOne two. Three $x$ four. Five six.\n## B\nSeven. Eight nine ten.")}
	want, _, _ := c.Chunk(doc)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, _, _ := c.Chunk(doc)
				if len(got) != len(want) || got[len(got)-1].Hash() != want[len(want)-1].Hash() {
					t.Error("concurrent Chunk differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

// badInputs are inputs built to find super-linear paths.
var badInputs = map[string]func(n int) string{
	"dollars":         func(n int) string { return strings.Repeat("$a $5 ", n) },
	"only dollars":    func(n int) string { return strings.Repeat("$", n) },
	"unclosed begins": func(n int) string { return strings.Repeat(`\begin{equation} x. `, n) },
	"nested begins":   func(n int) string { return strings.Repeat(`\begin{a}`, n) + strings.Repeat(`\end{a}`, n) },
	"no sentence end": func(n int) string { return strings.Repeat("word ", n) },
	"periods":         func(n int) string { return strings.Repeat("a. ", n) },
	"abbreviations":   func(n int) string { return strings.Repeat("Dr. e.g. Fig. 3. ", n) },
	"headers":         func(n int) string { return strings.Repeat("# h\n", n) },
	"table rows":      func(n int) string { return "a | b\n--|--\n" + strings.Repeat("1 | 2\n", n) },
	"fences":          func(n int) string { return strings.Repeat("```\nx\n", n) },
	"nested fences":   func(n int) string { return strings.Repeat("- a\n  ```\n  x\n", n) },
}

// work returns the work c counts chunking doc: the bytes its scans and
// loops look at (package poll), an operation count that does not flake
// like time.
func work(t testing.TB, c *Chunker, doc chunking.Document) int {
	t.Helper()
	pl := new(poll.Poller)
	if _, err := c.chunkPolled(pl, doc, func(chunking.Chunk) bool { return true }); err != nil {
		t.Fatal(err)
	}
	return pl.Work()
}

// TestBadInput checks inputs that must neither panic nor go super-linear:
// 8× the input may cost at most 10× the work (quadratic work costs 64×),
// from 5,000 units of input (20,000 with CHUNKSTREAM_TEST_FULL=1). The
// block parse (mdblocks) has its own linearity tests. Timing lives in
// BenchmarkAdversarial.
func TestBadInput(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 50 })
	n := 5000
	if testutil.Enabled(testutil.Full) {
		n = 20000
	}
	for name, gen := range badInputs {
		t.Run(name, func(t *testing.T) {
			checkInvariants(t, c, chunking.Document{Path: "bad.md", Content: []byte(gen(2000))})
			small := chunking.Document{Path: "bad.md", Content: []byte(gen(n))}
			large := chunking.Document{Path: "bad.md", Content: []byte(gen(8 * n))}
			ws, wl := work(t, c, small), work(t, c, large)
			if ws < len(small.Content) || wl > 10*ws {
				t.Errorf("%s: work %d for %d bytes of input, %d for %d: not linear", name, ws, len(small.Content), wl, len(large.Content))
			}
		})
	}
}

func TestTenMegabytesWithoutSentenceEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	c := mustNew(t, nil)
	src := []byte(strings.Repeat("word and $ more ", 10<<20/16))
	start := time.Now()
	chunks, _, err := c.Chunk(chunking.Document{Path: "big.md", Content: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 || chunks[0].Get("oversize", false) != true || chunks[0].Len() != len(src)-1 {
		t.Fatalf("got %d chunks, want one oversize chunk of the whole text", len(chunks))
	}
	t.Logf("10 MB without a sentence end: %v", time.Since(start))
}

// TestCorpus chunks a sample of the optional Markdown corpus (every 50th
// file; with CHUNKSTREAM_TEST_FULL=1 every file, every tenth under the race
// detector) with the invariants, under three option sets (the third in
// tokens).
func TestCorpus(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".mdx")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	chunkers := []*Chunker{
		mustNew(t, nil),
		mustNew(t, func(c *Config) {
			c.MaxChunkSize = 40
			c.WordOverlap = 5
			c.AddHeaders = true
			c.HeadersToSplitOn = []int{1, 2, 3}
		}),
		mustNew(t, func(c *Config) {
			c.MaxChunkSize = 64
			c.WordOverlap = 8
			c.AddHeaders = true
			c.Tokenizer = "cl100k_base"
		}),
	}
	stride := 50
	if testutil.Enabled(testutil.Full) {
		stride = 1
		if raceEnabled {
			stride = 10 // the race detector is ~10x slower: a sample
		}
	}
	for i, p := range files {
		if i%stride != 0 {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		doc := chunking.Document{Path: filepath.ToSlash(rel), Content: src}
		checkInvariants(t, chunkers[0], doc)
		if i%4 == 0 {
			checkInvariants(t, chunkers[1], doc)
		}
		if i%4 == 1 {
			checkInvariants(t, chunkers[2], doc)
		}
	}
	t.Logf("%d files", len(files))
}

func FuzzChunk(f *testing.F) {
	for _, in := range golden.Inputs(f, "testdata", goldenPatterns...) {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, uint8(6), uint8(1), uint8(0), uint8(0b11))
	}
	f.Add([]byte("$$\n$a $5 \\begin{x}\\begin{x}\\end{x}"), uint8(2), uint8(0), uint8(3), uint8(0))
	f.Add([]byte("a\xffb"), uint8(2), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, src []byte, max, wordOverlap, charOverlap, flags uint8) {
		c := mustNew(t, func(c *Config) {
			c.MaxChunkSize = int(max%64) + 1
			c.WordOverlap = int(wordOverlap) % (int(max%64) + 1)
			c.ChunkOverlap = int(charOverlap)
			c.AddHeaders = flags&1 != 0
			c.MergeSmallChunks = flags&2 != 0
			if flags&4 != 0 {
				c.HeadersToSplitOn = []int{1, 3}
			}
		})
		path := "f.md"
		if flags&8 != 0 {
			path = "f.txt"
		}
		checkInvariants(t, c, chunking.Document{Path: path, Content: src})
	})
}

// FuzzChunkTokens is FuzzChunk with sizes in tokens (cl100k_base, or
// o200k_base with flags bit 4).
func FuzzChunkTokens(f *testing.F) {
	for _, in := range golden.Inputs(f, "testdata", goldenPatterns...) {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, uint8(12), uint8(3), uint8(0), uint8(0b11))
	}
	f.Fuzz(func(t *testing.T, src []byte, max, wordOverlap, charOverlap, flags uint8) {
		c := mustNew(t, func(c *Config) {
			c.MaxChunkSize = int(max%64) + 1
			c.WordOverlap = int(wordOverlap) % (int(max%64) + 1)
			c.ChunkOverlap = int(charOverlap)
			c.AddHeaders = flags&1 != 0
			c.MergeSmallChunks = flags&2 != 0
			if flags&4 != 0 {
				c.HeadersToSplitOn = []int{1, 3}
			}
			c.Tokenizer = "cl100k_base"
			if flags&16 != 0 {
				c.Tokenizer = "o200k_base"
			}
		})
		path := "f.md"
		if flags&8 != 0 {
			path = "f.txt"
		}
		checkInvariants(t, c, chunking.Document{Path: path, Content: src})
	})
}

func TestUnclosedWarnings(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 3 })
	src := "Intro text here.\nUse `\\begin{document}` first. Then $\\begin{x}$ too.\n\nA \\begin{proof} opens. It never ends.\n\\begin{a} x \\end{a} closed."
	_, warns, err := c.Chunk(chunking.Document{Path: "w.md", Content: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Line != 4 || warns[0].File != "w.md" || !strings.Contains(warns[0].Text, `\begin{proof}`) {
		t.Errorf("warnings = %v, want one for \\begin{proof} at w.md:4", warns)
	}
	// A section within the budget is never cut: no warning.
	_, warns, _ = mustNew(t, nil).Chunk(chunking.Document{Path: "w.md", Content: []byte(src)})
	if len(warns) != 0 {
		t.Errorf("warnings for an uncut section = %v, want none", warns)
	}
}

// TestChunkFuncStops ends the context at a quarter, half and three
// quarters of the work on large inputs (poll.EndAfter, no timing): the
// chunker returns an error wrapping context.Canceled and unwinds at once
// once it sees the end (a few calls to the poller, not one per step),
// whatever phase it is in (sections, unit scan, sentences, packing,
// merging, overlaps).
func TestChunkFuncStops(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 50; c.WordOverlap = 3; c.AddHeaders = true })
	scale := 1 // a quarter of the sizes; all of them with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		scale = 4
	}
	inputs := map[string]string{
		"document": strings.Repeat("# Part\nSome text with $x$ and `code`. See Fig. 3. More words here.\n\n```go\nfunc f() {}\n```\n\n## Sub\nShort.\n\n", 1000*scale),
	}
	for name, gen := range badInputs {
		inputs[name] = gen(20000 * scale)
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			doc := chunking.Document{Path: "s.md", Content: []byte(src)}
			total := work(t, c, doc)
			if total < 4*poll.Every {
				t.Fatalf("%d units of work: too little to stop within", total)
			}
			for _, q := range []int{1, 2, 3} {
				pl := poll.EndAfter(total * q / 4)
				_, err := c.chunkPolled(pl, doc, func(chunking.Chunk) bool { return true })
				if !errors.Is(err, context.Canceled) {
					t.Errorf("ended at %d/4 of the work: err = %v, want context.Canceled", q, err)
				}
				if pl.CallsAfterEnd() > 8 {
					t.Errorf("ended at %d/4 of the work: %d more steps after the end, want at most 8", q, pl.CallsAfterEnd())
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	_, err := c.ChunkFunc(ctx, chunking.Document{Path: "a.md", Content: []byte(inputs["document"])}, func(chunking.Chunk) bool { n++; return true })
	if !errors.Is(err, context.Canceled) || n != 0 || !strings.Contains(err.Error(), "a.md") {
		t.Errorf("ChunkFunc(ended context) = %d chunks, %v; want none and context.Canceled naming a.md", n, err)
	}
}

// TestChunkFunc: ChunkFunc yields the chunks Chunk returns, in order, and
// stops when yield returns false.
func TestChunkFunc(t *testing.T) {
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 5; c.WordOverlap = 1 })
	doc := chunking.Document{Path: "f.md", Content: []byte("# A\nOne two three. Four five six. Seven eight.\n## B\nNine ten.")}
	want, wantWarns, err := c.Chunk(doc)
	if err != nil || len(want) < 3 {
		t.Fatalf("Chunk = %d chunks, %v", len(want), err)
	}
	var got []chunking.Chunk
	warns, err := c.ChunkFunc(context.Background(), doc, func(ch chunking.Chunk) bool { got = append(got, ch); return true })
	if err != nil || len(got) != len(want) || len(warns) != len(wantWarns) {
		t.Fatalf("ChunkFunc = %d chunks, %v; want %d", len(got), err, len(want))
	}
	for i := range want {
		if got[i].Hash() != want[i].Hash() {
			t.Errorf("chunk %d differs", i)
		}
	}
	n := 0
	if _, err := c.ChunkFunc(context.Background(), doc, func(chunking.Chunk) bool { n++; return false }); err != nil || n != 1 {
		t.Errorf("ChunkFunc stopping at the first chunk = %d calls, %v", n, err)
	}
}

func TestChunkFileAndFolder(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"b.md": "# B\nb", "a/x.txt": "plain text", "c.mdx": "# C\nc", "skip.rst": "no", ".h/h.md": "hidden", "bad.md": "\xff"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := mustNew(t, nil)
	ctx := context.Background()
	chunks, warns, err := c.ChunkFolder(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, ch := range chunks {
		files = append(files, ch.Get("file", "").(string))
	}
	if got, want := strings.Join(files, " "), "a/x.txt b.md c.mdx"; got != want {
		t.Errorf("ChunkFolder files = %q, want %q", got, want)
	}
	if len(warns) != 1 || warns[0].File != "bad.md" {
		t.Errorf("ChunkFolder warnings = %v, want one for bad.md", warns)
	}
	chunks, _, err = c.ChunkFile(ctx, filepath.Join(dir, "a", "..", "a", "x.txt"))
	if err != nil || len(chunks) != 1 || chunks[0].Get("file", nil) != filepath.ToSlash(filepath.Join(dir, "a", "x.txt")) || chunks[0].Get("file_format", nil) != "txt" {
		t.Errorf("ChunkFile = %v, %v", chunks, err)
	}
	if _, _, err := c.ChunkFile(ctx, filepath.Join(dir, "missing.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ChunkFile(missing) = %v, want fs.ErrNotExist", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.ChunkFolder(cctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("ChunkFolder(cancelled) = %v, want context.Canceled", err)
	}
}

// TestCorpusTokenBudgetByReference chunks every 250th file of the
// optional Markdown corpus (with CHUNKSTREAM_TEST_FULL=1 every fifth,
// every fiftieth under the race detector) in token mode, without overlap and added headers so that each
// chunk is its own text, and has OpenAI's tokenizer, run for real
// (js-tiktoken under Node.js; skipped without them), count every chunk:
// each one not marked oversize is within max_chunk_size tokens, and each
// count equals ours.
func TestCorpusTokenBudgetByReference(t *testing.T) {
	tokenstest.Dir(t)
	dir := testutil.SharedDir(t, "corpus", "markdown")
	files, _, err := chunking.WalkFolder(context.Background(), dir, Extensions())
	if err != nil {
		t.Fatal(err)
	}
	step := 250
	if testutil.Enabled(testutil.Full) {
		step = 5
		if raceEnabled {
			step = 50
		}
	}
	c := mustNew(t, func(c *Config) { c.MaxChunkSize = 256; c.Tokenizer = "cl100k_base" })
	var texts []string
	var ours []int
	oversize := 0
	for i := 0; i < len(files); i += step {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: files[i], Content: src})
		if err != nil {
			continue // the file that is not UTF-8
		}
		for _, ch := range chunks {
			if ch.Get("oversize", false) == true {
				oversize++
				continue
			}
			texts = append(texts, ch.Content())
			ours = append(ours, c.enc.CountString(ch.Content()))
		}
	}
	over := 0
	for i, n := range tokenstest.Counts(t, "cl100k_base", texts) {
		if n != ours[i] {
			t.Errorf("chunk %.80q: %d tokens by the reference, %d by ours", texts[i], n, ours[i])
		}
		if n > c.maxWords {
			if over++; over <= 5 {
				t.Errorf("chunk %.80q has %d tokens by the reference > max_chunk_size %d and is not oversize", texts[i], n, c.maxWords)
			}
		}
	}
	t.Logf("cl100k_base max_chunk_size %d, every %d files: %d chunks within the budget by the reference tokenizer, %d oversize, %d over", c.maxWords, step, len(texts)-over, oversize, over)
}

// FuzzChunkTarget is FuzzChunk in target mode, in characters or in
// tokens (cl100k_base): the invariants hold with the ceiling as the
// budget, sizes in the target's unit.
func FuzzChunkTarget(f *testing.F) {
	for _, in := range golden.Inputs(f, "testdata", goldenPatterns...) {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, uint16(60), uint8(0b01))
		f.Add(src, uint16(400), uint8(0b10))
		f.Add(src, uint16(20), uint8(0b101))
	}
	f.Fuzz(func(t *testing.T, src []byte, n uint16, flags uint8) {
		c := mustNew(t, func(c *Config) {
			c.AddHeaders = flags&1 != 0
			c.MergeSmallChunks = flags&2 != 0
			if flags&4 != 0 {
				c.Tokenizer, c.TargetTokens = "cl100k_base", int(n%100)+1
			} else {
				c.TargetChar = int(n%500) + 1
			}
		})
		checkInvariants(t, c, chunking.Document{Path: "f.md", Content: src})
	})
}

// TestTargetLongUnit: in target mode a table or code block longer than
// the ceiling is cut at its line ends into near-equal chunks, none
// oversize; a line longer than the ceiling is a chunk of its own,
// oversize.
func TestTargetLongUnit(t *testing.T) {
	row := "| `name` | a value | what it means in a few words |\n" // 52 characters
	long := strings.Repeat("x", 700)
	tests := []struct {
		name     string
		src      string
		chunks   int
		oversize int
	}{
		{"table", "# T\n\n| a | b | c |\n| --- | --- | --- |\n" + strings.Repeat(row, 30), 4, 0},
		{"code", "# T\n\n```\n" + strings.Repeat("line of code, forty characters long ...\n", 40) + "```\n", 4, 0},
		{"long line", "# T\n\n```\n" + long + "\n" + strings.Repeat("short line\n", 20) + "```\n", 3, 1},
	}
	for _, tc := range tests {
		c := mustNew(t, func(c *Config) { c.TargetChar = 400 })
		doc := chunking.Document{Path: "t.md", Content: []byte(tc.src)}
		checkInvariants(t, c, doc)
		chunks, _, err := c.Chunk(doc)
		if err != nil {
			t.Fatal(err)
		}
		over := 0
		var sizes []int
		for _, ch := range chunks {
			if ch.Get("oversize", false) == true {
				over++
			}
			sizes = append(sizes, utf8.RuneCountInString(ch.Content()))
		}
		if len(chunks) != tc.chunks || over != tc.oversize {
			t.Errorf("%s: %d chunks of %v, %d oversize; want %d, %d oversize", tc.name, len(chunks), sizes, over, tc.chunks, tc.oversize)
		}
	}
}

// TestTargetTableMath: a table cut at its line ends in target mode keeps
// together the rows between which math one of them opens is open ("$$",
// \[, \begin{X}), and cuts the table elsewhere at its rows.
func TestTargetTableMath(t *testing.T) {
	row := "| `name` | a value | what it means in a few words |\n" // 52 characters
	head := "# T\n\n| a | b | c |\n| --- | --- | --- |\n" + strings.Repeat(row, 10)
	tail := strings.Repeat(row, 10)
	tests := []struct{ name, open, mid, close string }{
		{"dollars", "| $$ | x |\n", "| y = 1 | z |\n", "| $$ | w |\n"},
		{"brackets", "| \\[ | x |\n", "| y = 1 | z |\n", "| \\] | w |\n"},
		{"environment", "| \\begin{align} | x |\n", "| y &= 1 | z |\n", "| \\end{align} | w |\n"},
	}
	for _, tc := range tests {
		math := tc.open + strings.Repeat(tc.mid, 6) + tc.close
		src := head + math + tail
		c := mustNew(t, func(c *Config) { c.TargetChar = 200 })
		doc := chunking.Document{Path: "t.md", Content: []byte(src)}
		chunks := checkInvariants(t, c, doc)
		whole := 0
		for _, ch := range chunks {
			if strings.Contains(ch.Content(), strings.TrimSuffix(math, "\n")) {
				whole++
			}
		}
		if whole != 1 || len(chunks) < 4 {
			t.Errorf("%s: %d chunks, %d holding the math rows whole; want the rows in one chunk and the table cut elsewhere", tc.name, len(chunks), whole)
		}
	}
}

// TestTargetBadInput is TestBadInput in target mode, whose cut choice
// weighs every place a chunk may end, at a small target and a large one
// (whose window holds more places), with more inputs of many short
// units: sentence ends, list items, short lines, paragraphs ending with
// a colon before a code block, and long paragraphs between short ones.
func TestTargetBadInput(t *testing.T) {
	inputs := map[string]func(n int) string{
		"list items":    func(n int) string { return strings.Repeat("- a\n", n) },
		"short lines":   func(n int) string { return strings.Repeat("ab\n", n) },
		"introductions": func(n int) string { return strings.Repeat("see:\n\n```\nx\n```\n\n", n/4) },
		"long paragraphs": func(n int) string {
			return strings.Repeat("a.\n\n"+strings.Repeat("b c. ", 40)+"\n\n", n/100+1)
		},
	}
	for name, gen := range badInputs {
		inputs[name] = gen
	}
	for _, target := range []int{40, 2000} {
		c := mustNew(t, func(c *Config) { c.TargetChar = target })
		for name, gen := range inputs {
			t.Run(fmt.Sprintf("%s/%d", name, target), func(t *testing.T) {
				checkInvariants(t, c, chunking.Document{Path: "bad.md", Content: []byte(gen(2000))})
				small := chunking.Document{Path: "bad.md", Content: []byte(gen(20000))}
				large := chunking.Document{Path: "bad.md", Content: []byte(gen(160000))}
				ws, wl := work(t, c, small), work(t, c, large)
				if ws < len(small.Content) || wl > 10*ws {
					t.Errorf("work %d for %d bytes of input, %d for %d: not linear", ws, len(small.Content), wl, len(large.Content))
				}
			})
		}
	}
}
