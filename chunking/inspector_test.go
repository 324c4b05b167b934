package chunking

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// specChunks are the chunks of the reference's summary example: doc.md (4 and
// 2 characters), guide/ref.md (6), guide/deep/x.md (4), z.md (1).
func specChunks() []Chunk {
	mk := func(content, file string, index int) Chunk {
		return NewChunk(content, Metadata{{"index", index}, {"file", file}})
	}
	return []Chunk{
		mk("aaaa", "doc.md", 0),
		mk("bb", "doc.md", 1),
		mk("cccccc", "guide/ref.md", 0),
		mk("dddd", "guide/deep/x.md", 0),
		mk("e", "z.md", 0),
	}
}

func TestSummarySpecExample(t *testing.T) {
	got := NewInspector(NewCollection(specChunks())).Summary(DefaultMaxDepth, DefaultMaxFilesPerFolder)
	want := `ChunkCollection Summary
Total chunks: 5
Total files: 4

Chunk Size Statistics:
  Min: 1 chars (z.md, chunk 0)
  Max: 6 chars (guide/ref.md, chunk 0)
  Mean: 3 chars
  Histogram:
    1-1 chars: 1
    2-2 chars: 1
    3-3 chars: 0
    4-4 chars: 2
    5-5 chars: 0
    6-6 chars: 1

File Structure:
├── guide/
│   ├── deep/
│   │   └── x.md (1 chunks)
│   └── ref.md (1 chunks)
├── doc.md (2 chunks)
└── z.md (1 chunks)`
	if got != want {
		t.Errorf("Summary() =\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryEmpty(t *testing.T) {
	got := NewInspector(NewCollection(nil)).Summary(3, 10)
	want := `ChunkCollection Summary
Total chunks: 0
Total files: 0

Chunk Size Statistics:
  Min: 0 chars (N/A, chunk N/A)
  Max: 0 chars (N/A, chunk N/A)
  Mean: 0 chars

File File Structure:`
	want = strings.Replace(want, "File File", "File", 1)
	if got != want {
		t.Errorf("Summary(empty) =\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryLimitsAndDuplicates(t *testing.T) {
	var chunks []Chunk
	for _, f := range []string{"a/1.md", "a/2.md", "a/3.md", "a/b/c/d/deep.md", "top.md"} {
		chunks = append(chunks, NewChunk(strings.Repeat("x", 10), Metadata{{"file", f}}))
	}
	chunks = append(chunks, NewChunk(strings.Repeat("y", 30), nil)) // no file, no index
	chunks = append(chunks, chunks[1], chunks[1])                   // two repeats of a/2.md
	got := NewInspector(NewCollection(chunks)).Summary(3, 2)
	want := `ChunkCollection Summary
Total chunks: 8
Total files: 6

Chunk Size Statistics:
  Min: 10 chars (a/1.md, chunk ?)
  Max: 30 chars (unknown, chunk ?)
  Mean: 12 chars
  Histogram:
    10-12 chars: 7
    13-15 chars: 0
    16-18 chars: 0
    19-21 chars: 0
    22-24 chars: 0
    25-27 chars: 0
    28-30 chars: 1
  Duplicate chunks: 2

File Structure:
├── a/
│   ├── b/
│   │   └── c/
│   ├── 1.md (1 chunks)
│   ├── 2.md (3 chunks)
│       ... 1 more files
├── top.md (1 chunks)
└── unknown (1 chunks)`
	if got != want {
		t.Errorf("Summary(3, 2) =\n%s\nwant\n%s", got, want)
	}
}

func TestHistogramBuckets(t *testing.T) {
	tests := []struct {
		lo, hi    int
		wantLines int
		wantLast  string
	}{
		{5, 5, 2, "    5-5 chars: 2"},
		{0, 100, 11, "    99-109 chars: 1"},
		{1, 10, 11, "    10-10 chars: 1"},
		{1, 11, 7, "    11-12 chars: 1"},
	}
	for _, tt := range tests {
		got := histogram([]int{tt.lo, tt.hi}, tt.lo, tt.hi)
		if len(got) != tt.wantLines || got[len(got)-1] != tt.wantLast {
			t.Errorf("histogram(%d..%d) = %q, want %d lines ending %q", tt.lo, tt.hi, got, tt.wantLines, tt.wantLast)
		}
	}
}

func TestReadChunk(t *testing.T) {
	in := NewInspector(NewCollection(specChunks()))
	md := "{\n  \"file\": \"doc.md\",\n  \"index\": 1\n}"
	got := in.ReadChunk(1, false, false, 200)
	want := rule + "\nLength: 2 chars\n" + rule + "\n" + md + "\nbb\n\n" + rule
	if got != want {
		t.Errorf("ReadChunk(1) =\n%s\nwant\n%s", got, want)
	}
	got = in.ReadChunk(1, true, true, 5)
	prev := "{\n  \"file\": \"doc.md\",\n  \"index\": 0\n}\naaaa"
	want = rule + "\nLength: 2 chars\n" + rule +
		"\n\n--- Context Before ---\n" + prev +
		"\n\n--- Main Chunk ---\n" + md + "\nbb" +
		"\n\n--- Context After ---\n(No next chunk)" +
		"\n\n" + rule
	if got != want {
		t.Errorf("ReadChunk(1, context) =\n%s\nwant\n%s", got, want)
	}
}

func TestReadFile(t *testing.T) {
	in := NewInspector(NewCollection(specChunks()))
	got := in.ReadFile("doc.md", 1)
	want := rule + "\nFile: doc.md\nTotal chunks: 2\n" + rule + "\n" +
		"{\n  \"file\": \"doc.md\",\n  \"index\": 0\n}\naaaa" + "\n\n... 1 more chunks in this file"
	if got != want {
		t.Errorf("ReadFile(doc.md, 1) =\n%s\nwant\n%s", got, want)
	}
	got = in.ReadFile("nope.md", 0)
	want = "File not found: nope.md\nAvailable files: doc.md, guide/ref.md, guide/deep/x.md, z.md..."
	if got != want {
		t.Errorf("ReadFile(nope.md) = %q, want %q", got, want)
	}
}

func TestSampling(t *testing.T) {
	in := NewInspector(NewCollection(specChunks()))
	seen := map[int]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		i, text, err := in.SampleChunk(r)
		if err != nil || !strings.Contains(text, "Length:") {
			t.Fatalf("SampleChunk = %d, %q, %v", i, text, err)
		}
		seen[i] = true
	}
	if len(seen) != 5 {
		t.Errorf("SampleChunk over 200 draws saw positions %v, want all 5", seen)
	}
	a, _, _ := in.SampleFile(rand.New(rand.NewPCG(7, 7)), 0)
	b, _, _ := in.SampleFile(rand.New(rand.NewPCG(7, 7)), 0)
	if a != b {
		t.Errorf("SampleFile with one seed = %q then %q", a, b)
	}
	empty := NewInspector(NewCollection(nil))
	if _, _, err := empty.SampleChunk(r); !errors.Is(err, ErrEmptyCollection) {
		t.Errorf("SampleChunk(empty) = %v, want ErrEmptyCollection", err)
	}
	if _, _, err := empty.SampleFile(r, 0); !errors.Is(err, ErrEmptyCollection) {
		t.Errorf("SampleFile(empty) = %v, want ErrEmptyCollection", err)
	}
}

func TestCollectionNavigation(t *testing.T) {
	chunks := specChunks()
	dup := NewChunk("aaaa", Metadata{{"index", 0}, {"file", "doc.md"}}) // same hash as chunk 0
	chunks = append(chunks, dup, NewChunk("f", Metadata{{"index", 2}, {"file", "doc.md"}}))
	c := NewCollection(chunks)
	chunks[0] = NewChunk("changed", nil)
	if c.At(0).Content() != "aaaa" {
		t.Errorf("NewCollection did not copy its input")
	}
	if got, want := c.Files(), []string{"doc.md", "guide/ref.md", "guide/deep/x.md", "z.md"}; !slices.Equal(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
	if got := c.FilePositions("doc.md"); !slices.Equal(got, []int{0, 1, 5, 6}) {
		t.Errorf("FilePositions(doc.md) = %v", got)
	}
	if got := c.FileChunks("none"); got != nil {
		t.Errorf("FileChunks(none) = %v, want nil", got)
	}
	if f, p := c.File(5); f != "doc.md" || p != 2 {
		t.Errorf("File(5) = %s, %d, want doc.md, 2", f, p)
	}
	prev, next := c.Neighbours(5, 1, 1)
	if !slices.Equal(prev, []int{1}) || !slices.Equal(next, []int{6}) {
		t.Errorf("Neighbours(5, 1, 1) = %v, %v, want [1], [6]", prev, next)
	}
	prev, next = c.Neighbours(0, 3, 5)
	if len(prev) != 0 || !slices.Equal(next, []int{1, 5, 6}) {
		t.Errorf("Neighbours(0, 3, 5) = %v, %v, want [], [1 5 6]", prev, next)
	}
	if i, ok := c.ChunkByHash(dup.Hash()); !ok || i != 0 {
		t.Errorf("ChunkByHash(dup) = %d, %v, want 0 (first match)", i, ok)
	}
	if _, ok := c.ChunkByHash("nope"); ok {
		t.Errorf("ChunkByHash(nope) found something")
	}
	top := c.TopLevelChunks()
	if len(top) != 5 || top[2].Content() != "e" || top[4].Content() != "f" {
		t.Errorf("TopLevelChunks() = %v, want the 5 chunks of doc.md and z.md", top)
	}
	ctx := c.ChunkWithContext(5, 200, true, true)
	if !strings.HasSuffix(ctx.Before, "\nbb") || !strings.HasSuffix(ctx.After, "\nf") || !strings.HasSuffix(ctx.Chunk, "\naaaa") {
		t.Errorf("ChunkWithContext(5) = %+v", ctx)
	}
	ctx = c.ChunkWithContext(4, 200, true, false)
	if ctx.Before != "(No previous chunk)" || ctx.After != "" {
		t.Errorf("ChunkWithContext(4, before only) = %+v", ctx)
	}
	n := 0
	for i, ch := range c.All() {
		if ch.Hash() != c.At(i).Hash() {
			t.Errorf("All() yields %d out of place", i)
		}
		n++
	}
	if n != c.Len() {
		t.Errorf("All() yielded %d chunks, want %d", n, c.Len())
	}
}
