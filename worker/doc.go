// Package worker is chunkstream's at-least-once chunking pipeline: it
// consumes ingest requests from the JetStream stream INGEST through the
// durable pull consumer "chunkers", chunks each document with the chunker
// the request names, writes the chunks to a Sink, and acks only after the
// sink confirmed. Requests that can never succeed, and requests that
// failed MaxDeliver times, go to the DLQ stream with the reason. An outage
// of the sink is not the message's fault: the worker holds what it has,
// stops fetching and waits for the sink instead.
//
// The per-message path (Worker.handle) follows the five-step procedure
// (docs/design.md, "Processing one version"): decode and validate, load
// the content (inline or from the Object Store), compare-and-set the
// document record (KVRecords.Start; a request overtaken by a newer version
// is acked without writing, outcome "superseded"), chunk, Sink.Write, mark
// the record done (KVRecords.Finish), ack. The error → queue policy
// (docs/design.md, "Delivery semantics", lists the errors of each class):
//
//   - success → ack (see "Acks");
//   - an error marked Permanent (by the worker, or by the sink) → dead
//     letter "permanent" (docs/wire.md, "Dead letter"), the failure
//     recorded in the document record, then Term;
//   - an error marked Unavailable, a write JetStream refused for want of
//     room anywhere, or a records or Object Store step that found
//     JetStream unreachable → the delivery is held, not NAKed, and the
//     worker pauses (see "Sink outages");
//   - any other error on delivery n < MaxDeliver → NakWithDelay(Backoff:
//     BackoffBase·2^(n−1) capped at BackoffMax, equal jitter, RetryAfter
//     as a floor); on delivery MaxDeliver → dead letter "exhausted", then
//     Term;
//   - if the dead letter cannot be published, or its failure cannot be
//     recorded, because JetStream is down or full, the delivery is held
//     as in an outage, however often: a NAK would spend a delivery, and
//     once past the last one the server delivers the request no more.
//     Any other failure to publish it is NAKed. Either way the request is
//     never dropped, and the next try stores the same dead letter once;
//   - a request whose last delivery ended without an ack: see "Stranded
//     requests".
//
// # Sink outages
//
// A sink marks an error with Unavailable(dependency, err) when the service
// behind it does not answer; the Qdrant sink names "qdrant" and
// "embedder", the subject sink "nats", and each implements ProbeSink, a
// cheap check per dependency. The worker's own storage is the dependency
// "jetstream" (DependencyJetStream): a write refused for want of room,
// wherever it happened (records, chunks, dead letters; the sink's own
// mark does not matter, since reachability is not room), a dead letter
// that cannot be stored, and JetStream unreachable from a records or
// Object Store step. Its probe is a write that proves room: a put of a
// probe key in the bucket of document records (it needs the stream's
// leader, the account's quota and the server's storage), then a check
// that the dead letter stream and, with the subject sink, the chunks
// stream have room under their own limits and the account under its
// quota for the largest write refused in this outage (at least 64 KiB).
// A full stream or account so keeps the worker paused, with one "sink
// down" line, until it has room; reachability alone (a stream info) would
// pass at once and make the worker flap, spending held deliveries. The
// first such error makes the worker:
//
//   - stop fetching (pull waits until the sink answers);
//   - hold every delivery it has, in flight or not yet started, with
//     in-progress acks, so the server neither redelivers it nor counts a
//     delivery; a delivery whose write failed is processed again from the
//     start once the sink answers (the five steps are safe to repeat:
//     docs/design.md, "Idempotency and chunk ids");
//   - report not ready (Ready, /readyz), set the sink_up and
//     sink_down_since gauges, and log one "sink down" line, then one
//     "sink up again" line with the duration, never one per message;
//   - probe each dependency that is down after SinkProbeBase·2^(n−1),
//     at most SinkProbeMax, with jitter (a RetryAfter inside the error is
//     the first wait), and resume by itself when every probe passed; the
//     held deliveries go to the processors first;
//   - announce the outage to the fleet (notice.go): a put of the key
//     "chunkstream.outage.<dependency>", its id as the value, in the
//     bucket of document records, and again every 6 × SinkProbeMax (30 s)
//     while it lasts.
//
// Every worker watches those keys and probes an announced dependency that
// is not down for it already, at most once per SinkProbeMax; when that
// probe fails too, it pauses exactly as above. The probe decides, not the
// notice: a dependency down for one worker alone (its network, a document
// whose own write fails as an outage) pauses no other. The repetition
// matters when faults follow each other: a worker whose probe passed in
// the moment between two faults resumes while the others stay down
// through the second fault and find no new outage to announce. So a
// worker with no work in hand, which sends a hanging dependency nothing,
// pauses one probe after the first worker that finds the hang (after
// CHUNKSTREAM_EMBED_TIMEOUT, for an embedder) announces it, or at the
// next repetition of the notice; a probe gives up after 10 s, or the
// embedder's time-out if shorter. A fleet with no work at all stays ready
// through a hang: checking dependencies that no work needs would load a
// paid endpoint for nothing; the first worker to get work finds the hang
// after the time-out, holding what it fetched, and announces it.
//
// Why holding rather than NAKing: JetStream counts every delivery, and a
// NAK, with or without delay, makes the next one count. To keep an outage
// from spending deliveries with NAKs, the worker would have to keep its
// own count of each message's own failures somewhere every worker sees
// (the stream's messages cannot be changed; a re-published copy gets a
// new stream sequence, which is the version order of the five steps and
// so cannot change), and set the consumer's MaxDeliver to unlimited so the
// server's max-deliveries advisory stops dead-lettering them, which would
// also let a request that crashes its worker on every delivery circle
// forever. Holding needs none of that: a held delivery is never
// redelivered, so NumDelivered stays the count of the message's own
// tries, the consumer's MaxDeliver and the advisory path keep their
// meaning, at-least-once is unchanged (nothing is acked before the sink
// confirmed; a worker that dies while holding leaves its deliveries to be
// redelivered after AckWait, as any crash does), and the ordering and
// duplicate guarantees of the five steps hold because a held delivery is
// simply a long one. Other workers of the fleet pause on its notice or
// on their own first write, so each holds at most one batch. What it costs:
// a held delivery is charged once when its worker stops (SIGTERM NAKs what
// it holds, without delay, for another worker) or dies, and a very long
// outage can outlast the CHUNKS duplicate window, so a record published
// before the outage and again after it may be stored twice (identical;
// consumers keep the newest ingest_seq per document anyway).
//
// A delivery whose write fails as unavailable MaxDeliver times although
// the probes pass (a request that times out on its own, say) is NAKed
// with backoff as an ordinary transient failure, so it reaches the
// "exhausted" dead letter instead of pausing the worker forever. A write
// refused for want of room is exempt: no message is at fault, and a
// document whose records can never fit keeps the worker paused (its log
// line names the stream and the bytes) until an operator gives the
// stream room. The probe backoff starts again when a delivery succeeded,
// and once with an outage that follows one the probes ended (a client
// may still hold a connection that broke during the outage, and the
// write that finds it fails once more); outages that follow each other
// without a success in between keep it growing, so a dependency that
// passes its probe but fails every write is tried less and less often.
// A sink that is not a ProbeSink counts as answering after each probe
// wait (its next write is the probe), its backoff growing until a
// delivery succeeds.
//
// # Stranded requests
//
// A request whose last delivery ended without an ack is left in the
// WorkQueue and never delivered again; docs/design.md ("The max-deliveries
// advisory", "No request is stranded") gives the rule that dead-letters
// it: the advisory's handler, and a sweep of INGEST every minute and when
// an outage ends. A request the handler could not dead-letter (JetStream
// down or full) is remembered and dead-lettered by the next sweep; others
// when a second sweep finds them still there, so an ack the stream has
// not applied yet is not mistaken for one. Workers sweeping together
// store each dead letter once (its id names the request) and count it
// once (the PubAck says duplicate).
//
// # Per-document budgets
//
// One valid document must not hold a processor, or its memory, for
// long: the requests behind it wait while in-progress acks keep it. The
// worker chunks through chunking.StreamChunker's ChunkFunc, collecting
// the chunks as they come, within two budgets:
//
//   - MaxChunkTime (CHUNKSTREAM_MAX_CHUNK_TIME, 60 s): the chunker's
//     context ends after it, and the chunkers of this module stop soon
//     after (they watch it between blocks and every few tens of
//     kilobytes of work; a segment of the Markdown block parse, up to
//     the whole of a document that offers no place to cut it, runs to
//     its end first: a second or two for a list nested 2,400 deep);
//   - MaxChunksPerDoc (CHUNKSTREAM_MAX_CHUNKS_PER_DOC, 100,000): the
//     chunker is stopped (yield returns false) at the first chunk over,
//     so the records of a document that would give millions are never
//     built. Markdown with the default min_char of 1,024 characters
//     gives about one chunk per kilobyte or less, so a document of the
//     default MaxDocBytes (64 MiB) stays under it; small chunk sizes
//     reach it.
//
// A document over a budget is dead-lettered "permanent" with the cause
// "too_complex" and the figures in the reason, and the chunks made are
// dropped: nothing keeps running or holds memory after the call returned,
// and a retry would need the same. The budget counts wall-clock time, so
// a worker starved of CPU needs more of it: keep it generous. A document
// whose chunking the drain timeout cut short (the worker's own context
// ended) is NAKed ("abandoned", cause "shutdown"), never dead-lettered.
//
// A chunker that ignores its context (a program's own, through
// Options.Chunkers), or one that is not a StreamChunker (called as
// Chunk and handed out afterwards), cannot be stopped: the worker waits
// for it, since leaving it running would keep its CPU and memory busy
// while the worker takes the next document, which is what the budget is
// for. When it returns after MaxChunkTime its result is dropped and the
// document is too_complex all the same; the chunk limit applies to its
// result. Such a chunker is bounded only by its own code.
//
// Requests also may not ask for tiny chunks, which turn a document into
// as many chunk records as it has characters: a size option a request
// sets below MinChunkChars (32: max_char of markdown, max_chars of email,
// which itself refuses less than 256), MinChunkWords (8: max_chunk_size
// of twostep) or MinChunkTokens (8: a size in tokens, with a tokenizer)
// is "invalid_options", naming the option, the value, the bound and its
// setting. The value is read from the options as the registry resolves
// them, whatever type the wire gave it. Only a request's own value is
// bounded: defaults, the worker's or the chunker's, are the operator's
// choice, and MaxChunksPerDoc still bounds what they give. Chunkers the
// registry does not know have no bound on their options.
//
// # Acks
//
// A processor never waits for the server to confirm an ack
// (docs/design.md, "Acks are not waited for"): a server restarted from its
// store does not answer the acks of deliveries it forgot, and waiting
// would stall every processor for seconds per message. At most 256
// confirmations are awaited at a time (beyond, the ack is sent without
// one); Run waits for the pending ones before it returns.
//
// Decisions the design (docs/design.md, docs/wire.md) leaves open:
//
//   - Pulling: the dispatcher fetches batches of up to 2×Concurrency
//     messages (at least 4) into a queue of Concurrency messages that the
//     processors read, so at most one small batch and the queue wait in
//     the client, and the next fetch overlaps the processing. Fetch, not
//     the library's continuous pull: that depends on the server's status
//     messages reaching a reader that may be waiting for a processor, and
//     stalled for 30 s (until a heartbeat timed out) in measurements; a
//     fetch ends by count or after 250 ms. The messages fetched are taken
//     from the batch as they arrive, so those waiting for a processor get
//     their in-progress acks at once (docs/design.md, "In-progress acks").
//   - The first delivery of a new version (not a replay) starts step 1
//     by creating the record (a compare-and-set on "no message for the
//     key") without reading it first (docs/design.md, "Each record
//     operation earns its place"); redeliveries and replays read first.
//     Whenever step 1 creates the record (a record deleted by hand leaves
//     a marker, which it writes over instead), it tells the sink, as
//     Doc.First, that no older version of the document exists (the Qdrant
//     sink skips its read of stored vectors and its delete of older
//     points).
//   - The format passed to the chunker is the request's explicit format
//     only; without one the chunker infers it from the id, exactly as
//     `chunk split` does from the path, so both produce the same chunks
//     and file_format metadata. The resolved format
//     (registry.Registry.InferFormat) picks the default chunker and
//     decides the UTF-8 check (its Text formats).
//   - Chunker settings: request > the fleet's defaults > chunker
//     defaults, resolved once per request by the registry's Resolver,
//     which caches the chunkers it builds (the worker never names a
//     chunker). The worker's own defaults (Config.Chunker and
//     ChunkerOptions) are validated by New against Options.Chunkers; which
//     defaults it applies is "One fleet, one resolution" below. A program
//     serves its own chunkers by handing the worker a registry that lists
//     them.
//   - The streams, buckets and consumer are package topology's (Setup);
//     Setup runs again when the consumer or its stream disappears (a
//     server that lost its state).
//   - A dead letter's Nats-Msg-Id names the request's INGEST message
//     (messages.DeadLetterMsgID; docs/wire.md, "Dead letter", says why):
//     with the request's own Nats-Msg-Id, the dead letter of a replay
//     that failed again would vanish in the DLQ's one-hour window. The
//     request's Nats-* headers are not copied: they are the server's (a
//     direct get adds Nats-Stream and the like) or preconditions of the
//     original publish that the DLQ would check and refuse.
//   - The subject sink is package subjectsink. Chunk records are msgpack,
//     or JSON with RecordFormat "json" (for reading CHUNKS with the nats
//     CLI); each carries its Content-Type, and both decode to the same
//     record and hash.
//   - Shutdown (Run's ctx cancelled): stop fetching and NAK the rest of
//     the current batch and what is held for an outage, let in-flight
//     work finish for up to DrainTimeout, then cancel it; cancelled work
//     is NAKed without delay (outcome "abandoned") so another worker
//     takes it. The cancel also ends the chunker's context, so a chunker
//     call stops soon after; one that ignores its context is waited for a
//     few seconds more, then left to the process's exit (its request is
//     redelivered after AckWait).
//   - Metrics live in a private registry (NewMetrics); the sink is
//     decorated by SinkMetrics.
//
// # One fleet, one resolution
//
// A request that leaves its chunker or options out must be chunked alike
// by every worker, during a rollout too: a request with max_char and no
// chunker is markdown's under markdown defaults and a dead letter under
// twostep ones. So the defaults a worker applies are the fleet's, one
// value under messages.ChunkerDefaultsKey in the bucket of document
// records (defaults.go), never its own when they differ:
//
//   - The first worker to start on a server with none writes its own (a
//     create, so two first workers cannot both win); an operator
//     replaces them with `producer defaults set` (producer.SetChunkerDefaults).
//     A worker never replaces them, except with Options.SetFleetDefaults
//     (local mode, whose embedded server has no other worker).
//   - A worker whose own defaults differ follows the fleet's: it logs one
//     warning naming both, and its presence carries its own
//     (own_defaults), so `producer defaults` and `producer status` list
//     it. Following rather than refusing to start keeps a rollout going:
//     refusing would crash-loop every pod of a deployment whose variables
//     changed, while the old pods kept the old defaults anyway.
//   - Every worker watches the key and follows a change at once, so an
//     operator's change switches the fleet together: while the change
//     travels to each worker (milliseconds) a request may be resolved with
//     the old defaults or the new, and one already being chunked finishes
//     with those it started with; its record's fingerprint says which.
//   - Fleet defaults a worker cannot resolve (a chunker or option its
//     registry does not know) are not replaced by its own: it holds its
//     deliveries as in an outage of the dependency DependencyDefaults (not
//     ready, nothing fetched, nothing dead-lettered) until they resolve,
//     probing the key. A new version's pods are then never ready and a
//     rolling update stops before it mixes resolutions.
//   - The sink's encoding, which is in the same value for producers'
//     fingerprints, is the sink's, not the fleet's to choose: a worker
//     whose encoding differs writes its own there (the BM25 migration of
//     docs/operations.md relies on it), keeping the fleet's chunker and
//     options.
//
// # Failures in the document record
//
// When a request S of document D with a readable id is dead-lettered, the
// worker records the failure (KVRecords.Fail, after the dead letter is
// stored) by the rule "Fail" of docs/design.md, "The document record": a
// record newer than S is left alone; one at S becomes dead_lettered
// unless it is done or holds a failure already; an older or absent one is
// moved to S exactly as S's step 1 would have moved it (S failed before
// it), with S's op and, when known, its version.
//
// This keeps the five-step procedure and its convergence argument (see
// package qdrantsink) intact, because a recorded failure is
// indistinguishable, for every other version, from S passing step 1 and
// then failing before step 2, a case the procedure already has (a chunker
// error after step 1):
//
//   - The record still only moves forward, and a version still writes
//     only after its own step 1 moved the record to it: Fail moves it
//     for S, which writes nothing.
//   - An older version V < S arriving later, or redelivered, finds S at
//     step 1 and is superseded, exactly as if S had started; one that
//     passed step 1 before finds S at step 4 and removes its own points.
//     This is the behaviour of a newer version that failed after its step
//     1: D keeps the points of the version that finished last before S
//     was recorded, or none if a version was still between its steps 1
//     and 4 then; never a point of S or above.
//   - A newer version N > S overwrites the record at its step 1
//     (Start writes a fresh pending record: the failure is cleared) and
//     converges like any newer version.
//   - A redelivery of S itself (a Term that was lost), or a replay of S
//     (it carries S's sequence), finds its own sequence at step 1, not
//     done: step 1 moves the record back to pending and S runs again;
//     step 5 clears the failure.
//   - Producers skip only records in state done, so a dead-lettered
//     document is sent again by the next backfill, as a pending one was.
//
// The argument's guarantee (exactly the newest version's points remain)
// needs the newest version to finish; when it is dead-lettered, the
// record says so and keeps the reason until a newer version (a fix and
// a replay, or a re-send) finishes. In the advisory handler no redelivery
// follows, so a failure that cannot be recorded there is logged, and the
// request, safe in the DLQ, is deleted from INGEST all the same.
//
// # Chunker warnings
//
// A chunker's warnings (a part it skipped or read in a fallback way)
// never fail a document. Once its version is done (step 5), the worker
// counts them and logs one line per document (docs/operations.md, the
// metric chunkstream_worker_chunker_warnings_total), not one per warning,
// so a mailbox with thousands of odd rows cannot flood the log, and step
// 5 writes the first messages.MaxRecordWarnings into the record. Counting
// at step 5 counts a version once, however often it was delivered: a
// retry after a failed sink write chunks it again.
//
// # Tracing
//
// Options.TracerProvider traces every delivery as docs/operations.md
// ("Tracing") describes: a span from the fetch to the settlement, a child
// of the trace context the request carries (internal/tracing), with a
// span per step (trace.go). A nil provider records nothing, but the
// request's context still reaches the chunk records and dead letters, so
// a trace crosses a worker that does not trace. Log lines of a delivery
// carry trace_id and span_id.
package worker
