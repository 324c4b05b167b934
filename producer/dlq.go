package producer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// DLQFilter selects dead letters: the fields set must all match (a zero
// filter selects every one).
type DLQFilter struct {
	Kind  messages.Kind
	Cause fault.Cause // the Chunkstream-Error-Cause header
	// Subject matches the request's original subject (Chunkstream-Subject);
	// it may hold the wildcards "*" and ">".
	Subject  string
	IDPrefix string // of the document id
	// Tenant selects the requests of one tenant; "" selects every
	// tenant's and the untenanted ones.
	Tenant string
	// Seqs selects dead letters by DLQ stream sequence; one the stream
	// does not hold is reported (NotFound).
	Seqs []uint64
}

// String describes the filter in the command's flags.
func (f DLQFilter) String() string {
	var parts []string
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("-%s %s", flag, v))
		}
	}
	add("kind", string(f.Kind))
	add("cause", string(f.Cause))
	add("subject", f.Subject)
	add("tenant", f.Tenant)
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
		(f.Tenant == "" || e.DocID != "" && e.Tenant == f.Tenant) &&
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

// DeadLetterEntry is one message of the DLQ stream: its sequence and
// time, what its Chunkstream-* headers say (messages.DeadLetter), and the
// document id of its request.
type DeadLetterEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	DocID string    `json:"doc_id"` // messages.PeekIngestID; empty when the payload shows none
	// Tenant is the request's tenant ("" for none); a tenant's document
	// has a record of its own (messages.RecordID).
	Tenant string `json:"tenant,omitempty"`
	// Subject is the subject the request was published on.
	Subject    string        `json:"subject"`
	Kind       messages.Kind `json:"kind"`
	Cause      fault.Cause   `json:"cause"`
	Reason     string        `json:"reason"`
	Deliveries uint64        `json:"deliveries"`
	// StreamSeq is the failed request's INGEST sequence; IngestSeq the
	// ingest_seq of its version (StreamSeq unless it was a replay).
	StreamSeq uint64 `json:"stream_seq"`
	IngestSeq uint64 `json:"ingest_seq"`
	// Standing and RecordSeq (the record's ingest_seq, 0 without a record)
	// are set by DLQ.Standing and by Replay.
	Standing  Standing `json:"standing,omitempty"`
	RecordSeq uint64   `json:"record_seq,omitempty"`
	// Problem says why the message is not a readable dead letter (its
	// headers do not parse); it is never replayed.
	Problem string `json:"problem,omitempty"`

	header nats.Header
	data   []byte
	rid    string // the record's name (messages.RecordID); "" when no record is the request's
	twin   bool   // a bulk's refused twin (messages.DeadLetter.Twin)
}

