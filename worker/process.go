package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
)

// processor runs the five steps of docs/design.md ("Processing one
// version") for each delivery, and acks and dead-letters (act.go).
type processor struct {
	cfg      *Config
	log      *slog.Logger
	m        *Metrics
	js       jetstream.JetStream
	sink     Sink // decorated with SinkMetrics
	raw      Sink
	records  *KVRecords
	fleet    *fleet // resolves requests with the fleet's chunker defaults
	backoff  Backoff
	tracer   trace.Tracer
	objMu    sync.Mutex
	objects  map[string]jetstream.ObjectStore
	acks     sync.WaitGroup // ack confirmations awaited in the background
	ackSlots chan struct{}
	// objectSlots bounds the documents read from the Object Store in
	// hand at once (nil: no bound): processors are many with the subject
	// sink, and such a document may be as large as MaxDocBytes.
	objectSlots chan struct{}
	inFlight    atomic.Int64
	// resolutions remembers requests' chunkers and fingerprints per
	// settings key (resolutions.go).
	resolutions resolutions
	// msgIDVersions takes inline upserts' versions from their ids
	// (Options.VersionsFromMsgIDs).
	msgIDVersions bool
}

// handle processes one delivery and settles it.
func (w *Worker) handle(ctx context.Context, t *task) Result {
	start := time.Now()
	t.start = start
	w.m.InFlight.Inc()
	w.proc.inFlight.Add(1)
	defer func() {
		w.m.InFlight.Dec()
		w.proc.inFlight.Add(-1)
	}()
	msg := t.msg
	meta, err := msg.Metadata()
	if err != nil {
		// Not a JetStream message: nothing to ack or redeliver.
		w.log.Error("message without JetStream metadata", "subject", msg.Subject(), "err", err)
		return Result{Outcome: OutcomeAbandoned}
	}
	if meta.NumDelivered > 1 && t.tries == 0 {
		w.m.Redeliveries.Inc()
	}
	ctx, span := w.proc.startDelivery(ctx, t, meta.Sequence.Stream, meta.NumDelivered)
	hb := w.proc.heartbeat(ctx, msg)
	d := delivery{n: meta.NumDelivered, max: w.cfg.MaxDeliver, tries: t.tries}
	v := w.proc.process(ctx, msg, meta.Sequence.Stream, d)
	hb.stop()

	res := Result{Subject: msg.Subject(), StreamSeq: meta.Sequence.Stream, IngestSeq: v.seq, Delivery: meta.NumDelivered,
		Err: v.err, Chunks: v.chunks, Bytes: v.bytes, Warnings: v.warnings}
	if v.req != nil {
		res.DocID = v.req.ID
	}
	res = w.settle(ctx, t, res, v)
	endDelivery(span, res)
	elapsed := time.Since(start)
	w.m.Messages.WithLabelValues(string(res.Outcome)).Inc()
	w.m.Latency.WithLabelValues(string(res.Outcome)).Observe(elapsed.Seconds())
	attrs := []any{"doc_id", res.DocID, "subject", res.Subject, "stream_seq", res.StreamSeq,
		"num_delivered", res.Delivery, "outcome", res.Outcome, "chunks", res.Chunks, "bytes", res.Bytes,
		"duration", elapsed}
	switch {
	case res.Err == nil:
		w.log.DebugContext(ctx, "processed", attrs...)
	case res.Outcome == OutcomePaused:
		// The outage itself is logged once (sink down / up again).
		w.log.DebugContext(ctx, "held: sink unavailable", append(attrs, "cause", res.Cause, "err", res.Err)...)
	case res.Outcome == OutcomeRetried || res.Outcome == OutcomeAbandoned:
		w.log.WarnContext(ctx, "processing failed, will retry", append(attrs, "cause", res.Cause, "err", res.Err)...)
	default:
		w.log.ErrorContext(ctx, "dead-lettered", append(attrs, "cause", res.Cause, "err", res.Err)...)
	}
	if w.onResult != nil {
		w.onResult(res)
	}
	return res
}

