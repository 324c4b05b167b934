// Package markdown is chunkstream's Markdown (and MDX) chunker: the
// reference MarkdownChunker's parameters (min_char 1024, max_char 2048,
// chunk_overlap 128), metadata keys and output, with the reference's
// mistakes fixed.
//
//	cfg := markdown.DefaultConfig() // min_char 1024, max_char 2048, chunk_overlap 128
//	cfg.MaxChar = 1000
//	c, err := markdown.New(cfg)
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "docs/a.md", Content: src})
//
// New validates a Config; Chunk is pure and safe for concurrent use, and
// ChunkFunc, ChunkFile and ChunkFolder say on each method how they read
// and stop. Blocks come from chunking/internal/mdblocks (goldmark, blocks
// only); chunk text is sliced from the source by offsets, never
// re-rendered.
//
// docs/chunkers.md has the whole behaviour: "Markdown" (sections, fusing,
// splitting, atomic blocks, tables, MDX, bounds, every deviation from the
// reference), "Markdown details" (every decision the reference leaves
// open, spans, warnings), "Token budgets" and "Target mode".
//
// Target mode (Config.TargetChar or TargetTokens) is target.go and the
// branches that test splitter.target: with the target off none of it
// runs, so the reference mode's output is unchanged byte for byte. It
// chooses each cut as pieces come, over the pieces that fit in the
// ceiling, so memory stays bounded and each piece is weighed a bounded
// number of times (TestTargetLinear).
//
// In token mode each section's text is counted once, into a tokens.Index,
// and every later count (the join with the group before it, the
// paragraphs, lines, words, chunks and overlaps of a split) is taken from
// it by scanning a span's two ends only: the same counts as each span
// counted alone (TestTokenIndexDifferential), about 1.2 bytes scanned per
// input byte against 2.3 (TestTokenWork).
package markdown
