package markdown_test

import (
	"fmt"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// loadCases reads testdata's inputs with their sidecars.
func loadCases(t testing.TB) []golden.Case { return golden.Cases(t, "testdata", "*.md", "*.mdx") }

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
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			built, err := entry.New(tc.Options)
			if err != nil {
				t.Fatalf("New(%v): %v", tc.Options, err)
			}
			c := built.(*markdown.Chunker)
			doc := chunking.Document{Path: tc.Name, Content: tc.Input, Metadata: tc.Metadata}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatalf("Chunk(%s): %v", tc.Name, err)
			}
			if tc.Metadata == nil {
				if err := CheckDocument(doc, chunks, c.Config()); err != nil {
					t.Errorf("Chunk(%s): invariant: %v", tc.Name, err)
				}
			}
			// Idempotency: a second run gives the same output.
			again, _, _ := c.Chunk(doc)
			if err := Equal(chunks, again); err != nil {
				t.Errorf("Chunk(%s) second run: %v", tc.Name, err)
			}
			golden.Check(t, golden.Stem(tc.Path)+".golden", dump(t, chunks, warns, c.Config().Tokenizer, sizeOf(t, c)))
		})
	}
}