// heartbeat sends in-progress acks every AckWait/3 until stop is called
// or ctx ends, so the server never redelivers a message a live worker is
// still on. It is a timer rather than a goroutine of its own: a document
// is over long before its first beat, and starting and stopping a
// goroutine, its ticker and its context per document cost a percent of
// a worker's CPU.
func (p *processor) heartbeat(ctx context.Context, msg jetstream.Msg) *beats {
	b := &beats{}
	every := p.cfg.AckWait / 3
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t = time.AfterFunc(every, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.stopped || ctx.Err() != nil {
			return
		}
		if err := msg.InProgress(); err != nil {
			p.log.Warn("in-progress ack failed", "subject", msg.Subject(), "err", err)
		}
		b.t.Reset(every)
	})
	return b
}

// beats are the in-progress acks of one delivery (processor.heartbeat).
type beats struct {
	mu      sync.Mutex // held while a beat runs
	stopped bool
	t       *time.Timer
}

// stop ends the beats: none is sent once it returns (it waits for one
// being sent).
func (b *beats) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.t.Stop()
}

// verdict is what processing one delivery found, for settle to act on:
// the outcome of a request to ack (err nil), or the error to retry or
// dead-letter, tagged with its cause (fault.WithCause) and marked when
// permanent (fault.Permanent); and what the request said.
type verdict struct {
	outcome Outcome // OutcomeAcked, OutcomeSuperseded or OutcomeDuplicate when err is nil
	err     error
	// req is the decoded request, nil when it did not decode.
	req *messages.IngestRequest
	// seq is the version's ingest_seq, 0 until read.
	seq           uint64
	chunks, bytes int
	warnings      []chunking.Warning
	// deadLetter is why the dead letter, or its record, could not be
	// stored, once settling tried (act).
	deadLetter error
}

// permanent tags err with cause and marks it permanent.
func permanent(cause fault.Cause, err error) error {
	return fault.Permanent(fault.WithCause(cause, err))
}

