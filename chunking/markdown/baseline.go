package markdown

import (
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// Baseline names the parse the chunker is built on: goldmark's CommonMark
// block parsers alone, the baseline of its benchmarks.
func (c *Chunker) Baseline() string { return "goldmark-blocks" }

// ParseOnly runs only that parse over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error {
	mdblocks.ParseOnly(doc.Content)
	return nil
}
