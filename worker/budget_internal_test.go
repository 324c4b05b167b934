package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
)

// streamChunker is a StreamChunker made of a function.
type streamChunker func(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error)

func (f streamChunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return f(ctx, doc, yield)
}

func (f streamChunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	var out []chunking.Chunk
	w, err := f(context.Background(), doc, func(c chunking.Chunk) bool { out = append(out, c); return true })
	return out, w, err
}

// numbered returns n chunks "chunk 0", "chunk 1", ….
func numbered(n int) []chunking.Chunk {
	out := make([]chunking.Chunk, n)
	for i := range out {
		out[i] = chunking.NewChunk(fmt.Sprintf("chunk %d", i), nil)
	}
	return out
}

// TestChunkWithin checks the per-document budgets on one call each, in a
// bubble whose clock only moves when every goroutine waits: the chunkers
// wait on their context or sleep, so each outcome is decided by the
// budget, not by the machine's speed.
func TestChunkWithin(t *testing.T) {
	var yields int
	// waiter works until its context ends, as a StreamChunker must.
	waiter := streamChunker(func(ctx context.Context, _ chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
		for _, c := range numbered(3) {
			yield(c)
		}
		<-ctx.Done()
		return nil, fmt.Errorf("waiter: %w", ctx.Err())
	})
	// endless yields chunks until yield refuses one (a thousand at most,
	// so that a worker that never refuses fails the test instead of
	// hanging it).
	endless := streamChunker(func(_ context.Context, _ chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
		for i := range 1000 {
			yields++
			if !yield(chunking.NewChunk(fmt.Sprint(i), nil)) {
				break
			}
		}
		return nil, nil
	})
	// sleeper ignores its context (a plain Chunker) and returns late.
	sleeper := chunking.ChunkerFunc(func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		time.Sleep(time.Second)
		return numbered(2), nil, nil
	})
	plain := chunking.ChunkerFunc(func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		return numbered(20), nil, nil
	})
	cases := []struct {
		name     string
		ch       chunking.Chunker
		time     time.Duration
		chunks   int
		shutdown bool // the caller's context ends during the call
		want     int  // chunks returned, or -1 for an error
		reason   []string
		yields   int // chunks endless handed out, when it is the chunker
	}{
		{"stopped at the time budget", waiter, 200 * time.Millisecond, 0, false, -1,
			[]string{"too complex", "200ms budget (CHUNKSTREAM_MAX_CHUNK_TIME)", "stopped after 200ms; chunks made: 3 (21 bytes of text)", "12-byte document"}, 0},
		{"late chunker that ignores its context", sleeper, 200 * time.Millisecond, 0, false, -1,
			[]string{"too complex", "200ms budget", "the chunker returned after 1s; chunks made: 2 (14 bytes of text)"}, 0},
		{"chunk limit stops the stream", endless, time.Minute, 5, false, -1,
			[]string{"too complex", "more than 5 chunks (CHUNKSTREAM_MAX_CHUNKS_PER_DOC): stopped at chunk 6"}, 6},
		{"chunk limit on a plain chunker", plain, time.Minute, 19, false, -1,
			[]string{"too complex", "more than 19 chunks"}, 0},
		{"within the budgets", plain, time.Minute, 20, false, 20, nil, 0},
		{"no limits", sleeper, 0, 0, false, 2, nil, 0},
		{"shutdown is not a budget", waiter, time.Minute, 0, true, -1, []string{"waiter: context canceled"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := testWorker()
				w.cfg.MaxChunkTime, w.cfg.MaxChunksPerDoc = c.time, c.chunks
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if c.shutdown {
					time.AfterFunc(time.Second, cancel)
				}
				yields = 0
				out, _, err := w.proc.chunkWithin(ctx, c.ch, chunking.Document{Path: "d.md", Content: []byte("hello, world")})
				if c.yields > 0 && yields != c.yields {
					t.Errorf("the chunker handed out %d chunks, want %d (stopped at the first one over)", yields, c.yields)
				}
				if c.want >= 0 {
					if err != nil || len(out) != c.want {
						t.Fatalf("chunkWithin = %d chunks, %v; want %d chunks", len(out), err, c.want)
					}
					return
				}
				if err == nil || out != nil {
					t.Fatalf("chunkWithin = %d chunks, %v; want an error and no chunks", len(out), err)
				}
				if got := errors.Is(err, errTooComplex); got == c.shutdown {
					t.Errorf("errors.Is(%v, errTooComplex) = %v", err, got)
				}
				for _, s := range c.reason {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
			})
		})
	}
}

