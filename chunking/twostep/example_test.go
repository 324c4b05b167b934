package twostep_test

import (
	"context"
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/twostep"
)

func Example() {
	cfg := twostep.DefaultConfig()
	cfg.MaxChunkSize = 7 // words
	c, err := twostep.New(cfg)
	if err != nil {
		panic(err)
	}
	doc := chunking.Document{Path: "pets.md", Content: []byte("# Pets\nThe cat sat. See Fig. 3. The dog ran.\nThe bird flew.")}
	chunks, _, err := c.Chunk(doc)
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%v %q\n", ch.Get("headers", nil), ch.Content())
	}
	// Output:
	// [#Pets] "# Pets\nThe cat sat."
	// [#Pets] "See Fig. 3. The dog ran."
	// [#Pets] "The bird flew."
}

// ChunkFunc hands the chunks out one at a time and stops when the
// context ends: here, after the first chunk.
func ExampleChunker_ChunkFunc() {
	cfg := twostep.DefaultConfig()
	cfg.MaxChunkSize = 3
	cfg.AddHeaders = true
	c, err := twostep.New(cfg)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doc := chunking.Document{Path: "a.md", Content: []byte("# Title\nOne two. Three four. Five six.")}
	_, err = c.ChunkFunc(ctx, doc, func(ch chunking.Chunk) bool {
		fmt.Printf("%q\n", ch.Content())
		cancel() // a time budget running out
		return true
	})
	fmt.Println(err)
	// Output:
	// "# Title"
	// twostep: a.md: context canceled
}
