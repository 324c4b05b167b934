// Package registry is the one home of chunker policy: which chunkers
// exist, the formats each reads (and so which chunker a format gets by
// default), what its size option counts, its options and defaults, and
// the one place where raw option maps (requests, CLI flags, option files)
// become the chunkers' typed configurations. The worker, the producer and
// the commands ask it and never name a chunker.
//
// # Entries
//
// An Entry describes one chunker (its fields say what); Define builds it
// from the chunker's Config and one Spec per option. Default lists
// chunkstream's own; New builds any other Registry. Each call builds anew:
// there is no global state. A test checks that every exported field of
// every chunker's Config has exactly one spec and every spec a field.
//
// # Resolving a request
//
// A Resolver holds a registry and the workers' Defaults. Choose resolves
// one request: its format (explicit, else implied by the id's extension,
// else the first chunker's own; but a named chunker that does not read
// the implied format reads the document as its own first format:
// RequestFormat), its chunker (named, else the defaults'
// when it reads the format, else the first that does), its options
// (request over defaults over the chunker's own) and the size it asks
// for. Chunker builds the chunker, once per configuration.
//
// # Decoding
//
// Layers of raw options are applied in order onto the chunker's defaults,
// later layers winning (worker defaults before a request's options).
// Entry.Resolve returns the complete canonical map: every option with its
// effective value (of its Kind's type, sets sorted without repeats), so
// equal configurations resolve to equal maps, which with the chunker's
// name identify its behaviour; resolving a resolved map gives it back. An
// option marked OmitDefault (tokenizer) is left out while it has its
// default value, so that configurations that do not use it keep the
// fingerprints recorded without it.
//
// Decoding is strict and speaks the words of the person who wrote the
// options, accepting what docs/wire.md ("Options: absent vs zero") lists,
// in any Go integer type, float64 or json.Number: an error names the
// option and what it got ("chunker markdown: max_char: want an integer,
// got the string \"abc\""), never a Go type. Errors wrap
// chunking.ErrUnknownOption, chunking.ErrInvalidOptions or
// ErrUnknownChunker, for errors.Is.
package registry
