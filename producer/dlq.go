package producer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// DLQFilter selects dead letters. A zero field selects every dead
// letter; the fields set must all match.
type DLQFilter struct {
	// Kind is the dead letter's kind (messages.KindPermanent or
	// messages.KindExhausted).
	Kind string
	// Cause is its cause (the Chunkstream-Error-Cause header).
	Cause string
	// Subject matches the request's original subject (the
	// Chunkstream-Subject header); it may hold the wildcards "*" (one
	// token) and ">" (the rest).
	Subject string
	// IDPrefix selects requests whose document id starts with it.
	IDPrefix string
	// Seqs selects dead letters by their DLQ stream sequence; a sequence
	// the stream does not hold is reported (NotFound).
	Seqs []uint64
}

// IsZero reports whether f selects every dead letter.
func (f DLQFilter) IsZero() bool {
	return f.Kind == "" && f.Cause == "" && f.Subject == "" && f.IDPrefix == "" && len(f.Seqs) == 0
}

// String describes the filter in the command's flags ("every dead letter"
// when it is zero).
func (f DLQFilter) String() string {
	var parts []string
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("-%s %s", flag, v))
		}
	}
	add("kind", f.Kind)
	add("cause", f.Cause)
	add("subject", f.Subject)
	add("id-prefix", f.IDPrefix)
	if len(f.Seqs) > 0 {
		seqs := make([]string, len(f.Seqs))
		for i, s := range f.Seqs {
			seqs[i] = fmt.Sprint(s)
		}
		add("seq", strings.Join(seqs, ","))
	}
	if len(parts) == 0 {
		return "every dead letter"
	}
	return strings.Join(parts, " ")
}

func (f DLQFilter) match(e *DeadLetterEntry) bool {
	return (f.Kind == "" || e.Kind == f.Kind) &&
		(f.Cause == "" || e.Cause == f.Cause) &&
		(f.Subject == "" || subjectMatches(f.Subject, e.Subject)) &&
		(f.IDPrefix == "" || e.DocID != "" && strings.HasPrefix(e.DocID, f.IDPrefix))
}

// subjectMatches reports whether subject matches the NATS subject filter
// (tokens separated by ".", "*" one token, a final ">" one or more).
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		switch {
		case f == ">" && i == len(ft)-1:
			return len(st) > i
		case i >= len(st):
			return false
		case f != "*" && f != st[i]:
			return false
		}
	}
	return len(st) == len(ft)
}

// DeadLetterEntry is one message of the DLQ stream: where it is, what its
// Chunkstream-* headers say, and the document id of its request.
type DeadLetterEntry struct {
	// Seq is the DLQ stream sequence; Time is when the dead letter was
	// stored.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// DocID is the request's document id (messages.PeekIngestID); empty
	// when the payload shows none.
	DocID string `json:"doc_id"`
	// Subject is the subject the request was published on; the fields
	// to IngestSeq are the dead letter's headers (messages.DeadLetter).
	Subject    string `json:"subject"`
	Kind       string `json:"kind"`
	Cause      string `json:"cause"`
	Reason     string `json:"reason"`
	Deliveries uint64 `json:"deliveries"`
	// IngestSeq is the request's INGEST sequence when it failed.
	IngestSeq uint64 `json:"ingest_seq"`
	// Problem, when set, says why the message is not a readable dead
	// letter (its headers do not parse); it is never replayed.
	Problem string `json:"problem,omitempty"`

	header nats.Header
	data   []byte
}

func newEntry(seq uint64, at time.Time, h nats.Header, data []byte) DeadLetterEntry {
	e := DeadLetterEntry{Seq: seq, Time: at.UTC(), header: h, data: data}
	dl, err := messages.ParseDeadLetter(h)
	if err != nil {
		e.Problem = err.Error()
	}
	e.Subject, e.Kind, e.Cause, e.Reason = dl.Subject, dl.Kind, dl.Cause, dl.Reason
	e.Deliveries, e.IngestSeq = dl.Deliveries, dl.StreamSeq
	if id, err := messages.PeekIngestID(h.Get(messages.HeaderContentType), data); err == nil {
		e.DocID = id
	}
	return e
}

// DLQOptions configure a DLQ.
type DLQOptions struct {
	// Topology names the dead letter stream (DLQStream); zero fields take
	// topology.DefaultConfig's values.
	Topology topology.Config
	// AckTimeout bounds each publish and delete (default 10 s).
	AckTimeout time.Duration
	// SendID identifies a replay in the Nats-Msg-Id of what it publishes
	// (default: a new NUID).
	SendID string
}

