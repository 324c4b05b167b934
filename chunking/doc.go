// Package chunking is chunkstream's chunk model: the Chunk record and its
// reference-compatible hash, its Metadata and Span, the Collection of a
// document set's chunks, their storage in YAML and JSON Lines, the
// Document and Chunker interfaces, and the folder walk every chunker
// shares. The chunkers live in sub-packages (markdown, twostep, email);
// this package needs only the standard library, a YAML library and the
// module's internal codec.
//
// # Chunks and their hash
//
// A Chunk is immutable: content, ordered Metadata and a hash, the
// lowercase hex SHA-256 of M + "\n" + content, where M is the metadata as
// Python's json.dumps(metadata, indent=2, sort_keys=True) renders it, byte
// for byte the reference's (docs/wire.md, "Chunk hash", has the details
// and test vectors). A hash given at construction (NewChunkWithHash, as
// when loading) is kept; VerifyHash checks it.
//
// Metadata values are of a closed set (see Metadata). NewChunk brings
// other Go values into it once; loaders produce it directly; every writer
// handles that set only. An integer of any size keeps every digit through
// YAML, JSONL and the wire, and hashes as json.dumps writes a Python int.
// Mappings load as Metadata in their order (a repeated key keeps its first
// place and takes its last value), lists as []any.
//
// # Spans
//
// Every chunk a chunker of this module makes carries its Span beside it
// (Chunk.Span, Chunk.WithSpan), never in its metadata, so hashes stay the
// reference's. The span is a contract like the hash; JSONL, the wire's
// chunk record and the Qdrant payload write it as docs/wire.md ("Chunk
// span") defines:
//
//	"span": {"start": 310, "end": 912, "first_line": 12, "last_line": 30, "verbatim": true}
//	"span": {"message_ids": ["a@example.org", "b@example.org"]}
//
// A byte range [start, end) is of the document as given (for MDX, the
// file before cleaning) and covers the source text the content holds and
// nothing more; verbatim says the content is exactly those bytes. Email
// chunks have no byte range (their messages are decoded and may come from
// several files), only message_ids (the chunker's ids for messages
// without one).
//
// The zero Span is not written. YAML, the reference's format, neither
// writes nor reads spans (a "span" key is ignored). JSONL lines without
// "span" load; a "span" that breaks the rules, or has an unknown field, is
// ErrSpan inside ErrSyntax (the wire's reader ignores unknown fields).
//
// # Sizes
//
// Lengths count characters, that is Unicode code points (Chunk.Len).
// Writers refuse content that is not valid UTF-8 (ErrNotUTF8).
//
// # Collections
//
// A Collection identifies chunks by position, so equal-hash chunks keep
// their own places (ChunkByHash returns the first). It knows each chunk's
// file (metadata "file", UnknownFile when absent) and position within it;
// Neighbours and ChunkWithContext look within the chunk's file. Positions
// out of range panic, like slice indexes.
//
// # Storage
//
// Save and Load pick the format by extension (.jsonl, .yaml, .yml).
// JSONL holds one {"content", "metadata", "hash", "span"} object per line
// ("span" only when the chunk has one); loading verifies each hash
// (ErrHashMismatch, with the line). JSONL is the module's JSON codec
// (internal/codec): text is never altered, and text that is not UTF-8 is
// an error naming the field and byte (ErrNotUTF8); NaN and infinities are
// refused (YAML writes .nan and .inf).
//
// YAML holds one sequence of {content, metadata} mappings in the
// reference's style (literal block scalars for multi-line text, strings a
// YAML 1.2 reader would take for another type quoted, "yes" plain,
// non-ASCII raw; multi-line text no block scalar can hold, such as a
// first line starting with a tab, double-quoted). Files the reference
// wrote load unchanged with the same hashes. The hash is not stored but
// computed on load; content is the scalar's text whatever its type;
// metadata scalars are typed by the YAML 1.2 core schema, timestamps kept
// as strings; a "hash" key is ignored, other unknown keys are errors.
// Malformed input wraps ErrSyntax and names the file and line.
// NewChunkWriter and JSONLReader stream chunks one at a time.
//
// # Concurrency and aliasing
//
// Chunk and Collection are safe for concurrent use. Accessors return
// copies of metadata and span; NewChunk and NewCollection copy their
// inputs; every slice a Collection returns is fresh. ChunkWriter and
// JSONLReader are not safe for concurrent use.
//
// # Chunkers
//
// A Chunker turns one Document into chunks and warnings; ChunkerFunc
// adapts a function. Chunker cores are pure (no I/O, logging or global
// state), safe for concurrent use, and return warnings as values, each
// with a WarningKind from a closed set, so a worker can count them by
// kind. Every chunker of this module has the same shape:
//
//   - Config, one field per option named after the reference's parameter
//     (MaxChar is max_char); DefaultConfig returns the defaults;
//     Config.Validate names a bad field by its parameter name, wrapping
//     ErrInvalidOptions. Zero is a value like any other (overlap 0,
//     merging off): start from DefaultConfig.
//   - New(Config) (*Chunker, error), which validates.
//   - Chunk(doc): the chunks of one document, pure.
//   - ChunkFunc(ctx, doc, yield): the same chunks one at a time
//     (StreamChunker). It watches ctx between blocks, sections or threads
//     and every few tens of kilobytes of work inside long loops, and
//     returns an error wrapping ctx's error soon after ctx ends: this is
//     how a caller bounds the time one document may take.
//   - ChunkFile(ctx, path) and ChunkFolder(ctx, dir): a file, and every
//     file of a folder with the chunker's extensions (email: a folder,
//     Maildir or mbox read as one mailbox).
//
// Raw option maps (requests, flags, option files) are decoded into these
// configurations in one place, package registry. WalkFolder lists a
// folder's documents by the rules every chunker and the producer share.
package chunking
