// Package producer enqueues documents on the INGEST stream as ingest
// requests (package messages), with the Nats-Msg-Id rules of the wire
// contract, large documents through the Object Store, and a bounded
// number of asynchronous publishes in flight.
//
// It is its own package, not part of cmd/producer, because two programs
// send documents the same way: cmd/producer, and the worker's local mode
// (cmd/worker -local), which enqueues a folder into its embedded server
// and consumes it with the worker code. Backfill features (skipping
// unchanged documents, mailboxes sharded by thread) build on Producer.
//
// Decisions:
//   - One Producer is one logical send: its send id (default a fresh NUID)
//     is the third part of every Nats-Msg-Id it writes, so a retried
//     publish within the send is dropped by the duplicate window, while the
//     next run re-sends.
//   - Documents larger than MaxInline (default: the server's max payload
//     less 64 KiB for headers and the envelope) are stored in the objects
//     bucket under the sha256 hex of their content (written once: an
//     existing object of that name is reused) and sent as content_ref.
//   - Folders are walked with chunking.WalkFolder (the spec's rules: sorted,
//     hidden entries skipped, symlinked folders not followed); the document
//     id is the path relative to the folder, with "/" separators.
package producer
