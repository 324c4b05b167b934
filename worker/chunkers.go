package worker

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/chunkstream/chunkstream/chunking"
)

// panicError is a panic recovered inside a chunker.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("chunker panic: %v", e.value) }

// safeChunk runs the chunker, handing its chunks to yield until it
// returns false, and turns a panic into a *panicError. Only a
// StreamChunker sees ctx; any other is called as Chunk, uninterruptible.
func safeChunk(ctx context.Context, ch chunking.Chunker, doc chunking.Document, yield func(chunking.Chunk) bool) (warnings []chunking.Warning, err error) {
	defer func() {
		if r := recover(); r != nil {
			warnings, err = nil, &panicError{value: r, stack: debug.Stack()}
		}
	}()
	if sc, ok := ch.(chunking.StreamChunker); ok {
		return sc.ChunkFunc(ctx, doc, yield)
	}
	out, warnings, err := ch.Chunk(doc)
	if err != nil {
		return nil, err
	}
	for _, c := range out {
		if !yield(c) {
			break
		}
	}
	return warnings, nil
}
