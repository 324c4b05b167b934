// Package qdranttest is an in-process Qdrant test double: a gRPC server
// implementing the Qdrant, Collections and Points services from the
// github.com/qdrant/go-client generated code, keeping points in memory, so
// tests run the real go-client against it.
//
// It is small, and faithful where chunkstream depends on Qdrant:
//
//   - HealthCheck reports a configurable version (default DefaultVersion).
//   - Collections: Create (named dense vectors with size and distance, named
//     sparse vectors with a modifier), Get (config, payload schema, point
//     count), List, CollectionExists, Delete. Creating an existing collection
//     fails with AlreadyExists.
//   - Points: Upsert (atomic per request; update_filter: an existing point is
//     overwritten only when it matches the filter, a new point is always
//     inserted; update_mode), Delete by ids or by filter, Get, Scroll (ordered
//     by id: numeric ids first, then UUIDs; offset and limit; a filter;
//     with_payload and with_vectors, all or by name), Count, and
//     CreateFieldIndex (recorded in the payload schema; a keyword index of a
//     top-level field also narrows the filters with a must match on it to
//     the points it selects, as Qdrant's payload indexes do, so the double
//     stays fast with many points; the results are those of a scan). The dense vectors
//     of a cosine vector are stored, and returned, scaled to length 1, as
//     Qdrant does (one already of length 1 within 1e-6, or of length 0, is
//     kept as it is).
//   - Filters: must, should, must_not, min_should, nested filters, has_id,
//     and field conditions with match (keyword, integer, bool, keywords,
//     integers, except), range, is_empty and is_null on dotted payload
//     paths; a condition on an array matches when any element does.
//     Anything else is Unimplemented.
//
// Errors carry the gRPC codes real Qdrant uses: an unknown collection is
// NotFound; a wrong vector name, a dense vector of the wrong dimension, a
// sparse vector with repeated indices or mismatched lengths, an invalid
// point id and invalid UTF-8 in the payload are InvalidArgument. (Invalid
// UTF-8 in a proto string field is already refused by the protobuf codec on
// either side.)
//
// Failure injection: SetUnavailable makes every call fail with Unavailable
// until it is cleared (or for a duration with UnavailableFor), FailNext makes
// the next n calls fail with a chosen code, and Hang makes every call wait
// until Release, as a stopped server process does (the client's deadline
// ends the call; the double keeps answering HTTP/2 pings, which a stopped
// process would not, so only deadlines detect the hang). Every call is recorded (Calls),
// with its wait flag and write ordering for the write calls, so tests can
// assert how a client talks to Qdrant.
//
// What it does not do: search and query, vectors other than dense and
// sparse, quantization, shards, replicas, snapshots, aliases, the REST API.
// Writes are applied synchronously, so wait=false behaves like wait=true.
package qdranttest
