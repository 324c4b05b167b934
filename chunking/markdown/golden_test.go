package markdown_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// goldenCase is one testdata input with its sidecars.
type goldenCase struct {
	name  string // file name, e.g. "crlf.md"
	path  string // testdata/crlf.md
	input []byte
	raw   map[string]any // options, as the wire would send them
	extra chunking.Metadata
}

func loadCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, f := range golden.Inputs(t, "testdata", "*.md", "*.mdx") {
		c := goldenCase{name: filepath.Base(f), path: f, raw: golden.Options(t, f), extra: golden.Metadata(t, f)}
		var err error
		if c.input, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// dump renders chunks as the golden files hold them; with a tokenizer
// (name not ""), a chunk's size shows its tokens too.
func dump(t testing.TB, chunks []chunking.Chunk, warns []chunking.Warning, tokenizer string, size Size) []byte {
	return golden.Dump(t, chunks, warns, func(c chunking.Chunk) string {
		if tokenizer != "" {
			return fmt.Sprintf("%d chars, %d %s tokens", c.Len(), size(c.Content()), tokenizer)
		}
		return fmt.Sprintf("%d chars", c.Len())
	})
}

// TestGolden chunks every input in testdata/ with the options of its
// sidecar, read as the wire reads them, checks the invariants and a
// second run, and compares the dump with <case>.golden (go test -update
// rewrites it).
func TestGolden(t *testing.T) {
	entry, err := registry.Default().Lookup("markdown")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range loadCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			built, err := entry.New(tc.raw)
			if err != nil {
				t.Fatalf("New(%v): %v", tc.raw, err)
			}
			c := built.(*markdown.Chunker)
			doc := chunking.Document{Path: tc.name, Content: tc.input, Metadata: tc.extra}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatalf("Chunk(%s): %v", tc.name, err)
			}
			if tc.extra == nil {
				if err := CheckDocument(doc, chunks, c.Config()); err != nil {
					t.Errorf("Chunk(%s): invariant: %v", tc.name, err)
				}
			}
			// Idempotency: a second run gives the same output.
			again, _, _ := c.Chunk(doc)
			if err := Equal(chunks, again); err != nil {
				t.Errorf("Chunk(%s) second run: %v", tc.name, err)
			}
			golden.Check(t, golden.Stem(tc.path)+".golden", dump(t, chunks, warns, c.Config().Tokenizer, sizeOf(t, c)))
		})
	}
}