// TestCheckChunkSize: the smallest chunk size a request may ask for, in
// the unit its size counts, read from the resolved options whatever type
// the wire gave it.
func TestCheckChunkSize(t *testing.T) {
	cases := []struct {
		name    string
		chunker string
		opts    map[string]any
		chars   int
		want    string // "" when accepted
	}{
		{"markdown below", "markdown", map[string]any{"max_char": 8, "chunk_overlap": 0}, 32, "chunker markdown: chunking: invalid options: max_char 8 is below the smallest chunk size this worker accepts, 32 characters (CHUNKSTREAM_MIN_CHUNK_CHARS)"},
		{"markdown as a JSON number", "markdown", map[string]any{"max_char": json.Number("16"), "chunk_overlap": 0}, 32, "max_char 16 is below"},
		{"markdown as a float", "markdown", map[string]any{"max_char": 31.0, "chunk_overlap": 0}, 32, "max_char 31 is below"},
		{"markdown as a string", "markdown", map[string]any{"max_char": "1", "chunk_overlap": 0}, 32, "max_char 1 is below"},
		{"markdown at the bound", "markdown", map[string]any{"max_char": 32, "chunk_overlap": 0}, 32, ""},
		{"markdown default", "markdown", map[string]any{"min_char": 0}, 4096, ""},
		{"no bound", "markdown", map[string]any{"max_char": 1, "chunk_overlap": 0}, 0, ""},
		{"email below", "email", map[string]any{"max_chars": 300}, 512, "max_chars 300 is below the smallest chunk size this worker accepts, 512 characters"},
		{"twostep below", "twostep", map[string]any{"max_chunk_size": 3}, 32, "max_chunk_size 3 is below the smallest chunk size this worker accepts, 8 words (CHUNKSTREAM_MIN_CHUNK_WORDS)"},
		{"twostep at the bound", "twostep", map[string]any{"max_chunk_size": 8}, 32, ""},
		// 20 tokens are about 80 characters: the bound is in tokens.
		{"markdown in tokens", "markdown", map[string]any{"max_char": 20, "min_char": 0, "chunk_overlap": 0, "tokenizer": "cl100k_base"}, 32, ""},
		{"markdown in tokens below", "markdown", map[string]any{"max_char": 4, "min_char": 0, "chunk_overlap": 0, "tokenizer": "cl100k_base"}, 32, "max_char 4 is below the smallest chunk size this worker accepts, 8 tokens (CHUNKSTREAM_MIN_CHUNK_TOKENS)"},
		{"twostep in tokens", "twostep", map[string]any{"max_chunk_size": 20, "tokenizer": "o200k_base"}, 32, ""},
		// A target is bounded as the size it replaces, in its unit.
		{"markdown target below", "markdown", map[string]any{"target_char": 20}, 32, "target_char 20 is below the smallest chunk size this worker accepts, 32 characters (CHUNKSTREAM_MIN_CHUNK_CHARS)"},
		{"twostep target in characters", "twostep", map[string]any{"target_char": 20}, 32, "target_char 20 is below the smallest chunk size this worker accepts, 32 characters"},
		{"twostep target at the bound", "twostep", map[string]any{"target_char": 32}, 32, ""},
		{"markdown target in tokens below", "markdown", map[string]any{"target_tokens": 4, "tokenizer": "cl100k_base"}, 32, "target_tokens 4 is below the smallest chunk size this worker accepts, 8 tokens (CHUNKSTREAM_MIN_CHUNK_TOKENS)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := testWorker()
			w.cfg.MinChunkChars = c.chars
			choice, err := w.fleet.resolver().Choose(registry.Request{ID: "a.md", Chunker: c.chunker, Options: c.opts})
			if c.chunker == "email" {
				choice, err = w.fleet.resolver().Choose(registry.Request{ID: "a.mbox", Chunker: c.chunker, Options: c.opts})
			}
			if err != nil {
				t.Fatal(err)
			}
			err = w.proc.checkChunkSize(choice)
			if c.want == "" {
				if err != nil {
					t.Errorf("checkChunkSize = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, chunking.ErrInvalidOptions) {
				t.Errorf("checkChunkSize = %v, want ErrInvalidOptions containing %q", err, c.want)
			}
		})
	}
}
