package chunking

import (
	"slices"
	"strings"
	"testing"
)

// specChunks are the chunks of the reference's summary example: doc.md (4 and
// 2 characters), guide/ref.md (6), guide/deep/x.md (4), z.md (1).
func specChunks() []Chunk {
	mk := func(content, file string, index int) Chunk {
		return NewChunk(content, Metadata{{"index", index}, {"file", file}})
	}
	return []Chunk{
		mk("aaaa", "doc.md", 0),
		mk("bb", "doc.md", 1),
		mk("cccccc", "guide/ref.md", 0),
		mk("dddd", "guide/deep/x.md", 0),
		mk("e", "z.md", 0),
	}
}

func TestCollectionNavigation(t *testing.T) {
	chunks := specChunks()
	dup := NewChunk("aaaa", Metadata{{"index", 0}, {"file", "doc.md"}}) // same hash as chunk 0
	chunks = append(chunks, dup, NewChunk("f", Metadata{{"index", 2}, {"file", "doc.md"}}))
	c := NewCollection(chunks)
	chunks[0] = NewChunk("changed", nil)
	if c.At(0).Content() != "aaaa" {
		t.Errorf("NewCollection did not copy its input")
	}
	if got, want := c.Files(), []string{"doc.md", "guide/ref.md", "guide/deep/x.md", "z.md"}; !slices.Equal(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
	if got := c.FilePositions("doc.md"); !slices.Equal(got, []int{0, 1, 5, 6}) {
		t.Errorf("FilePositions(doc.md) = %v", got)
	}
	if got := c.FileChunks("none"); got != nil {
		t.Errorf("FileChunks(none) = %v, want nil", got)
	}
	if f, p := c.File(5); f != "doc.md" || p != 2 {
		t.Errorf("File(5) = %s, %d, want doc.md, 2", f, p)
	}
	prev, next := c.Neighbours(5, 1, 1)
	if !slices.Equal(prev, []int{1}) || !slices.Equal(next, []int{6}) {
		t.Errorf("Neighbours(5, 1, 1) = %v, %v, want [1], [6]", prev, next)
	}
	prev, next = c.Neighbours(0, 3, 5)
	if len(prev) != 0 || !slices.Equal(next, []int{1, 5, 6}) {
		t.Errorf("Neighbours(0, 3, 5) = %v, %v, want [], [1 5 6]", prev, next)
	}
	if i, ok := c.ChunkByHash(dup.Hash()); !ok || i != 0 {
		t.Errorf("ChunkByHash(dup) = %d, %v, want 0 (first match)", i, ok)
	}
	if _, ok := c.ChunkByHash("nope"); ok {
		t.Errorf("ChunkByHash(nope) found something")
	}
	top := c.TopLevelChunks()
	if len(top) != 5 || top[2].Content() != "e" || top[4].Content() != "f" {
		t.Errorf("TopLevelChunks() = %v, want the 5 chunks of doc.md and z.md", top)
	}
	ctx := c.ChunkWithContext(5, 200, true, true)
	if !strings.HasSuffix(ctx.Before, "\nbb") || !strings.HasSuffix(ctx.After, "\nf") || !strings.HasSuffix(ctx.Chunk, "\naaaa") {
		t.Errorf("ChunkWithContext(5) = %+v", ctx)
	}
	ctx = c.ChunkWithContext(4, 200, true, false)
	if ctx.Before != "(No previous chunk)" || ctx.After != "" {
		t.Errorf("ChunkWithContext(4, before only) = %+v", ctx)
	}
	n := 0
	for i, ch := range c.All() {
		if ch.Hash() != c.At(i).Hash() {
			t.Errorf("All() yields %d out of place", i)
		}
		n++
	}
	if n != c.Len() {
		t.Errorf("All() yielded %d chunks, want %d", n, c.Len())
	}
}
