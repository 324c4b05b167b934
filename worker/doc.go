// Package worker is chunkstream's at-least-once chunking pipeline: it
// pulls ingest requests from the INGEST stream's durable consumer, chunks
// each document with the chunker the request names, writes the chunks to
// a Sink and acks only after the sink confirmed. A request that can never
// succeed, or fails its last delivery, goes to the DLQ with its reason;
// an outage of a dependency holds the deliveries instead of spending
// them.
//
// A delivery's way reads forward through the files: pull.go fetches it
// (a bulk request cut into its requests, each a delivery of its own:
// bulk.go) and hands it to a processor, process.go runs the five steps, decide.go
// decides what settles it, act.go acks, NAKs or dead-letters it, and
// hold.go keeps it through an outage (outage.go: the worker's use of
// package internal/outage). A request the consumer lost goes back into
// INGEST (requeue.go) and takes the same way.
//
// The rules are in docs/design.md: "Processing one version" (the five
// steps and why versions converge), "Delivery semantics" (the table
// decide is, the last delivery, outages), "The document record" (start,
// finish, fail), "One fleet, one resolution" (whose chunker defaults
// apply) and "Idempotency and chunk ids". Running it is in
// docs/operations.md ("When the sink is down", "When JetStream is full",
// "Budgets per document", metrics, logs, tracing), the messages in
// docs/wire.md, the settings in docs/configuration.md.
//
// Decisions the docs leave to the code:
//
//   - The format given to the chunker is the request's own, and without
//     one the chunker infers it from the id, as `chunk split` does from
//     the path, so both make the same chunks; the format the registry
//     resolves picks the default chunker and decides the UTF-8 check.
//   - Chunker settings are resolved once per request by the registry's
//     Resolver, which caches the chunkers it builds: the worker never
//     names a chunker, and a program serves its own by handing the worker
//     a registry that lists them (Options.Chunkers). The processor
//     remembers each settings key's resolution, chunker and settings
//     fingerprint (resolutions.go): a refusal is never remembered, so
//     every refusal is made, and worded, as without it.
//   - A chunker runs as a chunking.StreamChunker within the per-document
//     budgets; one that ignores its context, or is not a StreamChunker,
//     is waited for (leaving it running would keep its CPU and memory
//     busy while the worker takes the next document) and its late result
//     dropped.
//   - Only a request's own chunk size is bounded (Config.MinChunkChars,
//     MinChunkWords, MinChunkTokens), read from the options as the
//     registry resolves them; chunkers the registry does not know have no
//     bound.
//   - The topology is package topology's (Setup); it is set up again
//     when the consumer disappears, and when the probe finds a stream the
//     worker writes gone (the records bucket included), saying so.
//   - Metrics live in a private registry (NewMetrics); the sink is
//     decorated by SinkMetrics.
//   - A bulk's requests are decoded once, when it is cut: the record ids
//     that tell a document twice in one bulk come from the decoded
//     requests, which the processors then take.
//   - The document records are the records bucket's (KVRecords), or,
//     with Options.MemoryRecords, a map under one lock by the same rules
//     (memrecords.go), for a worker that is its whole fleet for one run.
//   - A version is its content's sha256, hashed by the worker; only with
//     Options.VersionsFromMsgIDs (local mode, whose producer hashed it in
//     the same process for the request's Nats-Msg-Id) is it read from
//     the id.
//   - A delivery's in-progress acks come from a timer (heartbeat), not
//     a goroutine per document.
package worker
