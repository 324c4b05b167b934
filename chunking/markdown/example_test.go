package markdown_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

func ExampleChunker_Chunk() {
	c, err := markdown.New(chunking.Options{"min_char": 1})
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
	_, err := markdown.New(chunking.Options{"max_char": 100, "chunk_overlap": 128})
	fmt.Println(err)
	// Output:
	// chunking: invalid options: chunk_overlap (128) must be < max_char (100)
}
