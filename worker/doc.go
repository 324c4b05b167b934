// Package worker is chunkstream's at-least-once chunking pipeline: it
// consumes ingest requests from the JetStream stream INGEST through the
// durable pull consumer "chunkers", chunks each document with the chunker
// the request names, writes the chunks to a Sink, and acks only after the
// sink confirmed. Requests that can never succeed, and requests that
// failed MaxDeliver times, go to the DLQ stream with the reason.
//
// The per-message path (Worker.handle) follows DESIGN.md's five steps:
// decode and validate, load the content (inline or from the Object Store),
// compare-and-set the document record (KVRecords.Start; a request
// overtaken by a newer version is acked without writing, outcome
// "superseded"), chunk, Sink.Write, mark the record done
// (KVRecords.Finish), double-ack. The error → queue policy is:
//
//   - success → DoubleAck (the ack is confirmed by the server);
//   - an error marked Permanent (undecodable, unknown version, invalid
//     request, no content, over MaxDocBytes, missing object, unknown
//     format/chunker/option, invalid options, text not UTF-8, a chunker
//     error or panic; a sink error the sink marked Permanent) → dead letter
//     "permanent" (original payload and headers plus Chunkstream-*), then
//     Term;
//   - any other error on delivery n < MaxDeliver → NakWithDelay(Backoff:
//     BackoffBase·2^(n−1) capped at BackoffMax, equal jitter, RetryAfter
//     as a floor);
//   - on delivery MaxDeliver → dead letter "exhausted", then Term;
//   - a worker that died on the last delivery: the server's max-deliveries
//     advisory is handled by one worker of the fleet (queue group), which
//     copies the request to the DLQ (direct get by sequence) and deletes it
//     from INGEST;
//   - if the dead letter cannot be published, the request is NAKed, never
//     dropped.
//
// Decisions the design leaves open:
//
//   - Pulling: the dispatcher fetches batches of up to 2×Concurrency
//     messages (at least 4) into a queue of Concurrency messages that the
//     processors read, so at most one small batch and the queue wait in
//     the client, and the next fetch overlaps the processing. Fetch, not the library's continuous pull: that
//     depends on the server's status messages reaching a reader that may
//     be waiting for a processor, and stalled for 30 s (until a heartbeat
//     timed out) in measurements; a fetch ends by count or after 250 ms. Each
//     processor sends an in-progress ack every AckWait/3 while it works
//     on a message. A message waiting in the client longer than AckWait
//     (every processor busy on very slow documents) may be redelivered;
//     the document record makes the second delivery a no-op ("duplicate").
//   - The record is moved to the new version before chunking (after the
//     content is loaded, since doc_version is its hash), so a superseded
//     request costs no chunking, and a request dead-lettered part-way
//     leaves its record pending, as DESIGN.md says.
//   - A redelivery of a version whose record is already "done" is acked
//     without writing (outcome "duplicate"): its write completed and only
//     the ack was lost.
//   - The format passed to the chunker is the request's explicit format
//     only; without one the chunker infers it from the id, exactly as
//     `chunk split` does from the path, so both produce the same chunks.
//     The resolved format (messages.InferFormat) picks the default chunker
//     and decides the UTF-8 check (markdown, mdx, text).
//   - "source" is added to chunk metadata before the request's metadata,
//     whose values win on a clash.
//   - Chunker settings: request > worker defaults > chunker defaults. The
//     worker's defaults (Config.Chunker and ChunkerOptions) are validated
//     by New through the registry, applied as messages.ChunkerDefaults
//     says (a default chunker takes the requests of the formats it reads
//     that name no chunker; its options lie beneath a request's own
//     whenever that chunker is used), and advertised at the start of Run
//     under messages.ChunkerDefaultsKey in the bucket of document
//     records (rewritten only when they differ, with a warning: the last
//     worker started wins). A chunker the registry does not know but
//     Options.NewChunker builds (a program's own) gets its option layers
//     merged as given.
//   - A finished upsert's record holds the settings fingerprint of what
//     was used (messages.Settings) and the chunk count, so a producer can
//     tell a document processed with other settings from an unchanged
//     one; deletes hold neither.
//   - Chunkers are built once per (name, resolved options) and cached
//     (64 entries at most), so requests that spell one configuration
//     differently share a chunker; chunkers are pure and safe for
//     concurrent use.
//   - Objects behind content_ref are never deleted by workers: they are
//     content-addressed and may be shared by several requests; the
//     bucket's TTL (CHUNKSTREAM_OBJECTS_TTL, 7 days by default) removes
//     them.
//   - The streams, buckets and consumer are package topology's (Config is
//     embedded in the worker's Config). Setup is topology.Ensure, which
//     converges when many workers start at once, within SetupTimeout; it
//     runs again when the consumer or its stream disappears (a server that
//     lost its state), bounded the same way. Document records are
//     messages.DocRecord, kept by KVRecords.
//   - The dead letter keeps the original Nats-Msg-Id (unique per logical
//     send), so the DLQ's duplicate window stores a request dead-lettered
//     twice (by its worker and by the advisory handler) once.
//   - The subject sink bounds the chunk records in flight per document
//     (MaxPendingPublishes); the delete record is published synchronously.
//     Chunk records are msgpack, or JSON with RecordFormat "json" (for
//     people reading CHUNKS with the nats CLI); each carries its
//     Content-Type, and both decode to the same record and hash.
//   - Shutdown (Run's ctx cancelled): stop fetching and NAK the rest of
//     the current batch, let in-flight work finish for up to
//     DrainTimeout, then cancel it; cancelled work is NAKed without delay
//     (outcome "abandoned") so another worker takes it. A chunker call
//     already running is waited for (pure code cannot be interrupted; the
//     document size limit bounds it), then its result is dropped.
//   - Metrics live in a private registry (NewMetrics); the sink is
//     decorated by SinkMetrics.
package worker
