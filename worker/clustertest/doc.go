// Package clustertest holds the worker's fault and security tests against
// real, in-process nats-servers; it has no non-test code.
//
// Cluster: three nats-servers clustered over routes on 127.0.0.1 (ports
// picked free at start and kept across restarts), JetStream with file
// storage in t.TempDir(), streams and consumer at R3. Two workers process a
// batch of Markdown documents; when part of the chunk records have arrived
// the INGEST stream's leader is shut down. The test then requires that
// every document's chunk records arrive complete (every position of the
// final count) and that no chunk id is stored twice for one ingest
// sequence, that INGEST drains, that nothing is dead-lettered, and that the
// restarted node rejoins and catches up on every R3 stream.
//
// Security: a server that requires TLS (a CA and a server certificate made
// in the test with crypto/x509) and a user/password; the worker connects
// with the CA and the right credentials, and fails with a clear error
// (naming authorization or the certificate) and without echoing the
// password when either is wrong. The same for a token, an NKey seed file,
// a creds file (server in operator/JWT mode) and mutual TLS.
//
// Compose: the worker and the backfill producer of docker-compose.yml run
// with their compose command and environment, only the NATS and Qdrant
// addresses replaced (an in-process server and the Qdrant double), and the
// backfilled documents must arrive as points in the compose collection.
//
// Bootstrap: the Kubernetes bootstrap Job's stream and consumer JSON
// (deploy/base/bootstrap.sh) is sent to a server, then worker.Setup must
// succeed without updating or re-creating them.
//
// Start-up: three topology.Ensure started at once against a fresh
// in-process cluster at R3 all succeed (and a fourth changes nothing,
// a fifth with one setting changed updates only that stream); and, since
// the race that made set-up hang (a stream update arriving while a
// clustered create of the same stream is in flight goes unanswered)
// depends on real timings, eight cmd/worker processes started at once
// against a fresh cluster of three nats-server processes (built from the
// module, or CHUNKSTREAM_TEST_NATS_BIN; skipped when neither is possible)
// with CHUNKSTREAM_REPLICAS=3 must all pass -healthcheck within the
// set-up timeout.
//
// Outages (only with CHUNKSTREAM_TEST_PROCESSES=1 and
// CHUNKSTREAM_TEST_OUTAGES=1; minutes each): real processes
// with default settings, a nats-server built from the module, worker
// processes and a backlog of requests. A Qdrant double process
// (testdata/qdrantdouble serves qdranttest) is stopped with SIGSTOP for
// 150 s and continued: no dead letter, every worker not ready during the
// hang, every chunk stored after it. The nats-server is killed and
// restarted on its store: no dead letter, and the drain time after the
// restart is reported. Resources run out and are given back, each for
// CHUNKSTREAM_OUTAGE_HANG (150 s), with twenty requests without content
// among the documents: the account's JetStream quota (lowered to its use
// by a configuration reload, then raised), a small store filesystem (a
// tmpfs the test mounts, as root only, filled by a file that is then
// removed; the server is restarted if it disabled JetStream), a full
// chunks stream (a byte limit with discard new, then removed), and the
// embedder (401, vectors of another size, a hang). Each requires every
// document's chunks or points stored once, the bad requests dead-lettered
// as no_content and nothing else, and the workers not ready at the end of
// the fault; the report gives readiness, log lines, redeliveries and the
// embedder's requests. CHUNKSTREAM_TEST_WORKER_BIN runs an older worker
// build for comparison (figures only).
//
// Tracing: TestServerRestartTraced runs the server restart at CI size (300
// documents, two worker processes) with the workers exporting their spans
// to a real Jaeger (internal/tracing/tracingtest): every chunk record
// stored once, no dead letter, and a settled delivery of every document in
// Jaeger once the workers have stopped. CHUNKSTREAM_TEST_TRACING=1 traces
// every scenario the same way (the outage and resource scenarios too), and
// gives the in-process workers an SDK tracer provider.
//
// Decisions: the workers' JetStream contexts set a publish-ack timeout
// (5 s): a PubAck lost with a dying stream leader otherwise leaves the sink
// waiting forever while in-progress acks keep the request from being
// redelivered, which this test caught; cmd/worker needs the same option.
// The security tests build and run cmd/worker itself (or the binary named by
// CHUNKSTREAM_TEST_WORKER_BIN), because its connection options live in
// package main. The servers log nothing (NoLog) unless -v and
// CHUNKSTREAM_TEST_SERVER_LOG=1; ports are chosen by listening on :0 and
// closing, which can race with another process on a busy machine (the test
// then fails at server start, visibly, rather than hanging).
package clustertest
