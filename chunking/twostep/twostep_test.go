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

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func mustNew(t testing.TB, opts chunking.Options) *Chunker {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New(%v): %v", opts, err)
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

// TestSpecCases holds the cases of spec §3 and a few more, as explicit
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
		opts chunking.Options
		want []want
	}{
		{"intro", "# Intro\nHello world.", nil, []want{{"# Intro\nHello world.", []string{"#Intro"}}}},
		{"merge on", "# A\nx\n## B\ny", nil, []want{{"# A\nx\n\n## B\ny", []string{"#A"}}}},
		{"merge off", "# A\nx\n## B\ny", chunking.Options{OptMergeSmallChunks: false},
			[]want{{"# A\nx", []string{"#A"}}, {"## B\ny", []string{"#A", "##B"}}}},
		{"merge refused", "## B\ny\n# A\nx", nil, []want{{"## B\ny", []string{"##B"}}, {"# A\nx", []string{"#A"}}}},
		{"max 7", "The cat sat. The dog ran. The bird flew.", chunking.Options{OptMaxChunkSize: 7},
			[]want{{"The cat sat. The dog ran.", []string{}}, {"The bird flew.", []string{}}}},
		{"equation oversize", `Intro words here. \begin{equation} a + b = c + d + e \end{equation} Outro words here.`,
			chunking.Options{OptMaxChunkSize: 5},
			[]want{{"Intro words here.", []string{}}, {`\begin{equation} a + b = c + d + e \end{equation}`, []string{}}, {"Outro words here.", []string{}}}},
		{"fig one sentence", "See Fig. 3. The result holds.", chunking.Options{OptMaxChunkSize: 3},
			[]want{{"See Fig. 3. The result holds.", []string{}}}},
		{"eq paren", "See Eq. (4). It holds.", chunking.Options{OptMaxChunkSize: 3},
			[]want{{"See Eq. (4).", []string{}}, {"It holds.", []string{}}}},
		{"eleven maths", eleven, chunking.Options{OptMaxChunkSize: 3},
			[]want{{strings.TrimSuffix(eleven, " Next."), []string{}}, {"Next.", []string{}}}},
		{"split on 1,2", "# A\n### C\nt", chunking.Options{OptHeadersToSplitOn: []int{1, 2}},
			[]want{{"# A\n### C\nt", []string{"#A"}}}},
		{"front matter", "---\ntitle: Foo\n---\n# A\nx", chunking.Options{OptMergeSmallChunks: false},
			[]want{{"---\ntitle: Foo\n---", []string{}}, {"# A\nx", []string{"#A"}}}},
		{"header-only join", "# A\n## B\ntext", chunking.Options{OptMergeSmallChunks: false},
			[]want{{"# A\n## B\ntext", []string{"#A", "##B"}}}},
		{"header-only not deeper", "## A\n# B\ntext", chunking.Options{OptMergeSmallChunks: false},
			[]want{{"## A", []string{"##A"}}, {"# B\ntext", []string{"#B"}}}},
		{"code header not split", "```\n# not a header\n```\n# A\nx", chunking.Options{OptMergeSmallChunks: false},
			[]want{{"```\n# not a header\n```", []string{}}, {"# A\nx", []string{"#A"}}}},
		{"add headers whole lines", "# Intro\nText.\n## Introduction\nMore.", chunking.Options{OptMergeSmallChunks: false, OptAddHeaders: true},
			[]want{{"# Intro\nText.", []string{"#Intro"}}, {"# Intro\n## Introduction\nMore.", []string{"#Intro", "##Introduction"}}}},
		{"word overlap", "One two three. Four five six.", chunking.Options{OptMaxChunkSize: 3, OptWordOverlap: 2},
			[]want{{"One two three.", []string{}}, {"two three. Four five six.", []string{}}}},
		{"char overlap at word start", "One two three. Four five six.", chunking.Options{OptMaxChunkSize: 3, OptChunkOverlap: 9},
			[]want{{"One two three.", []string{}}, {"three. Four five six.", []string{}}}},
		{"char overlap word too long", "One two three. Four five six.", chunking.Options{OptMaxChunkSize: 3, OptChunkOverlap: 5},
			[]want{{"One two three.", []string{}}, {"Four five six.", []string{}}}},
		{"overlap then headers", "# H\nOne two. Three four.", chunking.Options{OptMaxChunkSize: 2, OptWordOverlap: 1, OptAddHeaders: true},
			[]want{{"# H", []string{"#H"}}, {"# H\nH One two.", []string{"#H"}}, {"# H\ntwo. Three four.", []string{"#H"}}}},
		{"quoted heading kept with next", "One two three. Four five.\n> ### Head\n> Six seven.", chunking.Options{OptMaxChunkSize: 8},
			[]want{{"One two three. Four five.", []string{}}, {"> ### Head\n> Six seven.", []string{}}}},
		{"source whitespace kept", "Intro line.\n\n- a b.\n- c d.\n\nEnd now.", chunking.Options{OptMaxChunkSize: 5},
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
		raw  map[string]any
		name string // option the error must name; "" = valid
	}{
		{nil, ""},
		{map[string]any{"max_chunk_size": 1}, ""},
		{map[string]any{"max_chunk_size": 0}, "max_chunk_size"},
		{map[string]any{"max_chunk_size": -3}, "max_chunk_size"},
		{map[string]any{"word_overlap": -1}, "word_overlap"},
		{map[string]any{"word_overlap": 512}, "word_overlap"},
		{map[string]any{"word_overlap": 511}, ""},
		{map[string]any{"chunk_overlap": -1}, "chunk_overlap"},
		{map[string]any{"chunk_overlap": 100000}, ""},
		{map[string]any{"headers_to_split_on": []any{0}}, "headers_to_split_on"},
		{map[string]any{"headers_to_split_on": "1,7"}, "headers_to_split_on"},
		{map[string]any{"headers_to_split_on": []any{}}, ""},
		{map[string]any{"max_workers": -1}, "max_workers"},
		{map[string]any{"max_workers": 0}, ""},
	}
	for _, tt := range tests {
		opts, err := chunking.DecodeOptions(LibrarySpecs(), tt.raw)
		if err != nil {
			t.Fatalf("DecodeOptions(%v): %v", tt.raw, err)
		}
		_, err = New(opts)
		if tt.name == "" {
			if err != nil {
				t.Errorf("New(%v) = %v, want no error", tt.raw, err)
			}
			continue
		}
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("New(%v) = %v, want ErrInvalidOptions naming %s", tt.raw, err, tt.name)
		}
	}
	if _, err := chunking.DecodeOptions(Specs(), map[string]any{"min_char": 1}); !errors.Is(err, chunking.ErrUnknownOption) {
		t.Errorf("DecodeOptions(min_char) = %v, want ErrUnknownOption", err)
	}
}