func newEntry(seq uint64, at time.Time, h nats.Header, data []byte) DeadLetterEntry {
	e := DeadLetterEntry{Seq: seq, Time: at.UTC(), header: h, data: data}
	dl, err := messages.ParseDeadLetter(h)
	if err != nil {
		e.Problem = err.Error()
	}
	e.Subject, e.Kind, e.Cause, e.Reason = dl.Subject, dl.Kind, dl.Cause, dl.Reason
	e.Deliveries, e.StreamSeq, e.IngestSeq, e.twin = dl.Deliveries, dl.StreamSeq, dl.IngestSeq, dl.Twin
	ct := h.Get(messages.HeaderContentType)
	if rid, err := messages.PeekIngestRecordID(ct, data); err == nil && rid != "" {
		e.rid = rid
		e.Tenant, e.DocID = messages.SplitRecordID(rid)
	} else if id, err := messages.PeekIngestID(ct, data); err == nil {
		e.DocID = id // no record is the request's (no id, or a tenant not valid)
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
	// TracerProvider traces each replay (SpanReplay); nil means no tracing.
	TracerProvider trace.TracerProvider
}

// DLQ lists, replays and purges the dead letters the workers store in the
// DLQ stream (docs/cli.md, "producer dlq").
type DLQ struct {
	js     jetstream.JetStream
	opts   DLQOptions
	tracer trace.Tracer
	// afterPublish (tests) runs after a replay's PubAck and before the dead
	// letter is deleted; an error stops the replay there, as a crash would.
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
	return &DLQ{js: js, opts: opts, tracer: tracing.Tracer(opts.TracerProvider)}
}

// stream returns the dead letter stream, nil when it does not exist yet.
func (d *DLQ) stream(ctx context.Context) (jetstream.Stream, error) {
	stream, err := d.js.Stream(ctx, d.opts.Topology.DLQStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dead letter stream %s: %w", d.opts.Topology.DLQStream, err)
	}
	return stream, nil
}

// scanInactive is how long the server keeps the consumer of a scan that
// stopped without deleting it.
const scanInactive = 30 * time.Second

// idleWait is how long a scan waits for the next dead letter before it
// asks the stream whether any is left (one was deleted meanwhile).
const idleWait = time.Second

// List calls fn, in stream order, for every dead letter f selects that
// the stream held when List started. It returns the sequences of f.Seqs
// the stream does not hold, and stops at fn's first error.
func (d *DLQ) List(ctx context.Context, f DLQFilter, fn func(DeadLetterEntry) error) (notFound []uint64, err error) {
	stream, err := d.stream(ctx)
	if err != nil {
		return nil, err
	}
	if stream == nil {
		return f.Seqs, nil
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

// scan reads the stream, ordered, up to its last sequence at the start.
func (d *DLQ) scan(ctx context.Context, stream jetstream.Stream, fn func(DeadLetterEntry) error) error {
	name := d.opts.Topology.DLQStream
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("dead letter stream %s: %w", name, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	last := info.State.LastSeq
	// The server removes a consumer left behind (a crash) after
	// scanInactive; one that ends normally is deleted at once.
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{InactiveThreshold: scanInactive})
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer func() {
		if info := cons.CachedInfo(); info != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.AckTimeout)
			_ = stream.DeleteConsumer(dctx, info.Name)
			cancel()
		}
	}()
	// Dead letters hold whole documents: bound what waits in the client.
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(256, 16<<20))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
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
				return fmt.Errorf("read %s: %w", name, err)
			}
			// Nothing came: is a dead letter left between seen and last?
			next, err := stream.GetMsg(ctx, seen+1, jetstream.WithGetMsgSubject(">"))
			if errors.Is(err, jetstream.ErrMsgNotFound) || err == nil && next.Sequence > last {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			continue
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
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

// Standing is where a dead letter's version stands against its
// document's record, which only moves forward.
type Standing string

const (
	// StandingCurrent: no newer version recorded, or newer versions only
	// at other places (collections) than one where this version is still
	// the newest; a replay processes it.
	StandingCurrent Standing = "current"
	// StandingSuperseded: the record holds a newer version, started or
	// done, at every place this version may have written: a replay would
	// leave the document as it is.
	StandingSuperseded Standing = "superseded"
	// StandingElsewhere: the record holds newer versions, sent to other
	// places (Qdrant collections) only; at its own place this version is
	// still the newest and that place holds what it left (half written,
	// if it failed part way). A replay processes it there. The record
	// reads as the newer version's, so `status -failed` does not list it.
	StandingElsewhere Standing = "overtaken_elsewhere"
	// StandingWritten: the record holds this very version, done (only its
	// ack was lost).
	StandingWritten Standing = "written"
	// StandingShared: the record holds another version of the document
	// at this very ingest_seq: a bulk request held the document twice
	// and refused this version (its versions would have shared one
	// ingest_seq). A replay sends it as a new version.
	StandingShared Standing = "shared"
	// StandingUnknown: no document id, a tenant that is not valid (no
	// record is the request's), or the record could not be read.
	StandingUnknown Standing = "unknown"
)

// Standing reads e's record and sets e.Standing and e.RecordSeq.
func (d *DLQ) Standing(ctx context.Context, e *DeadLetterEntry) error {
	e.Standing = StandingUnknown
	if e.rid == "" || e.Problem != "" {
		return nil
	}
	rec, ok, err := ReadRecord(ctx, d.js, d.opts.Topology.DocsBucket, e.rid)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		e.Standing = StandingCurrent
	case rec.IngestSeq > e.IngestSeq && !e.twin && newestAtItsPlace(rec, e.IngestSeq):
		e.Standing, e.RecordSeq = StandingElsewhere, rec.IngestSeq
	case rec.IngestSeq > e.IngestSeq:
		// A bulk's twin never went to a place: the places at its
		// ingest_seq are the other version's.
		e.Standing, e.RecordSeq = StandingSuperseded, rec.IngestSeq
	case rec.IngestSeq == e.IngestSeq && !holdsVersion(rec, e):
		e.Standing, e.RecordSeq = StandingShared, rec.IngestSeq
	case rec.IngestSeq == e.IngestSeq && rec.State == messages.StateDone:
		e.Standing, e.RecordSeq = StandingWritten, rec.IngestSeq
	default:
		e.Standing, e.RecordSeq = StandingCurrent, rec.IngestSeq
	}
	return nil
}

