package code_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// goldenCase is one hand-written input of testdata/, <name>.in, chunked
// as the document <name> (so its extension gives the language) with the
// options of its sidecar.
type goldenCase struct {
	name, path string
	input      []byte
	raw        map[string]any
}

func loadCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, f := range golden.Inputs(t, "testdata", "*.in") {
		c := goldenCase{name: filepath.Base(golden.Stem(f)), path: f, raw: golden.Options(t, f)}
		var err error
		if c.input, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

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
		t.Run(tc.name, func(t *testing.T) {
			c, err := entry.New(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.(*code.Chunker).Config()
			lang := cfg.Language
			if lang == "" {
				lang = code.LanguageOf(tc.name)
			}
			doc := chunking.Document{Path: tc.name, Content: tc.input}
			chunks, warns, err := c.Chunk(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkChunks(tc.input, chunks, lang, cfg.MaxChar); err != nil {
				t.Fatal(err)
			}
			again, _, _ := c.Chunk(doc)
			if !slices.EqualFunc(chunks, again, func(a, b chunking.Chunk) bool { return a.Hash() == b.Hash() && a.Span().Start == b.Span().Start }) {
				t.Error("a second run gives other chunks")
			}
			golden.Check(t, golden.Stem(tc.path)+".golden", golden.Dump(t, chunks, warns, func(ch chunking.Chunk) string {
				sp := ch.Span()
				return fmt.Sprintf("%d chars, bytes %d-%d, %s", ch.Len(), sp.Start, sp.End, sp)
			}))
		})
	}
}
