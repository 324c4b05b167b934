package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// specChunks are the chunks of the reference's summary example: doc.md (4 and
// 2 characters), guide/ref.md (6), guide/deep/x.md (4), z.md (1).
func specChunks() []chunking.Chunk {
	mk := func(content, file string, index int) chunking.Chunk {
		return chunking.NewChunk(content, chunking.Metadata{{Key: "index", Value: index}, {Key: "file", Value: file}})
	}
	return []chunking.Chunk{
		mk("aaaa", "doc.md", 0),
		mk("bb", "doc.md", 1),
		mk("cccccc", "guide/ref.md", 0),
		mk("dddd", "guide/deep/x.md", 0),
		mk("e", "z.md", 0),
	}
}

func TestSummarySpecExample(t *testing.T) {
	got := summary(chunking.NewCollection(specChunks()), defaultMaxDepth, defaultMaxFilesPerFolder)
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
	got := summary(chunking.NewCollection(nil), 3, 10)
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
	var chunks []chunking.Chunk
	for _, f := range []string{"a/1.md", "a/2.md", "a/3.md", "a/b/c/d/deep.md", "top.md"} {
		chunks = append(chunks, chunking.NewChunk(strings.Repeat("x", 10), chunking.Metadata{{Key: "file", Value: f}}))
	}
	chunks = append(chunks, chunking.NewChunk(strings.Repeat("y", 30), nil)) // no file, no index
	chunks = append(chunks, chunks[1], chunks[1])                            // two repeats of a/2.md
	got := summary(chunking.NewCollection(chunks), 3, 2)
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
	coll := chunking.NewCollection(specChunks())
	md := "{\n  \"file\": \"doc.md\",\n  \"index\": 1\n}"
	got := readChunk(coll, 1, false, 200)
	want := rule + "\nLength: 2 chars\n" + rule + "\n" + md + "\nbb\n\n" + rule
	if got != want {
		t.Errorf("ReadChunk(1) =\n%s\nwant\n%s", got, want)
	}
	got = readChunk(coll, 1, true, 5)
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
	coll := chunking.NewCollection(specChunks())
	got := readFileChunks(coll, "doc.md", 1)
	want := rule + "\nFile: doc.md\nTotal chunks: 2\n" + rule + "\n" +
		"{\n  \"file\": \"doc.md\",\n  \"index\": 0\n}\naaaa" + "\n\n... 1 more chunks in this file"
	if got != want {
		t.Errorf("ReadFile(doc.md, 1) =\n%s\nwant\n%s", got, want)
	}
	got = readFileChunks(coll, "nope.md", 0)
	want = "File not found: nope.md\nAvailable files: doc.md, guide/ref.md, guide/deep/x.md, z.md..."
	if got != want {
		t.Errorf("ReadFile(nope.md) = %q, want %q", got, want)
	}
}

func TestSampling(t *testing.T) {
	coll := chunking.NewCollection(specChunks())
	seen := map[int]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		i, text, err := sampleChunk(coll, r)
		if err != nil || !strings.Contains(text, "Length:") {
			t.Fatalf("SampleChunk = %d, %q, %v", i, text, err)
		}
		seen[i] = true
	}
	if len(seen) != 5 {
		t.Errorf("SampleChunk over 200 draws saw positions %v, want all 5", seen)
	}
	empty := chunking.NewCollection(nil)
	if _, _, err := sampleChunk(empty, r); !errors.Is(err, errEmptyCollection) {
		t.Errorf("SampleChunk(empty) = %v, want errEmptyCollection", err)
	}
}

func TestReadChunkShowsSpan(t *testing.T) {
	chunks := []chunking.Chunk{
		chunking.NewChunk("a", chunking.Metadata{{Key: "file", Value: "docs/a.md"}}).WithSpan(chunking.Span{Start: 120, End: 450, FirstLine: 12, LastLine: 30, Verbatim: true}),
		chunking.NewChunk("b", chunking.Metadata{{Key: "file", Value: "docs/a.md"}}).WithSpan(chunking.Span{Start: 460, End: 470, FirstLine: 31, LastLine: 31}),
		chunking.NewChunk("c", chunking.Metadata{{Key: "file", Value: "t-1"}}).WithSpan(chunking.Span{MessageIDs: []string{"a@x", "b@x"}}),
		chunking.NewChunk("d", nil),
	}
	coll := chunking.NewCollection(chunks)
	for i, want := range []string{
		"Length: 1 chars\nSource: docs/a.md:12-30 (bytes 120 to 450)\n" + rule,
		"Length: 1 chars\nSource: docs/a.md:31 (bytes 460 to 470, not verbatim)\n" + rule,
		"Length: 1 chars\nMessages: <a@x>, <b@x>\n" + rule,
		"Length: 1 chars\n" + rule,
	} {
		if got := readChunk(coll, i, false, 0); !strings.Contains(got, want) {
			t.Errorf("ReadChunk(%d) =\n%s\nwant it to contain\n%s", i, got, want)
		}
	}
}

func BenchmarkSummary(b *testing.B) {
	para := strings.Repeat("Some prose with `code`, a colon: here, and ünïcode 😀.\n", 30)
	chunks := make([]chunking.Chunk, 1000)
	for i := range chunks {
		chunks[i] = chunking.NewChunk(para, chunking.Metadata{{Key: "index", Value: i % 10}, {Key: "file", Value: fmt.Sprintf("docs/f%03d.md", i/10)}})
	}
	coll := chunking.NewCollection(chunks)
	b.ReportAllocs()
	for b.Loop() {
		_ = summary(coll, defaultMaxDepth, defaultMaxFilesPerFolder)
	}
}
