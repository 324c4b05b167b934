// Package topology is the one home of chunkstream's JetStream topology:
// the names, subjects, replicas, windows, ages and TTL of the ingest,
// chunks and dead letter streams, the document records and objects
// buckets and the workers' durable consumer (Config, with the variables
// the commands read), the stream and consumer configurations built from
// them, and Ensure, which sets them up. The worker and the producer both
// use it, so what one creates the other finds as it expects.
//
// Decisions:
//
//   - Ensure converges under concurrency. Several workers (and the
//     producer, and a bootstrap job using the nats CLI) may start together
//     against a fresh cluster at any replica count. Updating a stream
//     while another process's clustered create of it is in flight can go
//     unanswered by the server, so Ensure never sends an update first: it
//     looks each object up, creates it when missing (a create identical
//     to one in flight succeeds), and updates it only when a setting it
//     decides differs from what the server reports. Time-outs, "already in
//     use", "no suitable peers", missing leaders and JetStream not yet up
//     are tried again after a jittered backoff (100 ms doubling to 2 s),
//     each try bounded to 2 s doubling to 10 s (a create identical to one
//     in flight is sometimes never answered; the next try's lookup finds
//     the stream), the whole by SetupTimeout; the final error
//     names the object not ready and the last error. Other errors (a
//     setting the server refuses to change, replicas above the cluster
//     size) fail at once.
//   - An update changes only the settings Ensure decides (subjects,
//     retention, storage, duplicate window, age, replicas, direct gets,
//     atomic batches on CHUNKS and fast-ingest batches on INGEST;
//     for the consumer its policies, AckWait, MaxDeliver, MaxAckPending
//     and replicas; for buckets their replicas and history or TTL) and
//     keeps everything else an operator or the server set. Descriptions
//     are written at creation only. So the bootstrap job's stream and
//     consumer, which carry the same settings spelled out with the
//     server's defaults, are left as they are.
//   - A limit that drops data silently is refused: an existing ingest,
//     chunks or dead letter stream, or the records bucket, with a
//     message, byte or per-subject limit and the discard-old policy makes
//     Ensure fail at once, naming the stream and the limit (CheckLimits),
//     because the server would evict requests, chunk records, dead
//     letters or records while every write succeeds and every status
//     reads done. Discard new is accepted: a full stream refuses writes,
//     which the workers treat as an outage and wait out. An operator who
//     accepts the loss sets AllowDiscardOld.
//   - Retry runs any other start-up step the way Ensure runs its own, so
//     a read right after the set-up (the stream's leader still being
//     elected) waits within SetupTimeout instead of failing the start.
//   - Objects (for the producer) only ever creates the objects bucket when
//     it is missing and never updates it: a producer run with other
//     settings must not change what the workers set up.
//   - The objects bucket has a TTL (ObjectsTTL, 7 days by default) and
//     nothing else deletes objects: they are content-addressed and may be
//     shared by several requests.
//   - The consumer's AckWait is topology (a server-side setting of the
//     consumer); its MaxDeliver is unlimited, the worker counting
//     Config.MaxDeliver itself (docs/design.md, "Delivery semantics");
//     MaxAckPending is 10,000, room for many workers.
package topology