// process runs steps 1–5 of the processing procedure for delivery d of
// the request stored at streamSeq. A delivery past the last one a
// request gets is not processed: its record alone tells whether an
// earlier delivery finished it (docs/design.md, "Delivery semantics").
func (p *processor) process(ctx context.Context, msg jetstream.Msg, streamSeq uint64, d delivery) (v verdict) {
	if v = p.decode(ctx, msg, streamSeq); v.err != nil {
		return v
	}
	req := *v.req
	doc := Doc{ID: req.ID, Seq: v.seq, Op: OpUpsert, Subject: msg.Subject(), Collection: req.Collection, Tenant: req.Tenant}
	if req.IsDelete() {
		doc.Op = OpDelete
	}
	if d.past() {
		found, _, _, err := p.records.Get(ctx, doc.RecordID())
		if err != nil {
			v.err = fault.WithCause(fault.CauseRecords, err)
		} else if v.outcome, v.err = p.finished(ctx, doc, found, true); v.err == nil && v.outcome == "" {
			v.err = fault.WithCause(fault.CauseMaxDeliveries, fmt.Errorf("delivered %d times without an ack (CHUNKSTREAM_MAX_DELIVER is %d): "+
				"its worker stopped or died on the last delivery; not processed again", d.n-1, d.max))
		}
		return v
	}
	var content []byte
	if doc.Op == OpUpsert && req.ContentRef != nil && p.objectSlots != nil {
		select {
		case p.objectSlots <- struct{}{}:
			defer func() { <-p.objectSlots }()
		case <-ctx.Done():
			v.err = fault.WithCause(fault.CauseShutdown, ctx.Err())
			return v
		}
	}
	if doc.Op == OpUpsert {
		if content, v.err = p.load(ctx, &req); v.err != nil {
			return v
		}
		doc.Version = p.version(msg, &req, content)
		v.bytes = len(content)
	}

	// Step 1; a first delivery of a new version (not a replay) tries to
	// create the record first (docs/design.md, "Each record operation
	// earns its place"), and tells the sink so (Doc.First).
	rec := messages.DocRecord{IngestSeq: doc.Seq, DocVersion: doc.Version, Op: doc.Op, Subject: doc.Subject, TraceID: traceID(ctx)}
	sctx, span := p.step(ctx, SpanRecordStart)
	// Only a replay (a single request carrying its version's sequence)
	// processes a dead-lettered version again; a bulk redelivered for
	// another of its requests leaves it settled.
	_, member := msg.(*bulkRequest)
	replay := !member && msg.Headers().Get(messages.HeaderIngestSeq) != "" && msg.Headers().Get(messages.HeaderRequeued) == ""
	st, err := p.records.start(sctx, doc.RecordID(), p.target(doc), rec, startOpts{
		createFirst: d.n == 1 && doc.Seq == streamSeq,
		replay:      replay,
	})
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseRecords, err)
		return v
	}
	if st.settled {
		v.outcome = OutcomeDuplicate
		return v
	}
	doc.First, rec.Targets = st.first, st.targets
	// A replay is a redelivery of its version: a dead-lettered delivery
	// may have written part of it.
	if v.outcome, v.err = p.finished(ctx, doc, st.found, d.n > 1 || replay); v.outcome != "" || v.err != nil {
		return v
	}

	var chunks []Chunk
	if doc.Op == OpUpsert {
		cctx, span := p.step(ctx, SpanChunk)
		chunks, rec.Fingerprint, v.warnings, v.err = p.chunk(cctx, &req, doc.Subject, content)
		if span.IsRecording() {
			span.SetAttributes(tracing.Chunks.Int(len(chunks)), tracing.Bytes.Int(len(content)))
		}
		endStep(span, v.err)
		if v.err != nil {
			return v
		}
		rec.Chunks = len(chunks)
		rec.Warnings = messages.RecordWarnings(v.warnings)
	}
	if err := ctx.Err(); err != nil {
		// Drain timeout: leave the write to the next worker.
		v.err = fault.WithCause(fault.CauseShutdown, err)
		return v
	}
	// Steps 2–4 belong to the sink.
	wctx, span := p.step(ctx, SpanSinkWrite)
	err = p.sink.Write(wctx, doc, chunks)
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseSink, err)
		return v
	}
	v.chunks = len(chunks)
	p.m.Bytes.Add(float64(len(content)))
	// Step 5.
	fctx, span := p.step(ctx, SpanRecordFinish)
	_, err = p.records.Finish(fctx, doc.RecordID(), doc.Seq, st.rev, rec)
	endStep(span, err)
	if err != nil {
		v.err = fault.WithCause(fault.CauseRecords, err)
		return v
	}
	p.reportWarnings(doc.ID, v.warnings)
	v.outcome = OutcomeAcked
	return v
}

// version returns the version of an upsert's content: its sha256, which
// with msgIDVersions an inline request's Nats-Msg-Id holds.
func (p *processor) version(msg jetstream.Msg, req *messages.IngestRequest, content []byte) string {
	if p.msgIDVersions && req.ContentRef == nil {
		if v, ok := messages.IngestMsgIDVersion(msg.Headers().Get(messages.HeaderMsgID), req.Tenant, req.ID); ok {
			return v
		}
	}
	return messages.ContentVersion(content)
}

// target is where the sink writes doc (TargetSink), "" when it does not
// say.
func (p *processor) target(doc Doc) string {
	if ts, ok := p.raw.(TargetSink); ok {
		return ts.Target(doc)
	}
	return ""
}

