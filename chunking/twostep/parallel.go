package twostep

import (
	"context"
	"sync"

	"github.com/chunkstream/chunkstream/chunking"
)

// Result is the outcome of chunking one document with ChunkDocuments.
type Result struct {
	Chunks   []chunking.Chunk
	Warnings []chunking.Warning
	// Err is the document's error (not UTF-8, unsupported format); the
	// other documents are chunked regardless.
	Err error
}

// ChunkDocuments chunks docs on up to workers goroutines (workers < 1
// means Workers(): max_workers, else one per CPU) and returns one Result
// per document, in input order however many workers run. It stops early
// when ctx is cancelled and returns ctx's error; results of documents not
// chunked by then are zero.
func (c *Chunker) ChunkDocuments(ctx context.Context, docs []chunking.Document, workers int) ([]Result, error) {
	if workers < 1 {
		workers = c.Workers()
	}
	workers = max(1, min(workers, len(docs)))
	results := make([]Result, len(docs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				ch, ws, err := c.Chunk(docs[i])
				results[i] = Result{Chunks: ch, Warnings: ws, Err: err}
			}
		})
	}
	var err error
feed:
	for i := range docs {
		select {
		case next <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	return results, err
}
