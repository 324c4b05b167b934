package markdown_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

func ExampleChunker_Chunk() {
	cfg := markdown.DefaultConfig()
	cfg.MinChar = 1 // fuse no sections
	c, err := markdown.New(cfg)
	if err != nil {
		panic(err)
	}
	src := "# Guide\n## Install\nRun the installer.\n\n## Use\nOpen the app."
	chunks, _, err := c.Chunk(chunking.Document{Path: "docs/guide.md", Content: []byte(src)})
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%v\n%s\n---\n", ch.Metadata(), ch.Content())
	}
	// Output:
	// [{h1 Guide} {h2 Install} {index 0} {file docs/guide.md}]
	// # Guide
	// ## Install
	// Run the installer.
	// ---
	// [{h1 Guide} {h2 Use} {index 1} {file docs/guide.md}]
	// ## Use
	// Open the app.
	// ---
}

func ExampleNew_invalid() {
	cfg := markdown.DefaultConfig()
	cfg.MaxChar = 100 // below the default chunk_overlap of 128
	_, err := markdown.New(cfg)
	fmt.Println(err)
	// Output:
	// chunking: invalid options: chunk_overlap (128) must be < max_char (100)
}

// ChunkFunc streams the chunks of a document and gives up when the
// context ends, as a caller with a time budget per document would use it.
func ExampleChunker_ChunkFunc() {
	c, err := markdown.New(markdown.Config{MaxChar: 20})
	if err != nil {
		panic(err)
	}
	doc := chunking.Document{Content: []byte("One sentence here. Another one there. A third one.")}
	_, err = c.ChunkFunc(context.Background(), doc, func(ch chunking.Chunk) bool {
		fmt.Printf("%q\n", ch.Content())
		return true
	})
	fmt.Println(err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the budget is spent before we start
	_, err = c.ChunkFunc(ctx, doc, func(chunking.Chunk) bool { return true })
	fmt.Println(err)
	// Output:
	// "One sentence here."
	// "Another one there."
	// "A third one."
	// <nil>
	// markdown: document: context canceled
}

func ExampleChunker_ChunkFolder() {
	dir, err := os.MkdirTemp("", "docs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{"b.md": "# B\nbee", "a/x.mdx": "import X from 'x'\n\n# X\nex", "notes.csv": "skipped"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	c, err := markdown.New(markdown.DefaultConfig())
	if err != nil {
		panic(err)
	}
	chunks, _, err := c.ChunkFolder(context.Background(), dir)
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%s: %q\n", ch.Get("file", nil), ch.Content())
	}
	// Output:
	// a/x.mdx: "# X\nex"
	// b.md: "# B\nbee"
}

// With a Tokenizer, the sizes count tokens of that encoding: here chunks
// of at most 12 cl100k_base tokens.
func ExampleConfig_tokenizer() {
	cfg := markdown.Config{MaxChar: 12, MinChar: 0, ChunkOverlap: 0, Tokenizer: "cl100k_base"}
	c, err := markdown.New(cfg)
	if err != nil {
		panic(err)
	}
	src := "Token budgets size chunks for an embedding model. Each chunk fits the model's input."
	chunks, _, err := c.Chunk(chunking.Document{Content: []byte(src)})
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%q\n", ch.Content())
	}
	// Output:
	// "Token budgets size chunks for an embedding model."
	// "Each chunk fits the model's input."
}
