package markdown

import (
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// Polled chunks src with c counting the work on pl (see package poll),
// and returns the number of chunks yielded and the error: the linearity
// and cancellation tests' view of the work.
func Polled(c *Chunker, src []byte, pl *poll.Poller) (int, error) {
	n := 0
	_, err := c.chunkPolled(pl, chunking.Document{Content: src}, func(chunking.Chunk) bool { n++; return true })
	return n, err
}

// Work returns the work c counts chunking src.
func Work(c *Chunker, src []byte) int {
	pl := new(poll.Poller)
	if _, err := Polled(c, src, pl); err != nil {
		panic(err)
	}
	return pl.Work()
}

// WithoutSpans returns a copy of c that gives chunks without spans: the
// benchmarks' baseline for what spans cost.
func WithoutSpans(c *Chunker) *Chunker {
	d := *c
	d.noSpans = true
	return &d
}

// WithoutIndex returns a copy of c that counts tokens without section
// indexes (each span counted on its own, as before them): the differential
// tests' reference.
func WithoutIndex(c *Chunker) *Chunker {
	d := *c
	d.noIndex = true
	return &d
}

// Scanned returns a copy of c that adds the bytes its token counter scans
// to *n: the work the counting tests count.
func Scanned(c *Chunker, n *int) *Chunker {
	d := *c
	d.scanned = n
	return &d
}
