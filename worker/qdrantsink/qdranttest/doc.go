// Package qdranttest is an in-process Qdrant test double: a gRPC server
// implementing the Qdrant, Collections and Points services from the
// github.com/qdrant/go-client generated code, keeping points in memory, so
// tests run the real go-client against it.
//
// It is small, and faithful where chunkstream depends on Qdrant: the
// collections, aliases, points, batch updates, strict mode, server-side
// BM25 (computed by package bm25), the query API and filters it serves
// answer as Qdrant does, with Qdrant's gRPC codes, and the version
// HealthCheck reports (DefaultVersion unless set) decides what it
// accepts. Anything else is Unimplemented. Writes are applied
// synchronously. Failures are injected with SetUnavailable,
// UnavailableFor, FailNext and Hang until Release; every call is recorded
// (Calls) with its traceparent. Real returns the real Qdrant EnvURL
// names, if any, so that the tests that matter run against both.
//
// docs/development.md ("The Qdrant double") lists what it serves, call by
// call, and what it does not.
package qdranttest