func TestSpecs(t *testing.T) {
	c := mustNew(t, nil)
	opts := c.Options()
	flags := map[string]bool{}
	for _, s := range LibrarySpecs() {
		if _, ok := opts[s.Name]; !ok {
			t.Errorf("spec %s not an option of the chunker", s.Name)
		}
		if !strings.HasSuffix(s.Usage, "(Eve chunker "+s.Name+")") {
			t.Errorf("spec %s: usage %q does not name the reference parameter", s.Name, s.Usage)
		}
		if flags[s.Flag()] {
			t.Errorf("flag %s repeated", s.Flag())
		}
		flags[s.Flag()] = true
	}
	if !flags["headers"] || !flags["max-workers"] || !flags["max-chunk-size"] {
		t.Errorf("flags = %v, want headers, max-workers, max-chunk-size", flags)
	}
	for _, s := range Specs() {
		if s.Name == OptMaxWorkers || s.Flag() == "workers" {
			t.Errorf("Specs() holds %s (flag -%s): it would clash with the CLIs' -workers", s.Name, s.Flag())
		}
	}
	want := chunking.Options{"max_chunk_size": 512, "chunk_overlap": 0, "word_overlap": 0, "add_headers": false,
		"merge_small_chunks": true, "headers_to_split_on": []int{1, 2, 3, 4, 5, 6}, "max_workers": 0}
	if fmt.Sprint(opts) != fmt.Sprint(want) {
		t.Errorf("defaults = %v, want %v", opts, want)
	}
	if c.Workers() < 1 {
		t.Errorf("Workers() = %d", c.Workers())
	}
}