// newestAtItsPlace reports whether version seq, overtaken in the record,
// is still the newest version started at the place it went to (a Qdrant
// collection: messages.DocRecord.Targets): the newer versions went
// elsewhere. Its place stays as seq left it (half written, if it failed
// part way) until seq is processed again, which a worker does for a
// replay (docs/design.md, "Versions in several collections"), so the
// dead letter is overtaken elsewhere, not superseded. The dead letter
// does not say its place; some place holding seq as its newest is enough.
func newestAtItsPlace(rec messages.DocRecord, seq uint64) bool {
	for k, v := range rec.Targets {
		if v == seq && rec.NewestAt(k) == seq {
			return true
		}
	}
	return false
}

// holdsVersion reports whether rec, a record at e's ingest_seq, is of e's
// own version (same operation and content). Only a bulk request that held
// the document twice puts another version there. A request that does not
// decode, or a record that does not say (a failure recorded before its
// request decoded), counts as holding it.
func holdsVersion(rec messages.DocRecord, e *DeadLetterEntry) bool {
	req, err := messages.DecodeIngest(e.header.Get(messages.HeaderContentType), e.data)
	if err != nil || rec.Op == "" {
		return true
	}
	switch {
	case req.IsDelete():
		return rec.Op == messages.OpDelete
	case req.ContentRef != nil:
		return rec.Op == messages.OpUpsert && rec.DocVersion == req.ContentRef.Name
	case req.Content == nil: // refused for it: its failure recorded no version
		return rec.Op == messages.OpUpsert && rec.DocVersion == ""
	}
	return rec.Op == messages.OpUpsert && rec.DocVersion == messages.ContentVersion(req.Content)
}

// ReplayAction is what a replay did, or would do, with one dead letter.
type ReplayAction string

const (
	// ActionProcess: published again, the dead letter deleted.
	ActionProcess ReplayAction = "process"
	// ActionRemove: the version is superseded or written: nothing is
	// published and the dead letter is deleted.
	ActionRemove ReplayAction = "remove"
	// ActionKeep: the dead letter stays; Replayed.Why says why.
	ActionKeep ReplayAction = "keep"
)

// KeepReason is why a replay keeps a dead letter.
type KeepReason string

const (
	KeepNotDeadLetter KeepReason = "not_dead_letter"  // its headers do not parse
	KeepNoSubject     KeepReason = "no_subject"       // it names no original subject
	KeepObjectExpired KeepReason = "object_expired"   // its content_ref object is gone
	KeepObjectCheck   KeepReason = "object_unchecked" // the object could not be checked
	KeepRecord        KeepReason = "record_unread"    // the document record could not be read
	KeepPublish       KeepReason = "publish_failed"   // the publish failed
	KeepDuplicate     KeepReason = "duplicate"        // INGEST dropped the publish as a duplicate
	KeepNotDeleted    KeepReason = "not_deleted"      // published, but the dead letter could not be deleted
)

