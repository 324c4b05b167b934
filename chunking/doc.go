// Package chunking is chunkstream's chunk model: the Chunk record and its
// reference-compatible hash, its Metadata and Span, the Collection of a
// document set's chunks, their storage in YAML and JSON Lines, the
// Document and Chunker interfaces, and the folder walk every chunker
// shares. The chunkers live in sub-packages (markdown, twostep, email);
// this package imports nothing beyond the standard library, a YAML library
// and the module's internal codec, so it can be used on its own.
//
// # Chunks and their hash
//
// A Chunk is immutable: content (a string), ordered Metadata and a hash.
// The hash is the lowercase hex SHA-256 of the UTF-8 bytes of
// M + "\n" + content, where M is the metadata rendered exactly as Python's
// json.dumps(metadata, indent=2, sort_keys=True) renders it (keys sorted by
// code point, later duplicate keys winning, ASCII-only output with
// lowercase \uXXXX escapes, floats as Python's repr). It matches the
// reference implementation byte for byte. A hash given at construction
// (NewChunkWithHash, as when loading) is kept; VerifyHash checks it.
//
// Metadata values are of a closed set: nil, bool, int, uint64 (above the
// int range), *big.Int (beyond 64 bits), float64, string, []any and
// Metadata. NewChunk brings any Go integer, float32, []string and
// map[string]any into it (Metadata documents how), once; loaders produce
// it directly; every writer (JSONL, YAML, the hash, the wire) handles that
// set only. An integer of any size keeps every digit through YAML, JSONL
// and the wire, and its hash is the reference's (json.dumps writes every
// digit of a Python int: the metadata {"n": 10^29} hashes with its 30
// digits). Mappings load as Metadata in their order (a repeated key keeps
// its first place and takes its last value) and lists as []any.
// In a stored chunk the metadata map is level 1, and maps and lists may
// nest down to level MaxDepth; readers and writers refuse deeper ones.
//
// # Spans
//
// Every chunk a chunker of this module makes says where it came from: its
// Span, carried beside the chunk (Chunk.Span, Chunk.WithSpan), never in
// its metadata, so hashes stay the reference's. The span is a contract
// with the same standing as the hash; its fields, as JSONL, the wire's
// chunk record and the Qdrant payload write them (snake_case, all
// integers):
//
//	"span": {"start": 310, "end": 912, "first_line": 12, "last_line": 30, "verbatim": true}
//	"span": {"message_ids": ["a@example.org", "b@example.org"]}
//
// The fields:
//
//   - start and end: the byte offsets [start, end) of the chunk's source
//     in the document as given (for MDX, the file before cleaning);
//     first_line and last_line: the 1-based lines holding byte start and
//     byte end-1. They come together or not at all (Span.HasRange), with
//     start < end and first_line ≤ last_line.
//   - verbatim: true when the content is exactly the document's bytes
//     [start, end). When false, the content was made from that source:
//     sections joined by a blank line instead of the gap between them,
//     MDX text with its MDX-only syntax removed, the part of a split code
//     block, table or math block (the range covers the lines or rows the
//     part holds; the fences, repeated header and delimiter rows and "$$"
//     lines are added), a two-step chunk with an overlap or add_headers
//     lines before its text (the range starts where the overlap starts in
//     the source). In every case the range covers the source text the
//     content holds, and nothing more; lines the chunker added are not
//     in it.
//   - message_ids: for email chunks, the Message-IDs (as the messages
//     give them, or the ids the chunker gives messages without one) of
//     the messages the chunk holds, in the chunk's order. Email chunks
//     have no byte range: their messages are decoded, and a window's
//     messages may come from several files.
//
// Fields are only ever added. The zero Span says nothing and is not
// written. YAML storage, the reference's format, neither writes nor reads
// spans (a "span" key is ignored), so a chunk loaded from YAML has none.
// Readers of JSONL accept lines without "span"; a "span" that breaks the
// rules above is a syntax error (ErrSpan inside ErrSyntax), and so is an
// unknown field in it (the wire's reader ignores unknown fields, as it
// does everywhere).
//
// # Sizes
//
// Every length is counted in characters, and a character is a Unicode code
// point, never a byte (Chunk.Len). Content is expected to be valid UTF-8;
// the writers refuse text that is not (ErrNotUTF8).
//
// # Collections
//
// A Collection identifies chunks by their position, so equal-hash chunks
// keep their own places (ChunkByHash returns the first match). It knows
// each chunk's source file (metadata "file"; UnknownFile when absent) and
// the chunk's position within that file (collection order); Neighbours and
// ChunkWithContext look within the chunk's file. Position arguments out of
// range panic, like slice indexes.
//
// # Storage
//
// Save and Load pick the format by extension (.jsonl, .yaml, .yml).
// JSONL holds one {"content", "metadata", "hash", "span"} object per line
// with the metadata keys in order ("span" only for chunks that have one); loading verifies each hash and reports a
// mismatch with the line number (ErrHashMismatch). JSONL lines and the
// wire's JSON messages go through one codec (the module's internal/codec),
// written rather than taken from encoding/json because that package
// replaces invalid UTF-8 and lone surrogate escapes with U+FFFD without a
// word: here text is never altered, and such text is an error naming the
// field and the byte of its text, matching ErrNotUTF8 ("metadata.title:
// lone surrogate \ud800 at byte 5").
// The codec writes non-ASCII text raw except U+2028 and U+2029, which it
// escapes so that no reader splitting lines on them cuts a record, and
// floats as Python's repr. YAML holds one sequence
// of {content, metadata} mappings in the reference's style (literal block
// scalars for multi-line text, strings a YAML 1.2 reader would take for
// another type quoted, "yes" plain, non-ASCII raw); the hash is not stored
// and is computed on load (multi-line text the YAML library cannot write
// as a block scalar, such as lines with trailing spaces or a first line
// starting with a tab, is written double-quoted), and files the reference
// wrote load unchanged
// with the same hashes. In YAML, content is the scalar's text whatever its
// resolved type; metadata scalars are typed by the YAML 1.2 core schema,
// with timestamps kept as strings; a "hash" key is ignored and other keys
// are an error. Malformed input wraps ErrSyntax and names the file and
// line. NewChunkWriter streams chunks one at a time for large outputs;
// JSONLReader reads them one at a time. NaN and infinite floats have no
// JSON form: the JSONL writer refuses them (YAML writes .nan and .inf).
//
// # Concurrency and aliasing
//
// Chunk and Collection are safe for concurrent use. Chunk's accessors
// return copies of the metadata and of the span; NewChunk and
// NewCollection copy their inputs, and every slice a Collection method
// returns is a fresh copy. ChunkWriter and JSONLReader are not safe for
// concurrent use.
//
// # Chunkers
//
// A Chunker turns one Document into chunks and warnings; ChunkerFunc
// makes a function one. Chunker cores are pure (no I/O, no logging, no
// global state) and safe for concurrent use; warnings are values, never
// prints, each with a WarningKind from a closed set (one per idea, not one
// per message) so a worker can count them by kind. Every chunker of this module (packages markdown, twostep,
// email) has the same shape:
//
//   - Config, a struct with one field per option, named after the
//     reference's parameter (MaxChar is max_char); DefaultConfig returns
//     the defaults, and Config.Validate names a bad field by its
//     parameter name, wrapping ErrInvalidOptions. Zero is a value like
//     any other (overlap 0, merging off): start from DefaultConfig and
//     change fields.
//   - New(Config) (*Chunker, error), which validates.
//   - Chunk(doc): the chunks of one document, pure.
//   - ChunkFunc(ctx, doc, yield): the same chunks one at a time
//     (StreamChunker). It watches ctx between blocks, sections or threads
//     and every few tens of kilobytes of work inside long loops, and ends
//     with an error wrapping ctx's error soon after ctx ends: this is how
//     a caller bounds the time one document may take.
//   - ChunkFile(ctx, path) and ChunkFolder(ctx, dir): a file, and every
//     file of a folder with the chunker's extensions (for email: a
//     folder, Maildir or mbox read as one mailbox).
//
// Raw option maps (requests, flags, option files) are decoded into these
// configurations in one place, package registry, which also resolves
// them into the complete option map that identifies a chunker's
// behaviour. WalkFolder lists a folder's documents with the walk rules
// every chunker and the producer share (recursive, hidden names skipped,
// symlinked folders not followed, sorted by relative path in byte order,
// "/" separators).
package chunking
