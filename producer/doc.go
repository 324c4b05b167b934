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
//
// Backfills (Producer.Backfill, SendLines; backfill.go, send.go, stdin.go,
// mailbox.go):
//   - Every path is planned before anything is sent: a folder's ids are
//     IDPrefix + the relative path, a file's IDPrefix + its base name, a
//     mailbox's threads IDPrefix + the mailbox's base name + "#" + thread
//     id. Two paths giving one id fail with ErrDuplicateID, nothing sent.
//   - The document records are read in one pass (a KV watch of the whole
//     bucket; a missing bucket means none) into a compact map. A document
//     is skipped only when unchanged: its sha256 equals a done, non-delete
//     record's doc_version and the settings fingerprint of the request it
//     would send equals the record's. The fingerprint is computed as the
//     workers compute it (messages.ResolveSettings through the registry)
//     with the chunker defaults the workers advertise in the same bucket
//     (none advertised: a worker without chunker settings), once per
//     format within a backfill (the only part of the request that varies
//     from document to document). A record without a fingerprint counts
//     as changed. The record is messages.DocRecord, the type the workers
//     write.
//   - ResendStale is the re-chunk after a change of the workers'
//     defaults: the normal walk and checks, sending only the stale
//     documents (same content, other fingerprint) and nothing new,
//     changed, unfinished or deleted. A normal run sends them too; the
//     mode exists so that a re-chunk does not also publish edits, and so
//     that a dry run lists exactly what it will re-chunk. Stats.Stale
//     counts the stale documents of any run.
//   - -delete-missing (DeleteMissing) deletes a recorded id under IDPrefix
//     that the walk could have produced (extension in Exts, no hidden
//     element) but did not find, only when its file exists in none of the
//     roots: a file filtered out is not gone, and ids other sends put under
//     the prefix are left alone. For mailboxes, an id under
//     "<mailbox id>#" whose thread is gone.
//   - Publishing: at most Options.MaxPending requests and MaxPendingBytes
//     in flight; PubAcks are collected in order by one goroutine; a failed
//     publish is re-sent synchronously with the same message (so its
//     Nats-Msg-Id) up to Retry.Retries times with doubling waits. When one
//     request exhausts its retries the run stops (ErrUnavailable) and the
//     rest count as failed: a dead server must not cost every document its
//     retries. A re-run finishes the job; the duplicate window and the
//     records keep it from sending twice what was processed.
//   - Files are read by Readers goroutines up to 64 documents ahead, in
//     recycled buffers (the encoded request holds a copy); results are
//     published in walk order.
//   - The producer creates the objects bucket when a large document needs
//     it and the workers' set-up has not run, through topology.Objects
//     with Options.Topology's replicas and TTL (the workers' settings);
//     it never changes an existing bucket. Workers never delete objects.
//   - Buckets and the default subject come from package topology, the
//     workers' own; the document records it reads are messages.DocRecord.
//   - Stdin lines are validated as the worker would (contract, format,
//     chunker, options) and never skipped as unchanged (each is an event); a
//     content_ref request's version in its Nats-Msg-Id is the object name,
//     which the contract makes the content's sha256.
package producer
