package code_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// loadCases reads testdata's inputs with their sidecars.
func loadCases(t testing.TB) []golden.Case { return golden.Cases(t, "testdata", "*.in") }

// TestGolden chunks every input with its options, read through the
// registry as a request's would be, checks the properties of every
// chunking and a second run, and compares the dump (chunks with their
// spans, then warnings) with <name>.golden; go test -update rewrites it.
func TestGolden(t *testing.T) {
	entry, err := registry.Default().Lookup("code")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range loadCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			c, err := entry.New(tc.Options)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.(*code.Chunker).Config()
			lang := cfg.Language
			if lang == "" {
				lang = code.LanguageOf(tc.Name)
			}
			doc := chunking.Document{Path: tc.Name, Content: tc.Input}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkChunks(tc.Input, chunks, lang, cfg.MaxChar); err != nil {
				t.Fatal(err)
			}
			again, _, _ := c.Chunk(doc)
			if !slices.EqualFunc(chunks, again, func(a, b chunking.Chunk) bool { return a.Hash() == b.Hash() && a.Span().Start == b.Span().Start }) {
				t.Error("a second run gives other chunks")
			}
			golden.Check(t, golden.Stem(tc.Path)+".golden", golden.Dump(t, chunks, warns, func(ch chunking.Chunk) string {
				sp := ch.Span()
				return fmt.Sprintf("%d chars, bytes %d-%d, %s", ch.Len(), sp.Start, sp.End, sp)
			}))
		})
	}
}
