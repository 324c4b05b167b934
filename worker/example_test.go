package worker_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/worker"
)

// A sink of your own is a function: SinkFunc makes it a worker.Sink. This
// one keeps the latest chunks of each document in a map; an error wrapped
// with fault.Permanent is dead-lettered instead of retried.
func ExampleSinkFunc() {
	store := map[string][]string{}
	sink := worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		if doc.ID == "" {
			return fault.Permanent(errors.New("document without id"))
		}
		if doc.Op == worker.OpDelete {
			delete(store, doc.ID) // a delete comes with zero chunks
			return nil
		}
		texts := make([]string, len(chunks))
		for _, c := range chunks {
			texts[c.Position] = c.Chunk.Content()
		}
		store[doc.ID] = texts // the whole version at once: writing it twice is harmless
		return nil
	})

	var s worker.Sink = sink
	ctx := context.Background()
	chunks := []worker.Chunk{
		{Position: 0, Chunk: chunking.NewChunk("first", nil)},
		{Position: 1, Chunk: chunking.NewChunk("second", nil)},
	}
	fmt.Println(s.Write(ctx, worker.Doc{ID: "a", Op: worker.OpUpsert}, chunks), store)
	fmt.Println(s.Write(ctx, worker.Doc{ID: "a", Op: worker.OpDelete}, nil), store)
	err := s.Write(ctx, worker.Doc{Op: worker.OpUpsert}, nil)
	fmt.Println(fault.IsPermanent(err), err)
	// Output:
	// <nil> map[a:[first second]]
	// <nil> map[]
	// true document without id
}
