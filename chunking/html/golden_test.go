package html_test

import (
	"fmt"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// loadCases reads testdata's inputs with their sidecars.
func loadCases(t testing.TB) []golden.Case { return golden.Cases(t, "testdata", "*.html") }

// TestGolden chunks every page in testdata/ with the options of its
// sidecar, read as the wire reads them, holds checkPage's properties and
// a second run, and compares the dump (with each chunk's span) with
// <case>.golden (go test -update rewrites it).
func TestGolden(t *testing.T) {
	entry, err := registry.Default().Lookup("html")
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
			c := built.(*html.Chunker)
			doc := chunking.Document{Path: tc.Name, Content: tc.Input, Metadata: tc.Metadata}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatalf("Chunk(%s): %v", tc.Name, err)
			}
			if err := html.CheckPage(tc.Input, chunks, c.Config()); err != nil {
				t.Errorf("Chunk(%s): %v", tc.Name, err)
			}
			again, _, _ := c.Chunk(doc)
			if len(again) != len(chunks) {
				t.Fatalf("second run: %d chunks, first %d", len(again), len(chunks))
			}
			for i := range chunks {
				if again[i].Hash() != chunks[i].Hash() || again[i].Span().String() != chunks[i].Span().String() {
					t.Errorf("second run: chunk %d differs", i)
				}
			}
			golden.Check(t, golden.Stem(tc.Path)+".golden", golden.Dump(t, chunks, warns, func(ch chunking.Chunk) string {
				sp := ch.Span()
				v := ", not verbatim"
				if sp.Verbatim {
					v = ", verbatim"
				}
				return fmt.Sprintf("%d chars, bytes %d to %d, %s%s", ch.Len(), sp.Start, sp.End, sp, v)
			}))
		})
	}
}