// finished tells from the record found whether doc's version needs no
// processing: superseded (a newer version started; a redelivery's sink
// first removes what an interrupted delivery may have written) or a
// duplicate (this version is done). "" means it needs processing: also a
// redelivery overtaken only by versions sent elsewhere (TargetSink), whose
// interrupted write at its own place is finished rather than left half
// done (its step 5 then finds the record moved on).
func (p *processor) finished(ctx context.Context, doc Doc, found messages.DocRecord, redelivery bool) (Outcome, error) {
	switch {
	case found.IngestSeq > doc.Seq:
		ss, ok := p.raw.(SupersededSink)
		if !ok || !redelivery {
			return OutcomeSuperseded, nil // a first delivery wrote nothing
		}
		at := p.target(doc)
		if found.Targets[at] == doc.Seq && found.NewestAt(at) == doc.Seq {
			return "", nil // started here, still the newest here
		}
		if found.NewestAt(at) > doc.Seq {
			if err := ss.Superseded(ctx, doc); err != nil {
				return "", fault.WithCause(fault.CauseSink, fmt.Errorf("remove superseded version %d of %q: %w", doc.Seq, doc.ID, err))
			}
		}
		return OutcomeSuperseded, nil
	case found.IngestSeq == doc.Seq && found.Op != "" && (found.Op != doc.Op || found.DocVersion != "" && found.DocVersion != doc.Version) &&
		found.State != messages.StateDeadLettered && found.State != messages.StateDismissed:
		// Another version is done or in work at this sequence: a bulk's
		// refused twin, replayed as that sequence (its record did not
		// exist yet when the replay read it). Refused as the twin it is:
		// its dead letter, stored again, then stands shared and a replay
		// sends it as a new version. (A version dead-lettered or dismissed
		// there left the record to it: start took it over. A record that
		// does not name its version counts as this one's.)
		return "", permanent(fault.CauseInvalidRequest, fmt.Errorf("%w: %w: document %q holds another version at ingest_seq %d; replay it again to send it as a new version",
			messages.ErrInvalid, errBulkTwin, doc.ID, doc.Seq))
	case found.IngestSeq == doc.Seq && found.State == messages.StateDone:
		return OutcomeDuplicate, nil
	}
	return "", nil
}

// decode decodes and validates the request of msg and reads its
// ingest_seq; what fails here is permanent.
func (p *processor) decode(ctx context.Context, msg jetstream.Msg, streamSeq uint64) (v verdict) {
	_, span := p.step(ctx, SpanDecode)
	defer func() { endStep(span, v.err) }()
	ct := msg.Headers().Get(messages.HeaderContentType)
	var (
		req messages.IngestRequest
		err error
	)
	bulkReq, isBulkReq := msg.(*bulkRequest)
	switch {
	case isBulkReq:
		req, err = bulkReq.req, bulkReq.err
	case messages.IsBulk(ct):
		_, err = messages.DecodeBulk(msg.Data()) // a bulk that decodes was cut into its requests (bulk.go)
		if err == nil {
			err = fmt.Errorf("%w: bulk request not cut into its requests", messages.ErrDecode)
		}
	default:
		req, err = messages.DecodeIngest(ct, msg.Data())
	}
	if err != nil {
		cause := fault.CauseUndecodable
		if errors.Is(err, messages.ErrVersion) {
			cause = fault.CauseUnknownVersion
		}
		v.err = permanent(cause, err)
		return v
	}
	v.req = &req
	if span.IsRecording() {
		span.SetAttributes(tracing.DocID.String(req.ID))
	}
	if err := req.Validate(); err != nil {
		cause := fault.CauseInvalidRequest
		if errors.Is(err, messages.ErrNoContent) {
			cause = fault.CauseNoContent
		}
		v.err = permanent(cause, err)
		return v
	}
	if v.seq, err = messages.RequestIngestSeq(msg.Headers().Get(messages.HeaderIngestSeq), streamSeq); err != nil {
		v.err = permanent(fault.CauseInvalidRequest, err)
	} else if isBulkReq && bulkReq.refused != nil {
		v.err = permanent(fault.CauseInvalidRequest, bulkReq.refused)
	}
	return v
}