// DLQ lists, replays and purges the dead letters the workers store in the
// DLQ stream. It reads the stream without consuming it (an ordered
// consumer, or gets by sequence) and removes a dead letter only by
// deleting that one message.
type DLQ struct {
	js   jetstream.JetStream
	opts DLQOptions
	// afterPublish, when set, runs after a replay's PubAck and before the
	// dead letter is deleted; an error stops the replay there, as a crash
	// would (tests).
	afterPublish func(DeadLetterEntry) error
}

// NewDLQ returns the dead letter operations over js.
func NewDLQ(js jetstream.JetStream, opts DLQOptions) *DLQ {
	opts.Topology = opts.Topology.WithDefaults()
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = 10 * time.Second
	}
	if opts.SendID == "" {
		opts.SendID = nuid.Next()
	}
	return &DLQ{js: js, opts: opts}
}

// idleWait is how long a scan waits for the next dead letter before it
// asks the stream whether any is left (one was deleted meanwhile).
const idleWait = time.Second

// List calls fn, in stream order, for every dead letter f selects that
// the stream held when List started (dead letters stored meanwhile are
// left for the next call). It returns the sequences of f.Seqs the stream
// does not hold, and stops at fn's first error.
func (d *DLQ) List(ctx context.Context, f DLQFilter, fn func(DeadLetterEntry) error) (notFound []uint64, err error) {
	stream, err := d.js.Stream(ctx, d.opts.Topology.DLQStream)
	if err != nil {
		return nil, fmt.Errorf("producer: dead letter stream %s: %w", d.opts.Topology.DLQStream, err)
	}
	visit := func(e DeadLetterEntry) error {
		if !f.match(&e) {
			return nil
		}
		return fn(e)
	}
	if len(f.Seqs) > 0 {
		return d.listSeqs(ctx, stream, f.Seqs, visit)
	}
	return nil, d.scan(ctx, stream, visit)
}

func (d *DLQ) listSeqs(ctx context.Context, stream jetstream.Stream, seqs []uint64, fn func(DeadLetterEntry) error) ([]uint64, error) {
	seqs = slices.Clone(seqs)
	slices.Sort(seqs)
	var notFound []uint64
	for _, seq := range slices.Compact(seqs) {
		m, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			notFound = append(notFound, seq)
			continue
		}
		if err != nil {
			return notFound, fmt.Errorf("producer: read dead letter %d: %w", seq, err)
		}
		if err := fn(newEntry(m.Sequence, m.Time, m.Header, m.Data)); err != nil {
			return notFound, err
		}
	}
	return notFound, nil
}

// scan reads the stream with an ordered consumer up to the last sequence
// it held at the start.
func (d *DLQ) scan(ctx context.Context, stream jetstream.Stream, fn func(DeadLetterEntry) error) error {
	name := d.opts.Topology.DLQStream
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("producer: dead letter stream %s: %w", name, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	last := info.State.LastSeq
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("producer: read %s: %w", name, err)
	}
	// Dead letters hold whole documents: bound what waits in the client.
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(256, 16<<20))
	if err != nil {
		return fmt.Errorf("producer: read %s: %w", name, err)
	}
	defer it.Stop()
	var seen uint64
	for {
		wctx, cancel := context.WithTimeout(ctx, idleWait)
		m, err := it.Next(jetstream.NextContext(wctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("producer: read %s: %w", name, err)
			}
			// Nothing came: is a dead letter left between seen and last?
			next, err := stream.GetMsg(ctx, seen+1, jetstream.WithGetMsgSubject(">"))
			if errors.Is(err, jetstream.ErrMsgNotFound) || err == nil && next.Sequence > last {
				return nil
			}
			if err != nil {
				return fmt.Errorf("producer: read %s: %w", name, err)
			}
			continue
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("producer: read %s: %w", name, err)
		}
		seq := meta.Sequence.Stream
		if seq > last {
			return nil
		}
		if err := fn(newEntry(seq, meta.Timestamp, m.Headers(), m.Data())); err != nil {
			return err
		}
		seen = seq
		if seq == last || meta.NumPending == 0 {
			return nil
		}
	}
}

// Replay outcomes (Replayed.Outcome).
const (
	// ReplayDone: the request was published again and its dead letter
	// deleted.
	ReplayDone = "replayed"
	// ReplayWould: a dry run found nothing in the way.
	ReplayWould = "would replay"
	// ReplayKept: the dead letter stays; Reason says why.
	ReplayKept = "kept"
	// ReplayNotDeleted: the request was published again but its dead
	// letter could not be deleted; a new replay would send it twice.
	ReplayNotDeleted = "replayed, not deleted"
)

