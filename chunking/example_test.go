package chunking_test

import (
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
)

func ExampleNewChunk() {
	c := chunking.NewChunk("Hello world", chunking.Metadata{{Key: "index", Value: 0}})
	fmt.Println(c.Hash())
	fmt.Println(c.Len(), c.VerifyHash())
	fmt.Println(c.String(8, chunking.Trailing))
	// Output:
	// f1cf36017b964e8158c0cb0414af8ab26af7438229af27ace253852aea5d7bea
	// 11 true
	// {
	//   "index": 0
	// }
	// Hello...
}

func ExampleCollection() {
	md := func(file string, index int) chunking.Metadata {
		return chunking.Metadata{{Key: "index", Value: index}, {Key: "file", Value: file}}
	}
	c := chunking.NewCollection([]chunking.Chunk{
		chunking.NewChunk("# A\nintro", md("docs/a.md", 0)),
		chunking.NewChunk("## B\nmore", md("docs/a.md", 1)),
		chunking.NewChunk("readme", md("README.md", 0)),
	})
	fmt.Println(c.Len(), c.Files())
	prev, next := c.Neighbours(1, 1, 1)
	fmt.Println(prev, next)
	for _, ch := range c.TopLevelChunks() {
		fmt.Println(ch.Content())
	}
	// Output:
	// 3 [docs/a.md README.md]
	// [0] []
	// readme
}

func ExampleInspector_Summary() {
	c := chunking.NewCollection([]chunking.Chunk{
		chunking.NewChunk("one", chunking.Metadata{{Key: "index", Value: 0}, {Key: "file", Value: "docs/a.md"}}),
		chunking.NewChunk("three", chunking.Metadata{{Key: "index", Value: 1}, {Key: "file", Value: "docs/a.md"}}),
		chunking.NewChunk("x", chunking.Metadata{{Key: "index", Value: 0}, {Key: "file", Value: "b.md"}}),
	})
	fmt.Println(chunking.NewInspector(c).Summary(chunking.DefaultMaxDepth, chunking.DefaultMaxFilesPerFolder))
	// Output:
	// ChunkCollection Summary
	// Total chunks: 3
	// Total files: 2
	//
	// Chunk Size Statistics:
	//   Min: 1 chars (b.md, chunk 0)
	//   Max: 5 chars (docs/a.md, chunk 1)
	//   Mean: 3 chars
	//   Histogram:
	//     1-1 chars: 1
	//     2-2 chars: 0
	//     3-3 chars: 1
	//     4-4 chars: 0
	//     5-5 chars: 1
	//
	// File Structure:
	// ├── docs/
	// │   └── a.md (2 chunks)
	// └── b.md (1 chunks)
}
