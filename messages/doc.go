// Package messages holds chunkstream's wire contract: the ingest request,
// the chunk record (and its delete form), the dead letter headers, the
// subject and Nats-Msg-Id rules, chunk ids, and the one codec that reads
// and writes them as msgpack (default) or JSON (Content-Type
// application/json). Other languages publish and consume these messages;
// docs/wire.md describes the same contract for them.
//
// It imports only the standard library, msgpack, google/uuid (chunk ids),
// chunking (for chunking.Metadata) and the module's internal codec: no
// NATS.
//
// Decisions the design leaves open:
//
//   - The encoding: JSON when the Content-Type names JSON, msgpack when it
//     names anything else. A message without a Content-Type is read by its
//     first byte: a JSON object starts with '{' after optional whitespace,
//     a msgpack map never does (fixmap 0x80–0x8f, map16 0xde, map32 0xdf);
//     a payload that is neither is an error saying what was expected and
//     what came ("not a chunkstream request: expected a msgpack map or a
//     JSON object, got a JSON array").
//   - Decoding reads the message into a tree of values first (the closed
//     set of internal/codec, plus bytes for msgpack bin), with the same
//     rules for both encodings, then picks typed fields out of it: "v"
//     must be read before any other field, and one set of field rules
//     serves msgpack and JSON. Struct tags with a codec for the metadata
//     field alone decode msgpack in about 0.8 of the tree's time
//     (BenchmarkDecodeIngestTags) but keep none of the wire's checks, and
//     JSON would still need the tree. JSON is read and written by the
//     module's JSON codec, the one JSONL storage uses, so a JSON message
//     and a JSONL line hold metadata the same way, byte for byte (floats
//     as Python's repr, U+2028 and U+2029 escaped, other non-ASCII text
//     raw). Every decoding failure wraps ErrDecode; an
//     error about one value names its field, keys joined by "." and list
//     positions in brackets ("metadata.tags[2]: invalid UTF-8 at byte 3").
//     A "v" above Version wraps ErrVersion and is checked before any other
//     field, so a newer schema with changed field types is reported as a
//     version problem. "v" is required (a message without it is
//     undecodable). Unknown fields are ignored: fields are only ever added
//     within a version. A field of the wrong type is reported in the
//     wire's words ("field \"v\": want an integer, got the string \"1\"").
//   - Metadata order: maps decode into chunking.Metadata in wire order
//     (msgpack map order, JSON object member order), recursively, because
//     the order of a request's metadata is the order its keys are appended
//     to every chunk's metadata, and chunk outputs (JSONL, YAML) show keys
//     in that order. A key repeated in one map keeps its first place and
//     takes its last value, as Python's json.loads does; encoders write a
//     repeated key once, that way. The chunk hash sorts keys, so order
//     never changes a hash. Unordered Go maps (options, map[string]any
//     values) encode with sorted keys.
//   - Values are of the closed set (chunking.Metadata): integers decode
//     as int (uint64 above the int range, *big.Int beyond 64 bits), floats
//     as float64 (non-finite floats are rejected: JSON cannot carry them).
//     Integer fields follow one rule: a number whose value is an exact
//     integer (1.0, 1e3, a msgpack float) is that integer, a fraction is
//     refused naming the field. msgpack has no integers beyond
//     64 bits: they travel as the extension ExtBigInt, whose payload is
//     the decimal digits, so 10^29 in metadata keeps every digit and the
//     chunk's hash. Map keys must be strings. A message is level 0, a map
//     or list in it level 1 (metadata is), and maps and lists may nest
//     down to chunking.MaxDepth. A JSON float that is integral is written
//     as "1.0", so it reads back as a float.
//   - Text is never altered: a JSON string or msgpack str holding invalid
//     UTF-8, or a JSON \u escape of a surrogate without its pair, is a
//     decode error naming the field and the byte of its text ("content:
//     invalid UTF-8 at byte 12", "metadata.title: lone surrogate \ud800 at
//     byte 5"), never replaced with U+FFFD. Only "content" may be msgpack
//     bin: those are bytes, which the worker checks against the document's
//     format.
//   - Content presence: IngestRequest.Content is nil when absent and a
//     non-nil (possibly empty) slice when present, because no content at
//     all is a permanent error while empty content is a valid document.
//     msgpack writes it as bin and accepts str; JSON writes "content" when
//     the bytes are UTF-8 and "content_b64" (standard base64) otherwise;
//     both keys are accepted in either encoding, but not together.
//   - The chunk record's span (ChunkRecord.Span) is the chunk's
//     chunking.Span, written after "hash" as a map in the order start,
//     end, first_line, last_line, verbatim (when it has a byte range),
//     message_ids (when it lists messages), and not written for the zero
//     Span. It is a contract like the hash, and not part of it: byte
//     offsets [start, end) and 1-based lines of the document as the
//     producer sent it (MDX before cleaning), verbatim when the content
//     is exactly those bytes, and the Message-IDs an email chunk holds,
//     in its order (the chunking package documents each field). Readers
//     ignore span fields they do not know, since fields are only ever
//     added; a span that breaks the rules (start not before end, a range
//     without its lines, ids that are not strings) is a decode error
//     naming "span".
//   - Delete records use Nats-Msg-Id "<doc id>@delete@<ingest_seq>"; chunk
//     ids never contain "@", so they cannot collide with chunk records.
//   - The chunk subject is the prefix plus the ingest subject without its
//     first token ("ingest.docs.x" → "chunks.docs.x").
//   - Dead letter reasons are made one line and cut to 1 KiB. Beside the
//     reason, Chunkstream-Error-Cause holds the stable snake_case cause
//     (the label the workers' metrics use), for tools that sort dead
//     letters; older dead letters without it parse with an empty cause.
//   - A dead letter's Nats-Msg-Id (DeadLetterMsgID) is "<ingest
//     stream>@<ingest seq>", followed by "@<the request's Nats-Msg-Id>"
//     when it had one. It names one stream message, not one logical send:
//     the worker and the max-deliveries advisory handler, which may both
//     dead-letter the same stored request, write the same id and the dead
//     letter stream's duplicate window keeps one, while a request
//     published again (a replay, or a resend reusing the request's own
//     Nats-Msg-Id) is a new stream message whose dead letter is always
//     stored. The request's own id is appended so that a stream deleted
//     and created again, whose sequences start over, cannot make a new
//     dead letter look like an old one.
//   - A dead letter carries the request's user headers (UserHeaders): all
//     but the server's Nats-* ones (a direct get adds Nats-Stream and
//     others; Nats-Expected-* and Nats-TTL would be checked against the
//     dead letter stream and refuse the dead letter) and the Chunkstream-*
//     ones it sets itself. A replay sends the same user headers with a
//     fresh Nats-Msg-Id under the ingest rule "<id>@<version>@<send id>".
//   - The document record (DocRecord) is JSON, not msgpack: it lives in a
//     KV bucket that people and other languages read with ordinary tools.
//     Its key is the document id in unpadded base64url (DocRecordKey), so
//     any id is a valid key. Fields are only added, and each must be safe
//     to lose, because a writer that does not know a field drops it when
//     it rewrites the record.
//   - A done upsert record keeps its chunker's warnings ("warnings":
//     total, and the first MaxRecordWarnings as kind and message), so
//     that status of one document says what its chunker skipped. The cap
//     keeps a record small whatever its document holds (a mailbox can
//     warn thousands of times); the message leaves out the file, which
//     is the document.
//   - "Unchanged" means same content and same processing. A done upsert
//     record holds the settings fingerprint its version was chunked with
//     ("fingerprint") and its chunk count ("chunks"). The fingerprint is a
//     wire contract: the sha256 hex of the canonical JSON of the resolved
//     Settings (Settings.Fingerprint spells the bytes out): the chunker
//     and its complete options (every option with its effective value,
//     resolved as request > worker defaults > chunker defaults), the
//     request's explicit format, source and metadata, the ingest subject
//     (which names the chunk subject) and the collection override, plus
//     FingerprintVersion. Metadata enters as a map: reordering keys
//     changes neither a chunk's hash nor its meaning, so it is no change.
//     The workers' sink settings (chunk subject prefix, default
//     collection) are not in it: a change there needs a forced re-send.
//     The encoding of the vectors the sink computes is (Settings.Encoding:
//     the Qdrant sink's sparse encoding), left out when empty or the
//     default, so that a change of encoding re-sends exactly the documents
//     written with another, and fingerprints without one stay as they were.
//   - Which chunker and options a request gets, and which format its id
//     implies, is the registry's to say (registry.Resolver.Choose), for
//     the worker and the producer alike, so the producer computes the
//     fingerprint a worker will record.
//   - Workers advertise their defaults as JSON under ChunkerDefaultsKey in
//     the bucket of document records, a key that holds a "." and so is
//     never a record's (DocRecordID refuses it). Every worker writes it at
//     start, the last one started winning; workers of one deployment share
//     one configuration, and during a rolling change the key ends with the
//     new settings once the last new worker started.
package messages
