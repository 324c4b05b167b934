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
//   - collections, BM25, errors and outages (the go-client does not
//     retry: a failing Qdrant is fault.Unavailable, which the worker holds
//     and probes), upsert requests shared by documents and one ordered
//     write per version (package internal/batch), tenants, strict mode
//     (requests cut to fit it, batch.Limit) and the model switch:
//     docs/operations.md, "Qdrant and the embedder";
//   - the settings: docs/configuration.md, "Qdrant".
//
// Decisions found only here: ingest_seq is compared in Qdrant's float64
// range, exact up to 2^53, and Write refuses larger sequences as
// permanent; a single point over MaxRequestBytes goes alone, and Qdrant's
// own request limit decides; requests and answers are encoded by package
// grpccodec (its doc says why).
package qdrantsink
