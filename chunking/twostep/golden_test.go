package twostep_test

import (
	"bytes"
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
// chunker's style: a count, then per chunk one header line with its size
// (with a tokenizer, its tokens too) and its metadata as ordered JSON,
// then its text between fences.
func dump(t testing.TB, chunks []chunking.Chunk, warns []chunking.Warning, tokenizer string) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d chunks\n", len(chunks))
	for i, ch := range chunks {
		md, err := golden.MetadataJSON(ch.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		if tokenizer != "" {
			enc, err := tokens.Get(tokenizer)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\n### chunk %d (%d words, %d chars, %d %s tokens) %s\n", i, sentences.CountWords(ch.Content()), ch.Len(), enc.CountString(ch.Content()), tokenizer, md)
		} else {
			fmt.Fprintf(&b, "\n### chunk %d (%d words, %d chars) %s\n", i, sentences.CountWords(ch.Content()), ch.Len(), md)
		}
		b.WriteString("┌────\n")
		b.WriteString(ch.Content())
		b.WriteString("\n└────\n")
	}
	for _, w := range warns {
		fmt.Fprintf(&b, "\n!!! warning: %s\n", w)
	}
	return b.Bytes()
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
