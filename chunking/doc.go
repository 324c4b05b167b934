// Package chunking is chunkstream's chunk model: the Chunk record and its
// reference-compatible hash, its Metadata and Span, the Collection of a
// document set's chunks, their storage in YAML and JSON Lines, the
// Document and Chunker interfaces, and the folder walk every chunker
// shares. The chunkers live in sub-packages (markdown, twostep, email,
// html, code); this package needs only the standard library, a YAML
// library and the module's internal codec.
//
// A Chunk is immutable: content, ordered Metadata (values of a closed
// set) and a hash, byte for byte the reference's; its Span travels beside
// it, never in its metadata, so hashes stay the reference's. A Chunker
// turns one Document into chunks and warnings, purely; every chunker of
// the module has the same shape (Config, DefaultConfig, New, Chunk,
// ChunkFunc, ChunkFile, ChunkFolder), and package registry decodes raw
// options into its Config.
//
// docs/wire.md ("Chunk hash", "Chunk span") defines the hash and the
// span; docs/chunkers.md ("The chunk model", "The chunk model in Go")
// has the deviations from the reference, metadata, collections, storage,
// concurrency and the chunkers' shape.
package chunking