// Reasons a dead letter is kept (Replayed.Why, ReplaySummary.Kept).
const (
	KeptNotDeadLetter = "not a dead letter"
	KeptNoSubject     = "no original subject"
	KeptObjectExpired = "content_ref expired"
	KeptObjectCheck   = "content_ref not checked"
	KeptPublish       = "publish failed"
	KeptDuplicate     = "dropped as a duplicate"
	KeptNotDeleted    = "not deleted"
)

// Replayed reports what a replay did with one dead letter.
type Replayed struct {
	// Entry is the dead letter.
	Entry DeadLetterEntry
	// Outcome is ReplayDone, ReplayWould, ReplayKept or ReplayNotDeleted.
	Outcome string
	// Why is one of the Kept* reasons when the dead letter stays; Err
	// the detail.
	Why string
	Err error
	// MsgID is the Nats-Msg-Id the request is (or would be) published
	// with; IngestSeq its new INGEST sequence.
	MsgID     string
	IngestSeq uint64
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// DryRun checks every selected dead letter (its headers, its
	// content_ref object) and reports what would be done; nothing is
	// published or deleted.
	DryRun bool
	// OnResult, when set, is called for every selected dead letter, in
	// stream order.
	OnResult func(Replayed)
}

// ReplaySummary counts what a replay did.
type ReplaySummary struct {
	// Replayed counts the requests published again (or that would be,
	// in a dry run).
	Replayed int
	// Kept counts the dead letters left in the stream by reason (the
	// Kept* constants).
	Kept map[string]int
	// NotFound lists the sequences of DLQFilter.Seqs the stream did not
	// hold.
	NotFound []uint64
}

// KeptTotal returns the number of dead letters kept.
func (s ReplaySummary) KeptTotal() int {
	n := 0
	for _, c := range s.Kept {
		n += c
	}
	return n
}

// OK reports whether every selected dead letter was replayed and every
// sequence asked for was found.
func (s ReplaySummary) OK() bool { return s.KeptTotal() == 0 && len(s.NotFound) == 0 }

// Replay publishes again, in stream order, the original request of every
// dead letter f selects that the stream held when Replay started: the
// payload and the user headers (messages.UserHeaders) on the request's
// original subject, with a fresh Nats-Msg-Id "<id>@<version>@<send
// id>-dlq<seq>" (the ingest rule; a payload that does not decode uses the
// sha256 of the payload as its version). Only after the PubAck is the
// dead letter deleted, so a crash in between leaves the request both
// replayed and still dead-lettered: a later replay sends it twice, which
// the document records make harmless, and nothing is lost. A dead letter
// is kept, and reported, when its headers do not parse, it names no
// subject, its content_ref object has expired (or its presence cannot be
// checked), or the publish fails. Replay returns an error only when it
// cannot go on (the stream cannot be read, ctx ends).
func (d *DLQ) Replay(ctx context.Context, f DLQFilter, opts ReplayOptions) (ReplaySummary, error) {
	sum := ReplaySummary{Kept: map[string]int{}}
	stream, err := d.js.Stream(ctx, d.opts.Topology.DLQStream)
	if err != nil {
		return sum, fmt.Errorf("producer: dead letter stream %s: %w", d.opts.Topology.DLQStream, err)
	}
	notFound, err := d.List(ctx, f, func(e DeadLetterEntry) error {
		r, err := d.replayOne(ctx, stream, e, opts.DryRun)
		if err != nil {
			return err
		}
		switch r.Outcome {
		case ReplayDone, ReplayWould:
			sum.Replayed++
		case ReplayNotDeleted:
			sum.Replayed++
			sum.Kept[r.Why]++
		default:
			sum.Kept[r.Why]++
		}
		if opts.OnResult != nil {
			opts.OnResult(r)
		}
		return nil
	})
	sum.NotFound = notFound
	return sum, err
}

