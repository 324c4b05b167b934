package twostep_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/golden"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/twostep"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// dump renders chunks as the golden files hold them, in the Markdown
// chunker's style, a chunk's size in words and characters (with a
// tokenizer, its tokens too).
func dump(t testing.TB, chunks []chunking.Chunk, warns []chunking.Warning, tokenizer string) []byte {
	var enc *tokens.Encoding
	if tokenizer != "" {
		var err error
		if enc, err = tokens.Get(tokenizer); err != nil {
			t.Fatal(err)
		}
	}
	return golden.Dump(t, chunks, warns, func(ch chunking.Chunk) string {
		if enc != nil {
			return fmt.Sprintf("%d words, %d chars, %d %s tokens", sentences.CountWords(ch.Content()), ch.Len(), enc.CountString(ch.Content()), tokenizer)
		}
		return fmt.Sprintf("%d words, %d chars", sentences.CountWords(ch.Content()), ch.Len())
	})
}

// TestGolden chunks every input in testdata/ with the options of its
// sidecar, read as the wire reads them, checks the invariants and
// compares the dump with <case>.golden (go test -update rewrites it).
func TestGolden(t *testing.T) {
	entry, err := registry.Default().Lookup("twostep")
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range golden.Inputs(t, "testdata", "*.md", "*.mdx", "*.txt") {
		name := filepath.Base(input)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			c, err := entry.New(golden.Options(t, input))
			if err != nil {
				t.Fatal(err)
			}
			doc := chunking.Document{Path: name, Content: src}
			chunks := twostep.CheckInvariants(t, c.(*twostep.Chunker), doc)
			_, warns, _ := c.Chunk(doc)
			golden.Check(t, golden.Stem(input)+".golden", dump(t, chunks, warns, c.(*twostep.Chunker).Config().Tokenizer))
		})
	}
}
