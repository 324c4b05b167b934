// Package subjectsink is the subject sink: it writes each document
// version's chunk records to the stream CHUNKS as atomic batches, so a
// consumer sees all of a version's records or none, stored contiguously,
// and the worker waits for one PubAck per version.
//
// The records and how a consumer reads them (atomic batches, versions of
// more than MaxBatch records, duplicates, the completion marker) are in
// docs/wire.md, "Chunk record" and "Reading CHUNKS"; group commits, flow
// control and errors in docs/operations.md, "The subject sink".
//
// Decisions:
//   - A version of one record (a delete, zero or one chunk) is a plain
//     publish; larger ones are atomic batches, cut at multiples of
//     MaxBatch and published in order, each after the previous one was
//     acknowledged.
//   - Versions written at once share a group commit (package
//     internal/batch: whole versions, at most maxCommits in flight); a
//     group the server refuses is published again version by version.
//   - A batch refused as a duplicate was stored before, whole or in part:
//     it is published again record by record, and the server keeps each
//     record once.
package subjectsink
