package chunking

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestCorpusRoundTrip saves the paragraphs of the optional Markdown
// corpus's files (every 25th; with CHUNKSTREAM_TEST_FULL=1 every one, every
// fifth under the race detector) as chunks in both formats and loads them
// back: real text finds the cases where the YAML library writes what it
// cannot read.
func TestCorpusRoundTrip(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	files, _, err := WalkFolder(context.Background(), dir, []string{".md", ".mdx"})
	if err != nil {
		t.Fatal(err)
	}
	// The first two paragraphs of each file, and every paragraph with
	// what YAML writers find hard, keep the test short.
	hard := func(p string) bool {
		return strings.ContainsAny(p, "\t\r\u0085\u2028\u2029\ufeff") || strings.HasPrefix(p, " ") ||
			strings.Contains(p, " \n") || strings.ContainsFunc(p, func(r rune) bool { return r > 0xFFFF })
	}
	step := 25
	if testutil.Enabled(testutil.Full) {
		step = 1
		if raceEnabled {
			step = 5 // the race detector makes the YAML library ~10x slower
		}
	}
	var chunks []Chunk
	for k, f := range files {
		if k%step != 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil || !utf8.Valid(b) {
			continue
		}
		paras := strings.Split(string(b), "\n\n")
		for i, p := range paras {
			if i < 2 || hard(p) {
				chunks = append(chunks, NewChunk(p, Metadata{{"index", i}, {"file", f}}))
			}
		}
	}
	t.Logf("%d chunks from %d files", len(chunks), len(files))
	for _, format := range []Format{JSONL, YAML} {
		var buf bytes.Buffer
		if err := Encode(&buf, format, chunks); err != nil {
			t.Fatalf("Encode(%v) = %v", format, err)
		}
		c, err := Decode(&buf, format, "corpus."+format.String())
		if err != nil {
			t.Fatalf("Decode(%v) = %v", format, err)
		}
		got := c.Chunks()
		if len(got) != len(chunks) {
			t.Fatalf("%v: %d chunks back, want %d", format, len(got), len(chunks))
		}
		for i := range chunks {
			if got[i].Hash() != chunks[i].Hash() {
				t.Errorf("%v: chunk %d (%v) changed: %q, want %q", format, i, chunks[i].Get("file", ""), got[i].Content(), chunks[i].Content())
			}
		}
	}
}
