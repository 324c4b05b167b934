package html_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// goldenCase is one testdata page with its sidecars.
type goldenCase struct {
	name  string
	path  string
	input []byte
	raw   map[string]any
	extra chunking.Metadata
}

func loadCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, f := range golden.Inputs(t, "testdata", "*.html") {
		c := goldenCase{name: filepath.Base(f), path: f, raw: golden.Options(t, f), extra: golden.Metadata(t, f)}
		var err error
		if c.input, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

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
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			built, err := entry.New(tc.raw)
			if err != nil {
				t.Fatalf("New(%v): %v", tc.raw, err)
			}
			c := built.(*html.Chunker)
			doc := chunking.Document{Path: tc.name, Content: tc.input, Metadata: tc.extra}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatalf("Chunk(%s): %v", tc.name, err)
			}
			if err := html.CheckPage(tc.input, chunks, c.Config()); err != nil {
				t.Errorf("Chunk(%s): %v", tc.name, err)
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
			golden.Check(t, golden.Stem(tc.path)+".golden", golden.Dump(t, chunks, warns, func(ch chunking.Chunk) string {
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
