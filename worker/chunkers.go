package worker

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/chunkstream/chunkstream/chunking"
)

// NewChunkerFunc builds a chunker from its name and raw options, as
// registry.NewChunker does; errors wrap registry.ErrUnknownChunker,
// chunking.ErrUnknownOption or chunking.ErrInvalidOptions.
type NewChunkerFunc func(name string, raw map[string]any) (chunking.Chunker, error)

// maxCachedChunkers bounds the chunker cache: requests with ever-new
// option sets must not grow memory without limit.
const maxCachedChunkers = 64

// chunkerCache builds chunkers once per (name, resolved options) and
// reuses them; chunkers are safe for concurrent use. Keyed on the
// resolved options, requests that spell one configuration differently
// (an option given its default value, or left out) share one chunker.
type chunkerCache struct {
	build NewChunkerFunc
	mu    sync.Mutex
	m     map[string]chunking.Chunker
}

func newChunkerCache(build NewChunkerFunc) *chunkerCache {
	return &chunkerCache{build: build, m: make(map[string]chunking.Chunker)}
}

// get returns the chunker for name and its resolved options (merged raw
// ones for a chunker only the build function knows). Construction errors
// are returned as they are (the caller classifies them) and not cached.
func (c *chunkerCache) get(name string, opts map[string]any) (chunking.Chunker, error) {
	keyOpts, err := json.Marshal(opts) // map keys are sorted: a canonical key
	if err != nil {
		return c.build(name, opts)
	}
	key := name + "\x00" + string(keyOpts)
	c.mu.Lock()
	ch, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return ch, nil
	}
	ch, err = c.build(name, opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) < maxCachedChunkers {
		c.m[key] = ch
	}
	c.mu.Unlock()
	return ch, nil
}

// panicError is a panic recovered inside a chunker.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("chunker panic: %v", e.value) }

// safeChunk runs the chunker, turning a panic into a *panicError.
func safeChunk(ch chunking.Chunker, doc chunking.Document) (chunks []chunking.Chunk, warnings []chunking.Warning, err error) {
	defer func() {
		if r := recover(); r != nil {
			chunks, warnings = nil, nil
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return ch.Chunk(doc)
}
