// Package messages holds chunkstream's wire contract: the ingest request,
// the chunk record (and its delete form), the dead letter headers, the
// subject and Nats-Msg-Id rules, chunk ids, the document record, the
// settings fingerprint, and the one codec that reads and writes them as
// msgpack (default) or JSON (Content-Type application/json). Other
// languages publish and consume these messages; docs/wire.md describes
// the same contract for them, rule by rule, and is not repeated here.
//
// It imports no NATS: only the standard library, msgpack, google/uuid
// (chunk ids), chunking, fault and the module's internal codec.
//
// Decisions specific to this package: decoding reads a message into a
// tree of values first (the closed set of internal/codec, plus bytes for
// msgpack bin), then picks typed fields out of it, so that "v" is read
// before any other field and one set of field rules serves both
// encodings (struct tags decode msgpack in about 0.8 of the time,
// BenchmarkDecodeIngestTags, but keep none of the wire's checks). JSON is
// the codec JSONL storage uses, so a JSON message and a JSONL line hold
// metadata alike, byte for byte. Every decoding failure wraps ErrDecode,
// a "v" above Version ErrVersion. Maps decode in wire order into
// chunking.Metadata (a repeated key keeps its first place and its last
// value, as Python's json.loads does); unordered Go maps encode with
// sorted keys. A done record keeps at most MaxRecordWarnings warnings.
// A bulk request (ContentTypeBulk) is msgpack only and decoded with
// struct tags: it is an envelope of a version and entries whose checks
// DecodeBulk makes itself, and each entry's payload is an ingest request
// decoded on its own by the rules above.
// Which chunker, options and format a request gets is the registry's to
// say (registry.Resolver.Choose), so the producer computes the
// fingerprint a worker will record.
package messages
