// Package subjectsink is the subject sink: it writes each document
// version's chunk records to the stream CHUNKS as atomic batches, so a
// consumer sees all of a version's records or none, stored contiguously,
// and the worker waits for one PubAck per version.
//
// Decisions:
//
//   - One batch per version. The records of a version (one per chunk, in
//     position order, or one delete record for a delete or a version with
//     zero chunks) are published as one atomic batch (nats-server 2.14 or
//     later, a stream with allow_atomic; package topology sets both up and
//     refuses older servers at start). The records go out without waiting
//     (core publishes carrying the batch headers) and the commit is the
//     one round trip; within a large batch every flowEvery-th record
//     (CHUNKSTREAM_MAX_PENDING_PUBLISHES) waits for the server to confirm
//     what it holds, so a large version cannot flood it.
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
//     between two batches): Write counts it as written and goes on with
//     the next batch. A version re-sent after the window (one hour) is
//     stored again, identical; the consumer's rule keys records by
//     version and position, so a copy changes nothing.
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