// Replayed reports what a replay did, or would do, with one dead letter.
type Replayed struct {
	Entry  DeadLetterEntry // with its Standing
	Action ReplayAction
	DryRun bool
	// Why and Err say why a dead letter is kept (ActionKeep, or
	// ActionProcess with KeepNotDeleted).
	Why KeepReason
	Err error
	// MsgID is the Nats-Msg-Id the request is (or would be) published
	// with; StreamSeq its new INGEST sequence.
	MsgID     string
	StreamSeq uint64
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// DryRun checks every selected dead letter (headers, record,
	// content_ref object) and reports what would be done, changing
	// nothing.
	DryRun bool
	// OnResult, when set, receives each selected dead letter's result.
	OnResult func(Replayed)
}

// ReplaySummary counts what a replay did (or would do), by action; Kept
// by reason. NotFound lists the sequences of DLQFilter.Seqs the stream
// did not hold.
type ReplaySummary struct {
	Processed, Removed int
	Kept               map[KeepReason]int
	NotFound           []uint64
}

// KeptTotal returns the number of dead letters kept.
func (s ReplaySummary) KeptTotal() int {
	n := 0
	for _, c := range s.Kept {
		n += c
	}
	return n
}

// OK reports whether nothing was kept and every sequence was found.
func (s ReplaySummary) OK() bool { return s.KeptTotal() == 0 && len(s.NotFound) == 0 }

// Replay replays, in stream order, every dead letter f selects that the
// stream held when Replay started (the rules: docs/cli.md, "producer dlq"). The
// request keeps its place in time: it is published again with
// messages.HeaderIngestSeq set to its version's ingest_seq, so workers
// order it as the version it was. When the record already holds a newer
// version, or this version done, nothing is published and the dead letter
// is deleted (ActionRemove): the record never moves back, so that verdict
// cannot go stale. A payload that does not decode gets the sha256 of the
// payload as its version. Replay returns an error only when it cannot go
// on (the stream cannot be read, ctx ends), or, wrapping
// ErrWorkersBehind, when it would publish a tenant's request or a whole
// bulk while a running worker does not read them: then, a dry run
// excepted, it publishes nothing and keeps every dead letter.
func (d *DLQ) Replay(ctx context.Context, f DLQFilter, opts ReplayOptions) (ReplaySummary, error) {
	sum := ReplaySummary{Kept: map[KeepReason]int{}}
	stream, err := d.stream(ctx)
	if err != nil || stream == nil {
		sum.NotFound = f.Seqs
		return sum, err
	}
	asked := f.Seqs
	var read *listed // the selection, when requireReads had to read it
	if !opts.DryRun {
		if read, err = d.requireReads(ctx, f); err != nil || read != nil && len(read.seqs) == 0 {
			if read != nil {
				sum.NotFound = read.notFound
			}
			return sum, err
		}
		if read != nil {
			f.Seqs = read.seqs
		}
	}
	// Replays go through the producer's one publish path, riding out an
	// outage like any request (ReplayOptions.Retry).
	var done *outgoing
	snd := newSender(ctx, d.js, 1, 0, 0, RetryOptions{AckTimeout: d.opts.AckTimeout}, func(o *outgoing) { done = o }, nil)
	defer snd.close(ctx)
	notFound, err := d.List(ctx, f, func(e DeadLetterEntry) error {
		r, err := d.replayOne(ctx, stream, e, opts.DryRun, func(out *nats.Msg) (*jetstream.PubAck, error) {
			if err := snd.sendWait(ctx, &outgoing{msg: out, id: e.DocID, tenant: e.Tenant}); err != nil {
				return nil, err
			}
			if done.err != nil {
				return nil, errors.Unwrap(done.err) // without the sender's prefix: kept names the subject
			}
			return done.ack, nil
		})
		if err != nil {
			return err
		}
		switch {
		case r.Action == ActionProcess:
			sum.Processed++
		case r.Action == ActionRemove:
			sum.Removed++
		}
		if r.Why != "" {
			sum.Kept[r.Why]++
		}
		if opts.OnResult != nil {
			opts.OnResult(r)
		}
		return nil
	})
	sum.NotFound = notFound
	if read != nil {
		// Of the sequences read first, only those asked for are reported
		// when gone since (deleted meanwhile, like any dead letter).
		sum.NotFound = slices.DeleteFunc(notFound, func(seq uint64) bool { return !slices.Contains(asked, seq) })
		sum.NotFound = slices.Sorted(slices.Values(slices.Concat(read.notFound, sum.NotFound)))
	}
	return sum, err
}