func (d *DLQ) replayOne(ctx context.Context, stream jetstream.Stream, e DeadLetterEntry, dryRun bool) (Replayed, error) {
	r := Replayed{Entry: e, Outcome: ReplayKept}
	kept := func(why string, err error) (Replayed, error) {
		r.Why, r.Err = why, err
		return r, nil
	}
	if e.Problem != "" {
		return kept(KeptNotDeadLetter, errors.New(e.Problem))
	}
	if e.Subject == "" {
		return kept(KeptNoSubject, fmt.Errorf("no %s header", messages.HeaderSubject))
	}
	ct := e.header.Get(messages.HeaderContentType)
	id, version := e.DocID, messages.ContentVersion(e.data)
	if req, err := messages.DecodeIngest(ct, e.data); err == nil {
		id = req.ID
		switch {
		case req.IsDelete():
			version = messages.OpDelete
		case req.ContentRef != nil:
			version = req.ContentRef.Name
			if why, err := d.checkObject(ctx, req.ContentRef); err != nil {
				return kept(why, err)
			}
		default:
			version = messages.ContentVersion(req.Content)
		}
	}
	r.MsgID = messages.IngestMsgID(id, version, fmt.Sprintf("%s-dlq%d", d.opts.SendID, e.Seq))
	if dryRun {
		r.Outcome = ReplayWould
		return r, nil
	}
	out := nats.NewMsg(e.Subject)
	out.Data = e.data
	out.Header = nats.Header(messages.UserHeaders(e.header))
	out.Header.Set(messages.HeaderMsgID, r.MsgID)
	pctx, cancel := context.WithTimeout(ctx, d.opts.AckTimeout)
	ack, err := d.js.PublishMsg(pctx, out)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		return kept(KeptPublish, fmt.Errorf("publish on %s: %w", e.Subject, err))
	}
	if ack.Duplicate {
		// INGEST already held a message of this id, so this publish stored
		// nothing: deleting the dead letter could lose the request. (Fresh
		// ids make this happen only to a replay sent twice with one send
		// id.)
		return kept(KeptDuplicate, fmt.Errorf("%s dropped the request as a duplicate of %s (sequence %d)", ack.Stream, r.MsgID, ack.Sequence))
	}
	r.IngestSeq = ack.Sequence
	if d.afterPublish != nil {
		if err := d.afterPublish(e); err != nil {
			return r, err
		}
	}
	dctx, cancel := context.WithTimeout(ctx, d.opts.AckTimeout)
	err = stream.DeleteMsg(dctx, e.Seq)
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		r.Outcome, r.Why, r.Err = ReplayNotDeleted, KeptNotDeleted, fmt.Errorf("delete dead letter %d: %w", e.Seq, err)
		return r, nil
	}
	r.Outcome = ReplayDone
	return r, nil
}

// checkObject reports whether the object behind a content_ref is still
// there; when it is not, the reason a replay keeps the dead letter.
func (d *DLQ) checkObject(ctx context.Context, ref *messages.ContentRef) (string, error) {
	store, err := d.js.ObjectStore(ctx, ref.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return KeptObjectExpired, fmt.Errorf("content_ref %s/%s: the bucket is gone", ref.Bucket, ref.Name)
	}
	if err != nil {
		return KeptObjectCheck, fmt.Errorf("content_ref %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	if _, err := store.GetInfo(ctx, ref.Name); errors.Is(err, jetstream.ErrObjectNotFound) {
		return KeptObjectExpired, fmt.Errorf("content_ref %s/%s has expired or was removed: put the document there again, or send it anew", ref.Bucket, ref.Name)
	} else if err != nil {
		return KeptObjectCheck, fmt.Errorf("content_ref %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	return "", nil
}

// PurgeOptions configure Purge.
type PurgeOptions struct {
	// DryRun deletes nothing and reports what would be deleted.
	DryRun bool
	// OnEntry, when set, is called for every dead letter deleted (or
	// that would be), in stream order.
	OnEntry func(DeadLetterEntry)
}

// PurgeSummary counts what a purge did.
type PurgeSummary struct {
	// Deleted counts the dead letters deleted (or that would be).
	Deleted int
	// NotFound lists the sequences of DLQFilter.Seqs the stream did not
	// hold.
	NotFound []uint64
}

// Purge deletes every dead letter f selects that the stream held when it
// started, one message at a time (a dead letter stored meanwhile is
// never deleted unseen).
func (d *DLQ) Purge(ctx context.Context, f DLQFilter, opts PurgeOptions) (PurgeSummary, error) {
	var sum PurgeSummary
	stream, err := d.js.Stream(ctx, d.opts.Topology.DLQStream)
	if err != nil {
		return sum, fmt.Errorf("producer: dead letter stream %s: %w", d.opts.Topology.DLQStream, err)
	}
	notFound, err := d.List(ctx, f, func(e DeadLetterEntry) error {
		if !opts.DryRun {
			dctx, cancel := context.WithTimeout(ctx, d.opts.AckTimeout)
			err := stream.DeleteMsg(dctx, e.Seq)
			cancel()
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return nil // deleted by someone else meanwhile
			}
			if err != nil {
				return fmt.Errorf("producer: delete dead letter %d: %w", e.Seq, err)
			}
		}
		sum.Deleted++
		if opts.OnEntry != nil {
			opts.OnEntry(e)
		}
		return nil
	})
	sum.NotFound = notFound
	return sum, err
}
