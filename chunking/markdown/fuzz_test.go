package markdown_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

// FuzzChunk chunks arbitrary input with arbitrary small options, as
// Markdown and as MDX, and holds the invariants. It is seeded from the
// golden inputs.
func FuzzChunk(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Input, uint16(60), uint16(20), uint16(15), false)
		f.Add(tc.Input, uint16(2048), uint16(1024), uint16(128), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, maxChar, minChar, overlap uint16, mdx bool) {
		mc := int(maxChar%400) + 1
		opts := markdown.Config{MaxChar: mc, MinChar: int(minChar % 500), ChunkOverlap: int(overlap) % mc}
		c, err := markdown.New(opts)
		if err != nil {
			t.Fatalf("New(%+v): %v", opts, err)
		}
		format := "markdown"
		if mdx {
			format = "mdx"
		}
		doc := chunking.Document{Path: "f.md", Format: format, Content: src}
		chunks, _, err := c.Chunk(doc)
		if !utf8.Valid(src) {
			if !errors.Is(err, chunking.ErrNotUTF8) {
				t.Fatalf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Chunk: %v", err)
		}
		if err := CheckDocument(doc, chunks, opts); err != nil {
			t.Fatalf("Chunk(%q, %v): %v", src, opts, err)
		}
		again, _, _ := c.Chunk(doc)
		if err := Equal(chunks, again); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzChunkTokens is FuzzChunk with sizes in tokens (cl100k_base or
// o200k_base): the invariants hold with sizes counted in tokens.
func FuzzChunkTokens(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Input, uint16(20), uint16(8), uint16(4), false)
		f.Add(tc.Input, uint16(60), uint16(30), uint16(10), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, maxChar, minChar, overlap uint16, o200k bool) {
		mc := int(maxChar%200) + 1
		opts := markdown.Config{MaxChar: mc, MinChar: int(minChar % 250), ChunkOverlap: int(overlap) % mc, Tokenizer: "cl100k_base"}
		if o200k {
			opts.Tokenizer = "o200k_base"
		}
		checkFuzzed(t, src, opts)
	})
}

// FuzzChunkTarget is FuzzChunk in target mode, in characters or in
// tokens (cl100k_base): chunks cover the input, none is over the ceiling
// unless oversize, atomic blocks that fit are whole, spans are right.
func FuzzChunkTarget(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Input, uint16(40), false)
		f.Add(tc.Input, uint16(300), false)
		f.Add(tc.Input, uint16(12), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, n uint16, tokens bool) {
		opts := target(int(n%400)+1, "")
		if tokens {
			opts = target(int(n%100)+1, "cl100k_base")
		}
		checkFuzzed(t, src, opts)
	})
}

// target returns the configuration of target mode with target n, in
// tokens of tokenizer when it is set.
func target(n int, tokenizer string) markdown.Config {
	cfg := markdown.DefaultConfig()
	cfg.Tokenizer = tokenizer
	if tokenizer != "" {
		cfg.TargetTokens = n
	} else {
		cfg.TargetChar = n
	}
	return cfg
}

// checkFuzzed chunks src with opts as a Markdown file and holds the
// invariants (invalid UTF-8 must be ErrNotUTF8).
func checkFuzzed(t *testing.T, src []byte, opts markdown.Config) {
	t.Helper()
	c, err := markdown.New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	doc := chunking.Document{Path: "f.md", Content: src}
	chunks, _, err := c.Chunk(doc)
	if !utf8.Valid(src) {
		if !errors.Is(err, chunking.ErrNotUTF8) {
			t.Fatalf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Chunk: %v", err)
	}
	if err := CheckDocument(doc, chunks, opts); err != nil {
		t.Fatalf("Chunk(%q, %v): %v", src, opts, err)
	}
	if opts.Tokenizer != "" { // counted through section indexes: as without them
		plain, _, _ := markdown.WithoutIndex(c).Chunk(doc)
		if err := Equal(plain, chunks); err != nil {
			t.Fatalf("Chunk(%q, %v) without indexes, then with them: %v", src, opts, err)
		}
	}
}