// load returns the request's document, inline or from the Object Store
// (in a span of its own), within the size limit.
func (p *processor) load(ctx context.Context, req *messages.IngestRequest) (data []byte, err error) {
	limit := p.cfg.MaxDocBytes
	tooLarge := func(size int64) error {
		return permanent(fault.CauseTooLarge, fmt.Errorf("document %q is %d bytes, over the limit of %d (CHUNKSTREAM_MAX_DOC_BYTES)", req.ID, size, limit))
	}
	if req.ContentRef == nil {
		if int64(len(req.Content)) > limit {
			return nil, tooLarge(int64(len(req.Content)))
		}
		return req.Content, nil
	}
	ctx, span := p.step(ctx, SpanContentLoad)
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(tracing.Bytes.Int(len(data)))
		}
		endStep(span, err)
	}()
	ref := req.ContentRef
	// objectError classifies an Object Store failure: a bucket or object
	// that is not there is permanent, anything else is retried.
	objectError := func(err error, permanentIf ...error) error {
		err = fmt.Errorf("object %s/%s of %q: %w", ref.Bucket, ref.Name, req.ID, err)
		for _, target := range permanentIf {
			if errors.Is(err, target) {
				return permanent(fault.CauseMissingObject, err)
			}
		}
		return fault.WithCause(fault.CauseObjectStore, err)
	}
	store, err := p.objectStore(ctx, ref.Bucket)
	if err != nil {
		return nil, objectError(err, jetstream.ErrBucketNotFound, jetstream.ErrStreamNotFound, jetstream.ErrInvalidStoreName)
	}
	info, err := store.GetInfo(ctx, ref.Name)
	if err != nil {
		return nil, objectError(err, jetstream.ErrObjectNotFound)
	}
	if int64(info.Size) > limit {
		return nil, tooLarge(int64(info.Size))
	}
	obj, err := store.Get(ctx, ref.Name)
	if err != nil {
		return nil, objectError(err, jetstream.ErrObjectNotFound)
	}
	defer obj.Close()
	data, err = io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		// A digest mismatch or a read cut short: the object may be
		// rewritten, so retry.
		return nil, objectError(err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

func (p *processor) objectStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	p.objMu.Lock()
	defer p.objMu.Unlock()
	if s, ok := p.objects[bucket]; ok {
		return s, nil
	}
	s, err := p.js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if len(p.objects) < 16 {
		p.objects[bucket] = s
	}
	return s, nil
}

// chunkerCause is the cause of an error choosing or building a chunker.
func chunkerCause(err error, otherwise fault.Cause) fault.Cause {
	switch {
	case errors.Is(err, chunking.ErrUnknownOption):
		return fault.CauseUnknownOption
	case errors.Is(err, chunking.ErrInvalidOptions):
		return fault.CauseInvalidOptions
	case errors.Is(err, chunking.ErrNotUTF8):
		return fault.CauseNotUTF8
	case errors.Is(err, chunking.ErrUnsupportedFormat):
		return fault.CauseUnknownFormat
	}
	return otherwise
}

