// Package messages holds chunkstream's wire contract: the ingest request,
// the chunk record (and its delete form), the dead letter headers, the
// subject and Nats-Msg-Id rules, chunk ids, and the one codec that reads
// and writes them as msgpack (default) or JSON (Content-Type
// application/json). Other languages publish and consume these messages;
// docs/wire.md describes the same contract for them, rule by rule
// (encodings and sniffing, "v", integers, text, spans, ids, headers), and
// is not repeated here.
//
// It imports no NATS: only the standard library, msgpack, google/uuid
// (chunk ids), chunking, fault and the module's internal codec.
//
// Decisions the design leaves open:
//
//   - Decoding reads the message into a tree of values first (the closed
//     set of internal/codec, plus bytes for msgpack bin), with the same
//     rules for both encodings, then picks typed fields out of it: "v"
//     must be read before any other field, and one set of field rules
//     serves msgpack and JSON. Struct tags with a codec for the metadata
//     field alone decode msgpack in about 0.8 of the tree's time
//     (BenchmarkDecodeIngestTags) but keep none of the wire's checks, and
//     JSON would still need the tree. JSON is read and written by the
//     module's JSON codec, the one JSONL storage uses, so a JSON message
//     and a JSONL line hold metadata the same way, byte for byte. Every
//     decoding failure wraps ErrDecode, a "v" above Version ErrVersion.
//   - Metadata order: maps decode into chunking.Metadata in wire order,
//     recursively, because the order of a request's metadata is the order
//     its keys are appended to every chunk's metadata, and chunk outputs
//     (JSONL, YAML) show keys in that order. A key repeated in one map
//     keeps its first place and takes its last value, as Python's
//     json.loads does; encoders write a repeated key once, that way. The
//     chunk hash sorts keys, so order never changes a hash. Unordered Go
//     maps (options, map[string]any values) encode with sorted keys.
//   - A dead letter's Nats-Msg-Id (DeadLetterMsgID) is "<ingest
//     stream>@<ingest seq>", followed by "@<the request's Nats-Msg-Id>"
//     when it had one. It names one stream message, not one logical send:
//     two workers, or two deliveries, that both dead-letter the same
//     stored request write the same id and the dead letter stream's
//     duplicate window keeps one, while a request
//     published again (a replay, or a resend reusing the request's own
//     Nats-Msg-Id) is a new stream message whose dead letter is always
//     stored. The request's own id is appended so that a stream deleted
//     and created again, whose sequences start over, cannot make a new
//     dead letter look like an old one.
//   - A dead letter carries the request's user headers (UserHeaders), not
//     the server's Nats-* ones: Nats-Expected-* and Nats-TTL would be
//     checked against the dead letter stream and refuse the dead letter.
//   - The document record (DocRecord) is JSON, not msgpack: it lives in a
//     KV bucket that people and other languages read with ordinary tools.
//     Fields are only added, and each must be safe to lose, because a
//     writer that does not know a field drops it when it rewrites the
//     record. A done upsert keeps the first MaxRecordWarnings of its
//     chunker's warnings, so a record stays small whatever its document
//     holds (a mailbox can warn thousands of times).
//   - "Unchanged" means same content and same processing: a done upsert
//     record holds the settings fingerprint (Settings.Fingerprint) its
//     version was chunked with. Metadata enters it as a map: reordering
//     keys changes neither a chunk's hash nor its meaning, so it is no
//     change. The workers' sink settings (chunk subject prefix, default
//     collection) are not in it: a change there needs a forced re-send.
//     The sink's vector encoding is, unless empty or the default, so that
//     a change of encoding re-sends exactly the documents written with
//     another, and fingerprints without one stay as they were.
//   - Which chunker and options a request gets, and which format its id
//     implies, is the registry's to say (registry.Resolver.Choose), for
//     the worker and the producer alike, so the producer computes the
//     fingerprint a worker will record.
//   - The fleet's chunker defaults are JSON under ChunkerDefaultsKey, the
//     one value every worker resolves requests with: the first worker
//     creates it, an operator replaces it (producer.SetChunkerDefaults),
//     a worker writes only its sink's encoding there (package worker,
//     "One fleet, one resolution").
package messages
