package chunking

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// UnknownFile is the file name of chunks whose metadata has no "file".
const UnknownFile = "unknown"

// DefaultContextMaxChars is the reference's default context_max_chars: how
// many characters of a neighbouring chunk a context preview shows.
const DefaultContextMaxChars = 200

// Collection is an immutable list of chunks that knows each chunk's file
// (metadata "file", UnknownFile when absent) and position within it. See
// the package documentation for identity, panics and aliasing.
type Collection struct {
	chunks []Chunk
	files  []string         // first-seen order
	byFile map[string][]int // file → positions, in order
	fileOf []string         // position → file
	posIn  []int            // position → position within its file
}

// NewCollection returns a collection of a copy of chunks.
func NewCollection(chunks []Chunk) *Collection {
	c := &Collection{
		chunks: slices.Clone(chunks),
		byFile: make(map[string][]int),
		fileOf: make([]string, len(chunks)),
		posIn:  make([]int, len(chunks)),
	}
	for i, ch := range c.chunks {
		f := chunkFile(ch)
		ps, seen := c.byFile[f]
		if !seen {
			c.files = append(c.files, f)
		}
		c.fileOf[i] = f
		c.posIn[i] = len(ps)
		c.byFile[f] = append(ps, i)
	}
	return c
}

// chunkFile returns the chunk's "file" metadata as text (fmt.Sprint of a
// non-string), UnknownFile when absent.
func chunkFile(ch Chunk) string {
	v, ok := ch.metadata.Get("file")
	if !ok || v == nil {
		return UnknownFile
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Len returns the number of chunks.
func (c *Collection) Len() int { return len(c.chunks) }

// At returns the chunk at position i.
func (c *Collection) At(i int) Chunk { return c.chunks[i] }

// All iterates over the positions and chunks in order.
func (c *Collection) All() iter.Seq2[int, Chunk] { return slices.All(c.chunks) }

// Chunks returns a copy of the chunks in order.
func (c *Collection) Chunks() []Chunk { return slices.Clone(c.chunks) }

// Files returns the distinct source files in first-seen order.
func (c *Collection) Files() []string { return slices.Clone(c.files) }

// File returns the source file of the chunk at position i and the chunk's
// position within that file.
func (c *Collection) File(i int) (file string, pos int) { return c.fileOf[i], c.posIn[i] }

// FilePositions returns the collection positions of file's chunks, in
// order; nil for a file the collection does not hold.
func (c *Collection) FilePositions(file string) []int { return slices.Clone(c.byFile[file]) }

// FileChunks returns file's chunks in order; nil for a file the collection
// does not hold.
func (c *Collection) FileChunks(file string) []Chunk {
	ps := c.byFile[file]
	if ps == nil {
		return nil
	}
	out := make([]Chunk, len(ps))
	for k, p := range ps {
		out[k] = c.chunks[p]
	}
	return out
}

// Neighbours returns the positions of up to before chunks preceding and up
// to after chunks following the chunk at position i within the same file,
// each list in collection order. Negative counts count as zero.
func (c *Collection) Neighbours(i, before, after int) (prev, next []int) {
	ps := c.byFile[c.fileOf[i]]
	k := c.posIn[i]
	before, after = max(before, 0), max(after, 0)
	prev = slices.Clone(ps[max(0, k-before):k])
	next = slices.Clone(ps[k+1 : min(len(ps), k+1+after)])
	return prev, next
}

// ChunkByHash returns the position of the first chunk whose hash is h.
func (c *Collection) ChunkByHash(h string) (int, bool) {
	for i, ch := range c.chunks {
		if ch.hash == h {
			return i, true
		}
	}
	return -1, false
}

// TopLevelChunks returns the chunks of the files with the fewest "/" in
// their path, in collection order.
func (c *Collection) TopLevelChunks() []Chunk {
	if len(c.files) == 0 {
		return nil
	}
	depth := func(f string) int { return strings.Count(f, "/") }
	least := depth(slices.MinFunc(c.files, func(a, b string) int { return depth(a) - depth(b) }))
	var out []Chunk
	for i, ch := range c.chunks {
		if depth(c.fileOf[i]) == least {
			out = append(out, ch)
		}
	}
	return out
}

// ChunkContext is a chunk shown with its neighbours (ChunkWithContext).
type ChunkContext struct {
	// Before is the previous chunk of the file (String, cut Leading), or
	// "(No previous chunk)"; empty when not asked for.
	Before string
	// Chunk is the chunk's String(NoLimit, Trailing).
	Chunk string
	// After is the next chunk of the file (cut Trailing), or "(No next
	// chunk)"; empty when not asked for.
	After string
}

// ChunkWithContext returns the chunk at position i with previews of the
// previous and next chunk of its file, each cut to contextMaxChars
// characters of content (the reference's chunk_with_context).
func (c *Collection) ChunkWithContext(i, contextMaxChars int, includeBefore, includeAfter bool) ChunkContext {
	out := ChunkContext{Chunk: c.chunks[i].String(NoLimit, Trailing)}
	prev, next := c.Neighbours(i, 1, 1)
	if includeBefore {
		out.Before = "(No previous chunk)"
		if len(prev) > 0 {
			out.Before = c.chunks[prev[0]].String(contextMaxChars, Leading)
		}
	}
	if includeAfter {
		out.After = "(No next chunk)"
		if len(next) > 0 {
			out.After = c.chunks[next[0]].String(contextMaxChars, Trailing)
		}
	}
	return out
}