// listed is a selection of dead letters read ahead: their sequences and
// the sequences asked for that were not found.
type listed struct{ seqs, notFound []uint64 }

// requireReads refuses, wrapping ErrWorkersBehind, a replay that would
// publish a tenant's request or a whole bulk (one that did not decode)
// while a running worker does not read them, as a producer run does
// (Producer.requireReads): nothing is published, every dead letter kept.
// Only when some running worker is behind does it read the selection
// first, and returns it (nil otherwise): the replay then takes exactly
// those sequences, so that a dead letter stored meanwhile is not replayed
// unchecked.
func (d *DLQ) requireReads(ctx context.Context, f DLQFilter) (*listed, error) {
	bucket := d.opts.Topology.DocsBucket
	err := requireReads(ctx, d.js, bucket, true, true)
	if !errors.Is(err, ErrWorkersBehind) {
		return nil, err // every running worker reads both, or none runs
	}
	var (
		read          listed
		tenants, bulk bool
	)
	read.notFound, err = d.List(ctx, f, func(e DeadLetterEntry) error {
		read.seqs = append(read.seqs, e.Seq)
		tenants = tenants || e.hasTenant()
		bulk = bulk || messages.IsBulk(e.header.Get(messages.HeaderContentType))
		return nil
	})
	if err == nil {
		err = requireReads(ctx, d.js, bucket, tenants, bulk)
	}
	return &read, err
}

// hasTenant reports whether e's request names a tenant, valid or not
// (a worker that does not read tenants would take it for the
// untenanted document).
func (e *DeadLetterEntry) hasTenant() bool {
	if e.Tenant != "" {
		return true
	}
	req, err := messages.DecodeIngest(e.header.Get(messages.HeaderContentType), e.data)
	return err == nil && req.Tenant != ""
}

func (d *DLQ) replayOne(ctx context.Context, stream jetstream.Stream, e DeadLetterEntry, dryRun bool, publish func(*nats.Msg) (*jetstream.PubAck, error)) (Replayed, error) {
	r := Replayed{Entry: e, Action: ActionKeep, DryRun: dryRun}
	kept := func(why KeepReason, err error) (Replayed, error) {
		r.Why, r.Err = why, err
		return r, nil
	}
	if e.Problem != "" {
		return kept(KeepNotDeadLetter, errors.New(e.Problem))
	}
	if e.Subject == "" {
		return kept(KeepNoSubject, fmt.Errorf("no %s header", messages.HeaderSubject))
	}
	if err := d.Standing(ctx, &r.Entry); err != nil {
		return kept(KeepRecord, err)
	}
	if st := r.Entry.Standing; st == StandingSuperseded || st == StandingWritten {
		r.Action = ActionRemove
		if dryRun {
			return r, nil
		}
		return d.deleteReplayed(ctx, stream, r)
	}
	ct := e.header.Get(messages.HeaderContentType)
	id, version := e.DocID, messages.ContentVersion(e.data)
	if req, err := messages.DecodeIngest(ct, e.data); err == nil {
		id = req.ID
		switch {
		case req.IsDelete():
			version = string(messages.OpDelete)
		case req.ContentRef != nil:
			version = req.ContentRef.Name
			if why, err := d.checkObject(ctx, req.ContentRef); err != nil {
				return kept(why, err)
			}
		default:
			version = messages.ContentVersion(req.Content)
		}
	}
	r.MsgID = messages.IngestMsgID(e.Tenant, id, version, fmt.Sprintf("%s-dlq%d", d.opts.SendID, e.Seq))
	r.Action = ActionProcess
	if dryRun {
		return r, nil
	}
	out := nats.NewMsg(e.Subject)
	out.Data = e.data
	out.Header = nats.Header(messages.UserHeaders(e.header))
	out.Header.Set(messages.HeaderMsgID, r.MsgID)
	if r.Entry.Standing != StandingShared {
		out.Header.Set(messages.HeaderIngestSeq, strconv.FormatUint(e.IngestSeq, 10))
	} // else a new version: its place in time is taken by another

	_, span := d.startReplay(ctx, e, id, out)
	ack, err := publish(out)
	endSend(span, ack, err)
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Action = ActionKeep
		return kept(KeepPublish, fmt.Errorf("publish on %s: %w", e.Subject, err))
	}
	if ack.Duplicate {
		// INGEST already held a message of this id, so this publish stored
		// nothing: deleting the dead letter could lose the request. (Fresh
		// ids make this happen only to a replay sent twice with one send
		// id.)
		r.Action = ActionKeep
		return kept(KeepDuplicate, fmt.Errorf("%s dropped the request as a duplicate of %s (sequence %d)", ack.Stream, r.MsgID, ack.Sequence))
	}
	r.StreamSeq = ack.Sequence
	if d.afterPublish != nil {
		if err := d.afterPublish(e); err != nil {
			return r, err
		}
	}
	return d.deleteReplayed(ctx, stream, r)
}

