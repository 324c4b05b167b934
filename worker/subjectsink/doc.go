// Package subjectsink is the subject sink: it writes each document
// version's chunk records to the stream CHUNKS as atomic batches, so a
// consumer sees all of a version's records or none, stored contiguously,
// and the worker waits for one PubAck per version.
//
// Decisions:
//
//   - A version in one batch. The records of a version (one per chunk, in
//     position order) are published in one atomic batch (nats-server 2.14
//     or later, a stream with allow_atomic; package topology sets both up
//     and refuses older servers at start). The records go out without
//     waiting (core publishes carrying the batch headers) and the commit is
//     the one round trip; within a large batch every flowEvery-th record
//     (CHUNKSTREAM_MAX_PENDING_PUBLISHES) waits for the server to confirm
//     what it holds, so a large version cannot flood it. A version of one
//     record (a delete, a version with zero chunks or with one chunk) is a
//     plain publish: one message is stored whole or not at all anyway.
//   - Group commits. The versions the worker's processors write at the
//     same time share a batch: a Write that finds fewer than two commits
//     under way commits everything queued (whole versions, up to MaxBatch
//     records), the others wait for its outcome. Each version is still
//     stored whole and contiguous; one PubAck answers for the group. The
//     reason is the server's cost per batch, not per record: on a stream
//     of one replica on disk it stages every batch in a store of its own
//     and syncs it to disk before the commit, one commit of the stream at
//     a time (about 15 ms a batch on the disk measured, against 0.07 ms a
//     record published alone: BenchmarkSink). Replicated streams stage
//     batches in memory and replicate a batch as one proposal. A group
//     the server refuses (one of its versions was stored before, a record
//     it will not store, an outage) is published again version by
//     version, so each version gets its own verdict. Since processors wait
//     for the commit, the worker runs more of them with this sink (see
//     cmd/worker).
//   - Versions of more than MaxBatch records (the server's default limit
//     of a batch, 1,000). The records are cut into batches at multiples of
//     MaxBatch, published in order, each after the previous one was
//     acknowledged. Each batch is atomic and contiguous; batches of other
//     versions may come between them. The completion marker is the record
//     whose position is count − 1: it is in the last batch, which is
//     published only after every earlier batch was stored, so a reader
//     that has read it has read (earlier in the stream) every record of
//     the version. docs/wire.md, "Reading CHUNKS", is the consumer's rule.
//   - Duplicates. Every record keeps its Nats-Msg-Id ("<chunk
//     id>@<ingest_seq>", "<doc id>@delete@<ingest_seq>"). The server
//     refuses a whole atomic batch when one of its ids is in the
//     duplicate window (error 10201) and stores none of it. Since batches
//     are atomic and cut at fixed positions, the same version always
//     gives the same batches, so such a refusal means this very batch was
//     stored before (a redelivery after a lost ack, a worker that died
//     between two batches), whole or, on a standalone server that stops at
//     the first record it has no room for, in part: Write publishes it
//     again record by record (the server acknowledges those it holds as
//     duplicates and stores the others) and goes on with the next batch.
//     A version re-sent after the window (one hour) is stored again,
//     identical; the consumer's rule keys records by version and
//     position, so a copy changes nothing.
//   - Errors. A batch the server asks to send again (too many batches in
//     flight on the stream, an id being stored by another publisher, a
//     batch that arrived incomplete) is retried at once with a short
//     jittered pause, a few times. A server or stream that does not
//     answer, and a CHUNKS that no longer allows atomic batches (an
//     operator changed it), are outages of NATS (fault.Unavailable with
//     worker.DependencyNATS): the worker holds its deliveries and probes;
//     Probe fails until the stream answers and allows atomic batches
//     again. A record over the server's maximum payload or the stream's
//     maximum message size is permanent.
package subjectsink
