package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// errTooComplex marks a document that needs more than a per-document
// budget (MaxChunkTime, MaxChunksPerDoc) to chunk.
var errTooComplex = errors.New("too complex")

// chunkWithin runs ch over doc within the per-document budgets (docs/operations.md, "Budgets per document")
// and returns its chunks. Over a budget, the error wraps errTooComplex;
// when ctx (the worker's) ends first, it wraps ctx's error.
func (p *processor) chunkWithin(ctx context.Context, ch chunking.Chunker, doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	budget, limit := p.cfg.MaxChunkTime, p.cfg.MaxChunksPerDoc
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if budget > 0 {
		cctx, cancel = context.WithTimeout(ctx, budget)
	}
	defer cancel()
	start := time.Now()
	var out []chunking.Chunk
	text, over := 0, false
	warnings, err := safeChunk(cctx, ch, doc, func(c chunking.Chunk) bool {
		if limit > 0 && len(out) >= limit {
			over = true
			return false
		}
		out = append(out, c)
		text += len(c.Content())
		return true
	})
	elapsed := time.Since(start)
	overTime := budget > 0 && (err == nil && elapsed > budget ||
		err != nil && errors.Is(err, context.DeadlineExceeded) && cctx.Err() != nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, nil, err
	case over:
		return nil, nil, fmt.Errorf("%w: the %d-byte document gives more than %d chunks (CHUNKSTREAM_MAX_CHUNKS_PER_DOC): stopped at chunk %d after %v",
			errTooComplex, len(doc.Content), limit, limit+1, roundDuration(elapsed))
	case overTime:
		verb := "stopped"
		if err == nil {
			verb = "the chunker returned" // it did not watch its context
		}
		return nil, nil, fmt.Errorf("%w: chunking the %d-byte document took longer than the %v budget (CHUNKSTREAM_MAX_CHUNK_TIME): %s after %v; chunks made: %d (%d bytes of text)",
			errTooComplex, len(doc.Content), budget, verb, roundDuration(elapsed), len(out), text)
	case err != nil:
		return nil, nil, err
	}
	return out, warnings, nil
}

// roundDuration rounds d for a reason: to the millisecond, or to the
// microsecond below one.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// checkChunkSize refuses a size option the request itself sets below the
// worker's bound in its unit: CheckChunkSize.
func (p *processor) checkChunkSize(c registry.Choice) error { return CheckChunkSize(*p.cfg, c) }

// CheckChunkSize refuses a size option a request sets itself (c.SizeSet)
// below cfg's bound in its unit (docs/operations.md, "Budgets per
// document"), with an error wrapping chunking.ErrInvalidOptions. Local
// mode runs it on its flags at start, as every document would be
// refused.
func CheckChunkSize(cfg Config, c registry.Choice) error {
	if !c.SizeSet {
		return nil
	}
	bound, setting := cfg.MinChunkChars, "CHUNKSTREAM_MIN_CHUNK_CHARS"
	switch c.Unit {
	case registry.Words:
		bound, setting = cfg.MinChunkWords, "CHUNKSTREAM_MIN_CHUNK_WORDS"
	case registry.Tokens:
		bound, setting = cfg.MinChunkTokens, "CHUNKSTREAM_MIN_CHUNK_TOKENS"
	}
	if c.Size >= bound {
		return nil
	}
	return fmt.Errorf("chunker %s: %w: %s %d is below the smallest chunk size this worker accepts, %d %s (%s)",
		c.Entry.Name, chunking.ErrInvalidOptions, c.SizeOption, c.Size, bound, c.Unit, setting)
}