// deleteReplayed deletes r's dead letter, reporting a failure as kept.
func (d *DLQ) deleteReplayed(ctx context.Context, stream jetstream.Stream, r Replayed) (Replayed, error) {
	dctx, cancel := context.WithTimeout(ctx, d.opts.AckTimeout)
	err := stream.DeleteMsg(dctx, r.Entry.Seq)
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		r.Why, r.Err = KeepNotDeleted, fmt.Errorf("delete dead letter %d: %w", r.Entry.Seq, err)
	}
	return r, nil
}

// checkObject returns why a replay keeps a dead letter whose content_ref
// object is not there, or "".
func (d *DLQ) checkObject(ctx context.Context, ref *messages.ContentRef) (KeepReason, error) {
	store, err := d.js.ObjectStore(ctx, ref.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return KeepObjectExpired, fmt.Errorf("content_ref %s/%s: the bucket is gone", ref.Bucket, ref.Name)
	}
	if err != nil {
		return KeepObjectCheck, fmt.Errorf("content_ref %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	if _, err := store.GetInfo(ctx, ref.Name); errors.Is(err, jetstream.ErrObjectNotFound) {
		return KeepObjectExpired, fmt.Errorf("content_ref %s/%s has expired or was removed: put the document there again, or send it anew", ref.Bucket, ref.Name)
	} else if err != nil {
		return KeepObjectCheck, fmt.Errorf("content_ref %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	return "", nil
}

// ErrPurgeUnscoped is Purge with an empty filter and without
// PurgeOptions.All: nothing was deleted.
var ErrPurgeUnscoped = errors.New("producer: dlq purge without a filter")

// PurgeOptions configure Purge.
type PurgeOptions struct {
	// DryRun deletes nothing and reports what would be deleted.
	DryRun bool
	// All lets an empty filter select every dead letter; without it such
	// a purge deletes nothing and returns ErrPurgeUnscoped (a dry run
	// excepted).
	All bool
	// OnSelected, when set, receives the number of dead letters selected
	// before any is deleted (or refused); an error it returns stops the
	// purge, nothing deleted.
	OnSelected func(n int) error
	// OnEntry, when set, receives each dead letter deleted (or to be).
	OnEntry func(DeadLetterEntry)
}

// PurgeSummary counts the dead letters selected and deleted (or that
// would be); NotFound lists the sequences of DLQFilter.Seqs the stream
// did not hold.
type PurgeSummary struct {
	Selected int
	Deleted  int
	NotFound []uint64
}

// IsZero reports whether f selects every dead letter: no filter, or a
// subject filter that matches every subject (">").
func (f DLQFilter) IsZero() bool {
	return f.Kind == "" && f.Cause == "" && (f.Subject == "" || f.Subject == ">") && f.Tenant == "" && f.IDPrefix == "" && len(f.Seqs) == 0
}

// Purge deletes, one message at a time, every dead letter f selects that
// the stream held when it started: it lists them first, reports their
// number (OnSelected), then deletes exactly those, so a dead letter
// stored meanwhile is never deleted unseen. A record that holds the
// purged version as dead-lettered moves to messages.StateDismissed, so
// the failure is no longer listed.
func (d *DLQ) Purge(ctx context.Context, f DLQFilter, opts PurgeOptions) (PurgeSummary, error) {
	var sum PurgeSummary
	stream, err := d.stream(ctx)
	if err != nil {
		sum.NotFound = f.Seqs
		return sum, err
	}
	var selected []DeadLetterEntry
	if stream != nil {
		sum.NotFound, err = d.List(ctx, f, func(e DeadLetterEntry) error {
			selected = append(selected, e)
			return nil
		})
		if err != nil {
			return sum, err
		}
	} else {
		sum.NotFound = f.Seqs
	}
	sum.Selected = len(selected)
	if opts.OnSelected != nil {
		if err := opts.OnSelected(len(selected)); err != nil {
			return sum, err
		}
	}
	if f.IsZero() && !opts.All && !opts.DryRun {
		return sum, ErrPurgeUnscoped
	}
	for _, e := range selected {
		if !opts.DryRun {
			dctx, cancel := context.WithTimeout(ctx, d.opts.AckTimeout)
			err := stream.DeleteMsg(dctx, e.Seq)
			cancel()
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // deleted by someone else meanwhile
			}
			if err != nil {
				return sum, fmt.Errorf("delete dead letter %d: %w", e.Seq, err)
			}
			if err := d.dismiss(ctx, e); err != nil {
				return sum, err
			}
		}
		sum.Deleted++
		if opts.OnEntry != nil {
			opts.OnEntry(e)
		}
	}
	return sum, nil
}

// dismiss moves e's record from dead-lettered to dismissed when the
// failure it holds is e's (failureOf), by compare-and-set.
func (d *DLQ) dismiss(ctx context.Context, e DeadLetterEntry) error {
	if e.rid == "" || e.Problem != "" {
		return nil
	}
	kv, err := d.js.KeyValue(ctx, d.opts.Topology.DocsBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("document records %s: %w", d.opts.Topology.DocsBucket, err)
	}
	key := messages.DocRecordKey(e.rid)
	for {
		entry, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("record of %q: %w", e.DocID, err)
		}
		rec, err := messages.DecodeDocRecord(entry.Value())
		if err != nil || rec.State != messages.StateDeadLettered || !failureOf(rec, &e) {
			return nil
		}
		rec.State, rec.LastFailure = messages.StateDismissed, messages.Failure{}
		val, err := messages.EncodeDocRecord(rec)
		if err != nil {
			return err
		}
		_, err = kv.Update(ctx, key, val, entry.Revision())
		if topology.IsCASConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("dismiss the failure of %q: %w", e.DocID, err)
		}
		return nil
	}
}

// failureOf reports whether the failure rec records is the one e is the
// dead letter of: the same version (ingest_seq and holdsVersion: a bulk's
// refused twin shares the ingest_seq, not the version), the same cause,
// and the same failed delivery (a replay of e that failed again recorded
// its own dead letter, still to be dealt with). A field the record does
// not hold (written before it existed) does not count against it.
func failureOf(rec messages.DocRecord, e *DeadLetterEntry) bool {
	f := rec.LastFailure
	return rec.IngestSeq == e.IngestSeq && holdsVersion(rec, e) &&
		(f.Cause == "" || f.Cause == e.Cause) &&
		(f.StreamSeq == 0 || f.StreamSeq == e.StreamSeq)
}
