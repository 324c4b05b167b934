package twostep_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/twostep"
)

func Example() {
	opts, err := chunking.DecodeOptions(twostep.Specs(), map[string]any{"max_chunk_size": 7})
	if err != nil {
		panic(err)
	}
	c, err := twostep.New(opts)
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
