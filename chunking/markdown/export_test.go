package markdown

import (
	"context"

	"github.com/chunkstream/chunkstream/chunking"
)

// Work returns the work c counts chunking doc (see package poll): the
// operation count of the linearity tests.
func Work(c *Chunker, src []byte) int {
	_, n, err := c.chunkFunc(context.Background(), chunking.Document{Content: src}, func(chunking.Chunk) bool { return true })
	if err != nil {
		panic(err)
	}
	return n
}