// chunk runs the request's chunker over content within the budgets and
// returns the chunks, the settings fingerprint and the warnings. Every
// failure here but a shutdown (ctx's end) is permanent: chunkers are
// pure, so a retry gives the same result.
func (p *processor) chunk(ctx context.Context, req *messages.IngestRequest, subject string, content []byte) ([]Chunk, string, []chunking.Warning, error) {
	rs := p.fleet.resolver() // one resolution, though the fleet's defaults may change meanwhile
	rreq := registry.Request{ID: req.ID, Format: req.Format, Chunker: req.Chunker, Options: req.Options}
	var (
		buf   [256]byte
		key   []byte
		keyed bool
	)
	if f, err := rs.Registry().RequestFormat(rreq); err == nil {
		key, keyed = settingsKey(buf[:0], f.Name, req, subject)
	}
	var r *resolution
	if keyed {
		r = p.resolutions.get(rs, key)
	}
	if r != nil && r.choice.Format.Text && !utf8.Valid(content) {
		return nil, "", nil, p.notUTF8(req, r.choice, content)
	}
	if r == nil {
		var err error
		if r, err = p.resolve(ctx, rs, rreq, req, subject, content); err != nil {
			return nil, "", nil, err
		}
		if keyed && r.fingerprint != "" {
			p.resolutions.put(rs, key, r)
		}
	}
	choice, ch, fingerprint := r.choice, r.chunker, r.fingerprint
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(tracing.Chunker.String(choice.Entry.Name))
	}
	var md chunking.Metadata
	if req.Source != "" {
		md = chunking.Metadata{{Key: "source", Value: req.Source}}
	}
	md = md.Merge(req.Metadata)
	out, warnings, err := p.chunkWithin(ctx, ch, chunking.Document{Path: req.ID, Format: req.Format, Content: content, Metadata: md})
	if err != nil && ctx.Err() != nil {
		// Shutdown: another worker chunks it again.
		return nil, "", nil, fault.WithCause(fault.CauseShutdown, err)
	}
	if err != nil {
		cause := chunkerCause(err, fault.CauseChunkerError)
		var pe *panicError
		switch {
		case errors.Is(err, errTooComplex):
			cause = fault.CauseTooComplex
		case errors.As(err, &pe):
			cause = fault.CauseChunkerPanic
			p.log.ErrorContext(ctx, "chunker panic", "doc_id", req.ID, "err", err, "stack", string(pe.stack))
		}
		return nil, "", nil, permanent(cause, fmt.Errorf("chunk %q with %s: %w", req.ID, choice.Entry.Name, err))
	}
	chunks := make([]Chunk, len(out))
	ids := messages.TenantChunkIDs(req.Tenant, req.ID, len(out))
	for i, c := range out {
		chunks[i] = Chunk{ID: ids[i], Position: i, Chunk: c}
	}
	return chunks, fingerprint, warnings, nil
}

// resolve chooses the chunker of a request (rreq, of req) with content,
// builds it and computes its settings fingerprint ("" when it cannot be
// computed, logged), with the request's refusals: an unknown format, a
// text format's content not UTF-8, a size below the bounds, a chunker
// that cannot be built.
func (p *processor) resolve(ctx context.Context, rs *registry.Resolver, rreq registry.Request, req *messages.IngestRequest, subject string, content []byte) (*resolution, error) {
	choice, err := rs.Choose(rreq)
	if errors.Is(err, registry.ErrUnknownFormat) {
		return nil, permanent(fault.CauseUnknownFormat, err)
	}
	if err == nil && choice.Format.Text && !utf8.Valid(content) {
		return nil, p.notUTF8(req, choice, content)
	}
	if err == nil {
		err = p.checkChunkSize(choice)
	}
	var ch chunking.Chunker
	if err == nil {
		ch, err = rs.Chunker(choice)
	}
	if err != nil {
		return nil, permanent(chunkerCause(err, fault.CauseUnknownChunker), err)
	}
	settings := messages.Settings{Chunker: choice.Entry.Name, Options: choice.Options, Format: req.Format,
		Source: req.Source, Metadata: req.Metadata, Subject: subject, Collection: req.Collection, Encoding: p.fleet.encoding}
	fingerprint, err := settings.Fingerprint()
	if err != nil {
		p.log.WarnContext(ctx, "no settings fingerprint", "doc_id", req.ID, "err", err)
	}
	return &resolution{choice: choice, chunker: ch, fingerprint: fingerprint}, nil
}

// notUTF8 is the refusal of content that is not UTF-8 in a text format.
func (p *processor) notUTF8(req *messages.IngestRequest, choice registry.Choice, content []byte) error {
	err := fmt.Errorf("document %q (%s): %w", req.ID, choice.Format.Name, codec.AtKey(codec.CheckText(content), "content"))
	return permanent(fault.CauseNotUTF8, err)
}
