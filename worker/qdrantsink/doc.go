// Package qdrantsink is the worker.Sink that writes chunks into Qdrant over
// gRPC (github.com/qdrant/go-client), with deterministic point ids, so that
// re-ingesting a document leaves exactly its new chunks, whatever order
// concurrent workers finish in; and the readers of what it writes: Search,
// and the steps of a model switch (Reembed, CutOver, DropVector).
//
// Where the rest is written:
//   - the points, payload, indexes and collection metadata:
//     docs/wire.md, "Qdrant point";
//   - steps 2 to 4 of a version, why every interleaving converges, first
//     versions, shared requests and reused vectors: docs/design.md, "Why
//     it converges" (race_test.go, first_test.go and reuse_test.go drive
//     the interleavings);
//   - collections, BM25 and the collection's encoding, errors and
//     outages, upsert requests, one ordered write per document, tenants,
//     strict mode and the model switch: docs/operations.md, "Qdrant and
//     the embedder";
//   - the settings: docs/configuration.md, "Qdrant".
//
// Decisions:
//   - A version's upserts are shared with other documents' (package
//     internal/batch, one version of each document a request), and the
//     request holding its last point also deletes its older points, after
//     them, in one ordered batch update: one write request a version.
//   - Every filter of a write names the document's tenant (or its
//     absence), and a tenant's point ids are its own: no write of one
//     tenant's document touches another's.
//   - The go-client does not retry: a request failing for want of Qdrant
//     is an outage (fault.Unavailable), which the worker holds and probes,
//     honouring Retry-After. Every request carries the delivery's
//     traceparent.
//   - A collection's strict mode is read when the sink sets it up, and the
//     requests are cut to fit it (batch.Limit).
//   - ingest_seq is compared in Qdrant's float64 range, exact up to 2^53;
//     Write refuses larger sequences as permanent. A single point over
//     MaxRequestBytes goes alone, and Qdrant's own request limit decides.
//   - Requests and answers are encoded by package grpccodec (its doc says
//     why).
package qdrantsink
