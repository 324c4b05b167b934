// Package producer enqueues documents on the INGEST stream as ingest
// requests (package messages) and works with what the workers leave: the
// document records (status, waiting, skipping unchanged documents) and
// the dead letters (list, replay, purge). It is a package, not part of
// cmd/producer, because two programs send documents the same way:
// cmd/producer, and the worker's local mode, which enqueues a folder into
// its embedded server.
//
// What a backfill, a stream of JSON lines, a mailbox and the dead letter
// commands do, and by which rules, is docs/cli.md ("Sending documents",
// "-wait", "-resend-stale", "producer dlq"); how the producer publishes
// (one publish path, outages, fast-ingest batches and their sequence
// bounds) is docs/design.md ("The producer"); the messages are
// docs/wire.md's.
//
// Decisions the docs leave to the code:
//
//   - One Producer is one logical send: its send id (default a fresh
//     NUID) is the third part of every Nats-Msg-Id it writes.
//   - A backfill's documents come from an io/fs.FS (BackfillOptions.FS;
//     the operating system's through os.DirFS when nil), walked with
//     chunking.WalkFS, the chunkers' own rules; Split inputs (mailboxes)
//     are read from the operating system's.
//   - Files are read by Readers goroutines up to 64 documents ahead, in
//     recycled buffers (the encoded request holds a copy); results are
//     published in walk order. On Linux and macOS a file of the operating
//     system's is read with plain system calls (readfile_unix.go), not
//     through os.Open's poller set-up.
//   - Settings fingerprints are computed once per format within a
//     backfill, the only part of a request that varies from document to
//     document.
//   - List covers what the dead letter stream held when it started; when
//     nothing arrives for a second it asks the stream whether anything is
//     left, so dead letters deleted meanwhile cannot make it wait.
package producer