func TestMetadata(t *testing.T) {
	c := mustNew(t, chunking.Options{OptMaxChunkSize: 2})
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

func TestChunkDocumentsOrder(t *testing.T) {
	c := mustNew(t, chunking.Options{OptMaxChunkSize: 5})
	var docs []chunking.Document
	for i := range 50 {
		body := strings.Repeat(fmt.Sprintf("Doc %d sentence here. ", i), i%7+1)
		docs = append(docs, chunking.Document{Path: fmt.Sprintf("d%02d.md", i), Content: []byte(body)})
	}
	docs = append(docs, chunking.Document{Path: "bad.md", Content: []byte{0xff}})
	for _, workers := range []int{0, 1, 3, 100} {
		res, err := c.ChunkDocuments(context.Background(), docs, workers)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			want, _, werr := c.Chunk(docs[i])
			if (werr == nil) != (r.Err == nil) || len(want) != len(r.Chunks) {
				t.Fatalf("workers=%d doc %d: %d chunks (%v), want %d (%v)", workers, i, len(r.Chunks), r.Err, len(want), werr)
			}
			for j := range want {
				if want[j].Hash() != r.Chunks[j].Hash() {
					t.Fatalf("workers=%d doc %d chunk %d differs", workers, i, j)
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ChunkDocuments(ctx, docs, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("ChunkDocuments(cancelled) = %v, want context.Canceled", err)
	}
	if res, err := c.ChunkDocuments(context.Background(), nil, 4); err != nil || len(res) != 0 {
		t.Errorf("ChunkDocuments(nil) = %v, %v", res, err)
	}
}

// TestConcurrentChunk runs one chunker from many goroutines (run with
// -race).
func TestConcurrentChunk(t *testing.T) {
	c := mustNew(t, chunking.Options{OptMaxChunkSize: 4, OptWordOverlap: 1, OptAddHeaders: true})
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

// TestBadInput checks inputs that must neither panic nor go super-linear.
func TestBadInput(t *testing.T) {
	c := mustNew(t, chunking.Options{OptMaxChunkSize: 50})
	inputs := map[string]func(n int) string{
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
	// Inputs whose cost is mdblocks' (many tiny Markdown blocks, one
	// math block of deep nesting) are timed by its own tests: goldmark's
	// time per byte grows with the number of AST nodes (memory effects),
	// which makes a ratio test flaky here. scanRegion's share of them is
	// timed by TestScanRegionLinear.
	untimed := map[string]bool{"headers": true, "table rows": true, "fences": true, "nested fences": true, "nested begins": true}
	for name, gen := range inputs {
		t.Run(name, func(t *testing.T) {
			measure := func(n int) time.Duration {
				doc := chunking.Document{Path: "bad.md", Content: []byte(gen(n))}
				best := time.Duration(1 << 62)
				for range 3 {
					start := time.Now()
					if _, _, err := c.Chunk(doc); err != nil {
						t.Fatal(err)
					}
					best = min(best, time.Since(start))
				}
				return best
			}
			checkInvariants(t, c, chunking.Document{Path: "bad.md", Content: []byte(gen(2000))})
			if testing.Short() || raceEnabled || untimed[name] {
				return
			}
			// 8x the input: linear is ~8x the time, quadratic ~64x.
			small, large := measure(20000), measure(160000)
			if large > 32*small+100*time.Millisecond {
				t.Errorf("%s: 8x input took %v vs %v: not linear", name, large, small)
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

// TestCorpus chunks every file of the shared Markdown corpus with the
// invariants, under two option sets.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus run")
	}
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
		mustNew(t, chunking.Options{OptMaxChunkSize: 40, OptWordOverlap: 5, OptAddHeaders: true, OptHeadersToSplitOn: []int{1, 2, 3}}),
	}
	stride := 1
	if raceEnabled {
		stride = 10 // the race detector is ~10x slower: a sample
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
	}
	t.Logf("%d files", len(files))
}

func FuzzChunk(f *testing.F) {
	for _, in := range goldenInputs(f) {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, uint8(6), uint8(1), uint8(0), uint8(0b11))
	}
	f.Add([]byte("$$\n$a $5 \\begin{x}\\begin{x}\\end{x}"), uint8(2), uint8(0), uint8(3), uint8(0))
	f.Add([]byte("a\xffb"), uint8(2), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, src []byte, max, wordOverlap, charOverlap, flags uint8) {
		opts := chunking.Options{
			OptMaxChunkSize:     int(max%64) + 1,
			OptWordOverlap:      int(wordOverlap) % (int(max%64) + 1),
			OptChunkOverlap:     int(charOverlap),
			OptAddHeaders:       flags&1 != 0,
			OptMergeSmallChunks: flags&2 != 0,
		}
		if flags&4 != 0 {
			opts[OptHeadersToSplitOn] = []int{1, 3}
		}
		c := mustNew(t, opts)
		path := "f.md"
		if flags&8 != 0 {
			path = "f.txt"
		}
		checkInvariants(t, c, chunking.Document{Path: path, Content: src})
	})
}

func TestUnclosedWarnings(t *testing.T) {
	c := mustNew(t, chunking.Options{OptMaxChunkSize: 3})
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
