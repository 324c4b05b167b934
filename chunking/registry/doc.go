// Package registry lists chunkstream's chunkers for the CLIs and the
// worker: each Entry holds a chunker's name, its option specs, its
// constructor, the file extensions a folder walk picks for it, and
// optional hooks (a parse-only baseline for benchmarks, and a path opener
// for chunkers that read a whole folder or mailbox as one input).
//
// The list is a literal in one function (entries), one entry per chunker,
// so that adding a chunker is adding one entry. Entries returns a fresh
// copy each time: the registry holds no mutable global state.
//
// Raw options (from the wire or from flags) go through
// chunking.DecodeOptions with the entry's specs, then the entry's New;
// unknown option names wrap chunking.ErrUnknownOption, bad values
// chunking.ErrInvalidOptions, unknown chunkers ErrUnknownChunker.
package registry
