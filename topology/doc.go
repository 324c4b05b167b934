// Package topology is the one home of chunkstream's JetStream topology:
// the names, subjects, replicas, windows, ages and TTL of the ingest,
// chunks and dead letter streams, the document records and objects
// buckets and the workers' durable consumer (Config, with the variables
// the commands read), the stream and consumer configurations built from
// them, and Ensure, which sets them up. The worker and the producer both
// use it, so what one creates the other finds as it expects.
//
// docs/operations.md ("How the set-up converges") has its decisions:
// Ensure never updates first and retries what a concurrent set-up makes
// fail, so processes started together converge; an update changes only
// the settings Ensure decides; limits with discard old are refused
// (CheckLimits, unless AllowDiscardOld), and so is anything that would
// make an existing stream or bucket keep less (ErrShrink: a shorter chunk
// age or objects TTL, unless AllowDiscardOld; a TTL on the records
// bucket; a longer records history is kept); Retry runs other start-up steps
// the same way; Objects only ever creates the objects bucket, whose TTL
// (ObjectsTTL) is the only thing that deletes objects.
package topology
