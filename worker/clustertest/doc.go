// Package clustertest holds the worker's fault and security tests against
// real, in-process nats-servers (and, opted in with
// CHUNKSTREAM_TEST_PROCESSES and CHUNKSTREAM_TEST_OUTAGES, real server,
// worker and Qdrant double processes); it has no non-test code.
//
// docs/development.md ("The cluster and fault tests") says what each
// scenario does and requires: a clustered leader shut down, TLS and every
// credential kind, the Compose and bootstrap configurations, concurrent
// start-up, outages of Qdrant, the server, the embedder and every
// resource, and the traced server restart.
//
// Decisions: the workers' JetStream contexts set a publish-ack timeout
// (5 s), since a PubAck lost with a dying stream leader otherwise leaves
// the sink waiting forever (cmd/worker sets the same); the security tests
// run cmd/worker itself, whose connection options live in package main;
// the servers log nothing unless -v and CHUNKSTREAM_TEST_SERVER_LOG=1.
package clustertest
