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
//   - Folders are walked with chunking.WalkFolder (the chunkers' rules: sorted,
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
//     workers compute it (registry.Resolver.Choose, Options.Chunkers)
//     with the fleet's chunker defaults and the sink encoding in the same
//     bucket (none set: a worker without chunker settings writing to the
//     subject sink), once per
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
//   - Deletes cannot surprise: before anything is sent, OnDeletes gets the
//     DeletePlan (the ids, how many documents are recorded under the
//     scope, the subjects). A backfill of files needs a scope, IDPrefix or
//     DeleteAll: the walk knows nothing of other senders' ids, so without
//     one every id of the pipeline looks gone; a run without is refused
//     (ErrDeleteUnscoped) even with nothing to delete, so a command that
//     would one day wipe the pipeline fails on its first run. Mailboxes
//     are scoped by their "<mailbox id>#". Deleting more than
//     ConfirmDeletesAbove (10) percent of the documents recorded under the
//     scope needs ConfirmDeletes (ErrDeleteUnconfirmed): a folder renamed
//     or unmounted looks like mass deletion, a few removed files do not.
//     Each delete goes to the subject its record names (DocRecord.Subject,
//     where its versions went, so its chunk records land beside theirs);
//     a record without one, written before the field, gets Options.Subject.
//     A subject no stream stores refuses the run (ErrDeleteSubject). A dry
//     run is never refused. The refusals are a *DeleteRefusedError with
//     the plan, and nothing is sent.
//   - Publishing: at most Options.MaxPending requests and MaxPendingBytes
//     in flight; PubAcks are collected in publish order, each waited for
//     until its publish time plus AckTimeout (so the waits overlap). A
//     stream leader that dies loses the PubAcks of the requests it had
//     without an error, so a PubAck is also presumed lost when none at all
//     has come for StallTimeout (1 s), or when an outage began after its
//     request went out. A publish without its PubAck (lost, timeout,
//     disconnection, no responders, no leader) is re-sent by a goroutine
//     of its own with the same message, so the same Nats-Msg-Id and the
//     duplicate window keeps one copy: the retries of a whole window go
//     concurrently and a blip costs about its own length, not a wait per
//     document. They are gated so a dead server is not hammered: the first
//     failure (unless a publish sent later has succeeded) marks the server
//     down; new publishes wait and the retries take turns to probe, one per
//     backoff interval (Wait, doubling to MaxWait, jittered; a hanging
//     probe does not delay the next); the first success, probe or late
//     PubAck, releases them all. A retry still awaiting its PubAck when
//     the server goes down or comes back up (a hanging probe) is
//     abandoned and sent again through the gate, so no retry waits out
//     AckTimeout across a state change. The client reconnects by itself
//     meanwhile. Give-up is one bound in time, RetryOptions.RetryFor (1
//     minute, so that AckTimeout plus RetryFor stays under INGEST's
//     2-minute duplicate window: a re-send later than the window would be
//     stored twice): when no publish has succeeded for that long (or the
//     connection is closed) the run stops with ErrUnavailable and the
//     documents in flight and not yet sent count as failed and given up; a
//     re-run finishes the job, the duplicate window and the records keep
//     it from sending twice what was processed. A refusal that is the
//     message's fault (over the stream's maximum message or header size,
//     over the max payload, a sealed stream) fails that document alone,
//     without retries; "duplicate message id is in process" and "too many
//     requests" are retried after a pause without marking the server
//     down. Results are settled in publish order; Stats count retries and
//     give-ups, Summary the outages and their total length.
//   - Fast-ingest batches: a backfill reads the info of the stream
//     storing its subject once; when it allows batched publishing
//     (allow_batched, which the workers' set-up gives INGEST on nats-server
//     2.14 or later) it publishes through a jetstreamext FastPublisher;
//     otherwise one publish per request as above, and one log line says
//     why. Each request keeps its
//     Nats-Msg-Id: the server applies the duplicate window to batched
//     messages too. Flow control: the server acknowledges every flow
//     requests stored, flow = MaxPending/2 (at most 500, the most the
//     server grants), and at most 2 acknowledgements may be outstanding,
//     so at most MaxPending requests await one, as on the single-publish
//     path; a batch is also committed (its PubAck awaited) before
//     MaxPendingBytes of requests would await acknowledgement, every
//     10,000 requests (a start and a commit round trip cost under 1% of
//     such a batch) and at the end. A request is settled when an
//     acknowledgement covers it; the batches do not report duplicates, so
//     Summary.Duplicates counts only those of re-sent requests. A batch
//     that fails (no acknowledgement within StallTimeout, a gap, a
//     refused request, a restart or leader change) is abandoned and the
//     requests after the last acknowledged one, and only those, go
//     through the single-publish path with its gate and retries (counted
//     as retries; copies the server had stored are dropped by the
//     duplicate window); once they settled a new batch starts. Two
//     batches in a row failing before any acknowledgement, or a stream
//     refusing batches, hand the rest of the run to the single-publish
//     path. Standard input (SendLines) publishes one request at a time.
//   - Sequences of batched requests: the batch acknowledgements carry
//     batch sequences, not stream sequences, so OnSent (what -wait
//     watches) gets bounds instead: a request's INGEST sequence is above
//     the stream's last sequence known before its batch began (read from
//     the stream's info before the run's first publish, then the highest
//     sequence any acknowledgement gave) and at most its batch's commit
//     PubAck's sequence (the batch's last message; for a batch that
//     failed, the sequence of a request published after it, or the
//     stream's last sequence at the end of the run), along with its
//     version (the Nats-Msg-Id's). The bounds are exact whatever else is
//     published meanwhile; reading the stream back for exact sequences is
//     not possible, since INGEST is a work queue whose processed requests
//     are gone. Recovered requests get their own PubAck's sequence.
//   - Documents over Options.MaxDocBytes (default 64 MiB, the workers'
//     default limit) are refused with ErrTooLarge (naming the document,
//     its file, its size and the limit) before anything is stored in the
//     Object Store or published, a file before it is read: a worker would
//     only dead-letter them. A stdin content_ref is not checked (its
//     object is already stored). The limit is the caller's setting (cmd/producer:
//     -max-doc-bytes, the workers' CHUNKSTREAM_MAX_DOC_BYTES); workers do
//     not advertise theirs, so a producer must be given the same value.
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
//
// Dead letters (DLQ; dlq.go):
//   - List reads the DLQ stream without consuming it: an ordered consumer
//     (no acks, nothing removed), or gets by sequence for DLQFilter.Seqs.
//     It covers what the stream held when it started (its last sequence
//     then), so a dead letter stored meanwhile, such as that of a replay
//     that failed again at once, waits for the next run; when nothing
//     arrives for a second it asks the stream whether anything is left,
//     so dead letters deleted meanwhile cannot make it wait forever. A
//     payload is read only as far as its document id
//     (messages.PeekIngestID): one that does not decode is listed all the
//     same, without an id.
//   - Filters: kind, cause and document id prefix compare exactly; the
//     subject filter takes NATS wildcards; all set fields must match.
//   - Replay publishes the payload and the user headers
//     (messages.UserHeaders) on the original subject (Chunkstream-Subject)
//     with a fresh Nats-Msg-Id under the ingest rule, its send id
//     "<replay send id>-dlq<DLQ sequence>", unique per dead letter, so
//     two dead letters of one document and version are both replayed and
//     INGEST's duplicate window never drops a replay. It waits for the
//     PubAck and only then deletes that one dead letter: a crash in between
//     leaves a duplicate, never a loss. A PubAck that says duplicate
//     keeps the dead letter (the publish stored nothing). A content_ref
//     whose object is gone (the objects bucket's TTL) is reported and
//     kept: the request would only fail again as missing_object.
//   - Purge lists the selected dead letters, reports their number
//     (OnSelected), then deletes exactly those one by one (never a purge
//     of the stream), so a dead letter stored during the run is never
//     deleted unseen. An empty filter needs PurgeOptions.All
//     (ErrPurgeUnscoped otherwise): "every dead letter" is spelled out.
//
// Status and waiting (status.go, wait.go):
//   - ReadStatus counts the document records by state (one pass, the
//     same watch a backfill makes), and reads the consumer's backlog, the
//     dead letter stream's size and the fleet's chunker defaults; a
//     stream, consumer or bucket not set up yet reads as empty, not as an
//     error, so status answers before the first worker starts.
//   - Wait decides from the document records only, which the workers move
//     for every outcome: a record at the request's INGEST sequence (its
//     PubAck's) that is done is done; dead-lettered is failed, with the
//     record's last failure; a record at a higher sequence is superseded
//     (the document's newest version is another: whether this one was
//     written before is not recorded, and does not matter). A batched
//     request's record is one above its lower bound and at most its
//     upper bound with its version: a record at or below the lower bound
//     (an earlier version, even of the same content, or the replay of
//     one, which keeps that version's sequence) never counts, and a
//     record above the upper bound supersedes it. Another version within
//     the bounds (another sender's request of the same document in the
//     same moment) keeps it pending: the order of the two is not known,
//     so it is done only when the record moves to its version. A batch
//     does not say which requests the duplicate window dropped, so a
//     batched request that repeats one stored before under the same send
//     id (a Producer reused within two minutes; cmd/producer has a send
//     id per run) stays pending: its record is the earlier one's. A request
//     whose record the worker could not move (a dead letter whose record
//     write failed) stays pending until the timeout. Wait watches the
//     whole bucket (current values, then changes) and keeps only the ids
//     and sequences it waits for; OnSent hands them over as the PubAcks
//     come (a batch's requests once an upper bound is known: its commit,
//     a later acknowledgement, or the end of the run).
package producer
