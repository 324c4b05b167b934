package local

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/worker"
)

// collector is local mode's sink. It writes the chunks in document id
// order as soon as every earlier document is settled (written, or
// dead-lettered, or unreadable), so only the documents finished out of
// order wait in memory. When the ids are not known in advance (split
// inputs: the parts are found by the producer) it writes everything at
// the end.
type collector struct {
	mu      sync.Mutex
	cw      chunking.ChunkWriter
	order   []string             // the ids in the order they are sent (setOrder); nil until known, or when unknown
	next    int                  // order[next] is the next document to write
	docs    map[string]collected // finished, not written yet
	settled map[string]bool      // finished without chunks to write
	written map[string]bool
	n       int // chunks written
	err     error
}

type collected struct {
	seq    uint64
	chunks []worker.Chunk
}

func newCollector(cw chunking.ChunkWriter) *collector {
	return &collector{cw: cw, docs: map[string]collected{}, settled: map[string]bool{}, written: map[string]bool{}}
}

// setOrder gives the ids of the documents in the order to write them,
// once known and before any of them is written.
func (c *collector) setOrder(order []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = order
	c.flushLocked()
}

// Write implements worker.Sink: it keeps the newest version of each
// document.
func (c *collector) Write(_ context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written[doc.ID] {
		return nil // a redelivery of a document already written
	}
	if cur, ok := c.docs[doc.ID]; ok && cur.seq > doc.Seq {
		return nil
	}
	cs := slices.Clone(chunks)
	slices.SortFunc(cs, func(a, b worker.Chunk) int { return a.Position - b.Position })
	c.docs[doc.ID] = collected{seq: doc.Seq, chunks: cs}
	c.flushLocked()
	return nil
}

// settle marks a document finished without a write (dead letter, unread
// file), so the documents after it can be written.
func (c *collector) settle(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled[id] = true
	c.flushLocked()
}

func (c *collector) writeDoc(id string) {
	for _, ch := range c.docs[id].chunks {
		if c.err != nil {
			break
		}
		if err := c.cw.Write(ch.Chunk); err != nil {
			c.err = fmt.Errorf("write chunks of %s: %w", id, err)
			break
		}
		c.n++
	}
	delete(c.docs, id)
	c.written[id] = true
}

func (c *collector) flushLocked() {
	for c.next < len(c.order) {
		id := c.order[c.next]
		if _, ok := c.docs[id]; ok {
			c.writeDoc(id)
		} else if !c.settled[id] {
			return
		}
		c.next++
	}
}

// finish writes what is left (documents not in the expected order, or
// every document when the order was unknown), in id order, closes the
// chunk writer and returns the number of chunks written.
func (c *collector) finish() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(c.docs)) {
		c.writeDoc(id)
	}
	if err := c.cw.Close(); err != nil && c.err == nil {
		c.err = err
	}
	return c.n, c.err
}
