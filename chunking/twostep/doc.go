// Package twostep is the two-step chunker for scientific and technical
// documents (modelled on a reference two-step chunker; docs/chunkers.md
// names it): split by headers, then split long sections into sentences
// and atomic units and pack them by words; merge small chunks; add
// overlaps and header lines.
//
//	cfg := twostep.DefaultConfig()
//	cfg.MaxChunkSize = 256
//	c, err := twostep.New(cfg)
//	chunks, warnings, err := c.Chunk(doc) // pure, concurrency-safe
//
// ChunkFunc, ChunkFile and ChunkFolder say on each method how they read
// and stop, and Config documents each option with its reference name and
// bounds. Blocks come from chunking/internal/mdblocks (one goldmark block
// parse), sentences from chunking/internal/sentences.
//
// docs/chunkers.md has the whole behaviour: "Two-step" (each step,
// metadata, sentences, every deviation from the reference), "Two-step
// details" (every decision the reference leaves open, tokens, target
// mode, cost), "Token budgets" and "Target mode". Every step is linear in
// the document, hostile input included; a document shares one copy of
// its text among its chunks.
package twostep
