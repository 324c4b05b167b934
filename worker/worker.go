package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// Result is the final disposition of one delivery, reported to
// Options.OnResult (local mode counts them for its progress bar).
type Result struct {
	// DocID is the request's document id (empty when undecodable).
	DocID string
	// Subject is the ingest subject.
	Subject string
	// StreamSeq is the request's INGEST sequence.
	StreamSeq uint64
	// IngestSeq is the version's ingest_seq (messages.RequestIngestSeq);
	// 0 when it was not read.
	IngestSeq uint64
	// Delivery is the 1-based delivery count.
	Delivery uint64
	// Outcome is what was done with the delivery.
	Outcome Outcome
	// Cause names the failure class of dead letters and retries.
	Cause fault.Cause
	// Err is the failure, nil on success.
	Err error
	// Chunks and Bytes are the chunk count and the document size.
	Chunks int
	Bytes  int
}

// Final reports whether the request is finished: acked or dead-lettered
// (not retried, abandoned or paused).
func (r Result) Final() bool {
	return r.Outcome != OutcomeRetried && r.Outcome != OutcomeAbandoned && r.Outcome != OutcomePaused
}

// Options configure a Worker.
type Options struct {
	// Config holds the settings; New validates it.
	Config Config
	// Logger receives the worker's logs; nil discards them.
	Logger *slog.Logger
	// Metrics is where the worker counts; nil creates a private set.
	Metrics *Metrics
	// Sink receives every processed document version (required). New
	// decorates it with SinkMetrics.
	Sink Sink
	// Chunkers are the chunkers requests may name; nil means registry.Default().
	Chunkers *registry.Registry
	// SetFleetDefaults makes the worker write its own chunker defaults
	// (Config.Chunker, ChunkerOptions) as the fleet's at start, replacing
	// any, instead of following the fleet's: for a worker that is the
	// whole fleet (local mode). doc.go, "One fleet, one resolution".
	SetFleetDefaults bool
	// OnResult, when set, is called after every delivery's disposition,
	// from the processor goroutines.
	OnResult func(Result)
	// Backoff overrides the retry delays (tests); zero uses Config's
	// BackoffBase and BackoffMax.
	Backoff Backoff
	// TracerProvider traces each delivery (spans named Span*); nil means
	// none, though the trace context a request carries is continued.
	TracerProvider trace.TracerProvider
}

// Worker consumes ingest requests, chunks them and writes them to its
// sink, at least once, with dead letters for what cannot succeed.
type Worker struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	top     *topology.Handles
	log     *slog.Logger
	m       *Metrics
	sink    Sink
	rawSink Sink
	records *KVRecords
	// chunkers resolve requests with the fleet's defaults (defaults.go);
	// own with the worker's own.
	chunkers         atomic.Pointer[registry.Resolver]
	own              *registry.Resolver
	otherDefaults    atomic.Bool // own defaults differ from the fleet's
	setFleetDefaults bool
	encoding         string // the sink's EncodingSink.Encoding, "" when it has none
	backoff          Backoff
	onResult         func(Result)
	tracer           trace.Tracer

	objMu   sync.Mutex
	objects map[string]jetstream.ObjectStore

	consMu     sync.Mutex
	consumer   jetstream.Consumer
	ready      atomic.Bool
	advertised atomic.Bool // the fleet's chunker defaults are read (defaults.go)

	// Sink outages (outage.go).
	out          *outageState
	probeBackoff Backoff
	heldMu       sync.Mutex
	held         []*task            // deliveries held during an outage, oldest first
	draining     bool               // Run is stopping: hold NAKs instead
	waiting      map[*task]struct{} // fetched, not yet taken by a processor

	// Requests whose advisory came but whose dead letter failed (stream
	// sequence → deliveries), for the sweep (stranded.go).
	strandedMu sync.Mutex
	stranded   map[uint64]uint64
	sweepEvery time.Duration

	// Ack confirmations awaited in the background (ack).
	acks     sync.WaitGroup
	ackSlots chan struct{}

	// What the worker's presence tells (presence.go).
	id       string
	started  time.Time
	lastPull atomic.Int64 // unix nanoseconds
	inFlight atomic.Int64
}

// New returns a worker over an existing connection and the topology Setup
// returned.
func New(nc *nats.Conn, js jetstream.JetStream, top *topology.Handles, opts Options) (*Worker, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if opts.Sink == nil {
		return nil, errors.New("worker: Options.Sink is required")
	}
	reg := opts.Chunkers
	if reg == nil {
		reg = registry.Default()
	}
	chunkers, err := reg.Resolver(registry.Defaults{Chunker: opts.Config.Chunker, Options: opts.Config.ChunkerOptions})
	if err != nil {
		return nil, fmt.Errorf("worker: Config.Chunker, Config.ChunkerOptions: %w", err)
	}
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	log = slog.New(tracing.LogHandler(log.Handler()))
	m := opts.Metrics
	if m == nil {
		m = NewMetrics()
	}
	b := opts.Backoff
	if b.Base == 0 {
		b.Base, b.Max = opts.Config.BackoffBase, opts.Config.BackoffMax
	}
	w := &Worker{
		cfg: opts.Config, nc: nc, js: js, top: top, log: log, m: m,
		sink:             SinkMetrics(m)(opts.Sink),
		rawSink:          opts.Sink,
		records:          NewKVRecords(top.Docs).WithLeaderReads(nc),
		own:              chunkers,
		setFleetDefaults: opts.SetFleetDefaults,
		backoff:          b,
		onResult:         opts.OnResult,
		tracer:           tracing.Tracer(opts.TracerProvider),
		objects:          map[string]jetstream.ObjectStore{opts.Config.ObjectsBucket: top.Objects},
		consumer:         top.Consumer,
		out:              newOutageState(log, m),
		probeBackoff:     Backoff{Base: opts.Config.SinkProbeBase, Max: opts.Config.SinkProbeMax},
		waiting:          map[*task]struct{}{},
		sweepEvery:       sweepEvery,
		ackSlots:         make(chan struct{}, maxAckConfirmations),
		id:               nuid.Next(),
		started:          time.Now().UTC(),
	}
	w.chunkers.Store(chunkers)
	if es, ok := opts.Sink.(EncodingSink); ok {
		w.encoding = es.Encoding()
	}
	return w, nil
}

// Metrics returns the worker's metrics.
func (w *Worker) Metrics() *Metrics { return w.m }

// ReadySink is implemented by sinks that can tell whether they are able
// to write (the Qdrant sink); Ready consults it.
type ReadySink interface {
	Ready(ctx context.Context) bool
}

// EncodingSink is implemented by sinks that compute vectors from the
// chunks (the Qdrant sink's sparse vectors): Encoding describes them, in
// every settings fingerprint, so a change of encoding makes documents stale.
type EncodingSink interface {
	Encoding() string
}

// SupersededSink is implemented by sinks whose writes can outlive an
// overtaken version (the Qdrant sink): a redelivery found superseded at
// step 1 is acked only after Superseded removed what it may have written.
type SupersededSink interface {
	Superseded(ctx context.Context, doc Doc) error
}

// Ready reports whether the worker is connected, bound to its consumer,
// no dependency of its sink is down, and its sink, if a ReadySink, ready.
func (w *Worker) Ready() bool {
	if !w.ready.Load() || !w.nc.IsConnected() || w.out.isDown() {
		return false
	}
	if rs, ok := w.rawSink.(ReadySink); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return rs.Ready(ctx)
	}
	return true
}

// Run consumes until ctx is cancelled, then drains as doc.go's
// "Shutdown" says. It does not close the connection.
func (w *Worker) Run(ctx context.Context) error {
	n := w.cfg.Workers()
	if err := w.adoptDefaults(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		if !noRoom(err) {
			return err
		}
		// JetStream is full: start paused; the probe advertises once
		// there is room (probeJetStream).
		w.out.markDown(DependencyJetStream, err)
	}
	adv, err := w.watchAdvisories()
	if err != nil {
		return err
	}
	defer adv.Unsubscribe()

	// Processing outlives ctx by up to DrainTimeout.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var helpers sync.WaitGroup
	helpers.Go(func() { w.probe(ctx) })
	helpers.Go(func() { w.holdHeartbeat(ctx) })
	helpers.Go(func() { w.sample(ctx) })
	helpers.Go(func() { w.sweep(ctx) })
	helpers.Go(func() { w.notices(ctx) })
	helpers.Go(func() { w.watchDefaults(ctx) })
	defer helpers.Wait()
	// A small queue lets the next fetch run while the processors work.
	work := make(chan *task, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for t := range work {
				w.taken(t)
				switch {
				case ctx.Err() != nil:
					// Draining: not started yet, so hand it back at once.
					w.nak(t)
				case w.out.isDown():
					w.hold(t)
				default:
					w.handle(workCtx, t)
				}
			}
		})
	}
	w.log.Info("worker started", "concurrency", n, "consumer", w.cfg.Consumer, "stream", w.cfg.IngestStream)
	w.pull(ctx, work)
	w.ready.Store(false)
	close(work)
	w.releaseHeld()

	done := make(chan struct{})
	go func() { wg.Wait(); w.acks.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.DrainTimeout):
		w.log.Warn("drain timeout: abandoning in-flight documents", "duration", w.cfg.DrainTimeout)
		cancelWork()
		// A chunker that ignores its context may still run: wait a little,
		// then return so the process exits within its grace period.
		select {
		case <-done:
		case <-time.After(abandonWait):
			w.log.Error("drain: a chunker call is still running; leaving its request to be redelivered", "duration", abandonWait)
		}
	}
	w.log.Info("worker stopped")
	return nil
}

// abandonWait is how long Run waits, after the drain timeout, for chunker
// calls still running before it returns without them.
const abandonWait = 5 * time.Second

// fetchWait is how long one pull request waits for messages; it bounds
// how long a stop waits for the pull in progress.
const fetchWait = 250 * time.Millisecond

// pull fetches batches into the processors' queue (doc.go, "Pulling");
// during an outage it fetches nothing and then hands out the held
// deliveries first. On ctx's end the rest of the batch is NAKed.
func (w *Worker) pull(ctx context.Context, work chan<- *task) {
	batchSize := max(2*w.cfg.Workers(), 4)
	failures := 0
	for ctx.Err() == nil {
		if w.out.isDown() {
			select {
			case <-w.out.whenUp():
			case <-ctx.Done():
			}
			continue
		}
		for _, t := range w.takeHeld(true) {
			w.dispatch(ctx, work, t)
		}
		if w.out.isDown() {
			continue
		}
		w.lastPull.Store(time.Now().UnixNano())
		batch, err := w.currentConsumer().Fetch(batchSize, jetstream.FetchMaxWait(fetchWait))
		if err == nil {
			w.ready.Store(true)
			// Each message is taken as it arrives (doc.go, "Pulling").
			var queued []*task
			for msg := range batch.Messages() {
				t := &task{msg: msg, fetchedAt: time.Now()}
				w.fetched(t)
				queued = append(queued, t)
				for len(queued) > 0 && w.offer(ctx, work, queued[0]) {
					queued = queued[1:]
				}
			}
			for _, t := range queued {
				w.dispatch(ctx, work, t)
			}
			err = batch.Error()
		}
		if err == nil {
			failures = 0
			continue
		}
		failures++
		w.log.Warn("fetch failed", "err", err, "failures", failures)
		if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
			errors.Is(err, jetstream.ErrStreamNotFound) {
			w.ready.Store(false)
			w.rebind(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(time.Duration(failures)*100*time.Millisecond, 2*time.Second)):
		}
	}
}

// dispatch hands t to a processor, holds it when the sink goes down while
// it waits, or NAKs it when ctx ends.
func (w *Worker) dispatch(ctx context.Context, work chan<- *task, t *task) {
	if ctx.Err() == nil && !w.out.isDown() {
		select {
		case work <- t:
			return
		case <-w.out.whenDown():
			w.taken(t)
			w.hold(t)
			return
		case <-ctx.Done():
		}
	}
	w.taken(t)
	if ctx.Err() == nil {
		w.hold(t)
		return
	}
	w.nak(t)
}

// offer hands t to a processor if one is free now and no outage or stop
// is under way, and reports whether it did.
func (w *Worker) offer(ctx context.Context, work chan<- *task, t *task) bool {
	if ctx.Err() != nil || w.out.isDown() {
		return false
	}
	select {
	case work <- t:
		return true
	default:
		return false
	}
}

func (w *Worker) currentConsumer() jetstream.Consumer {
	w.consMu.Lock()
	defer w.consMu.Unlock()
	return w.consumer
}

// rebind re-runs Setup after the consumer (or its stream) disappeared, as
// after a server lost its state.
func (w *Worker) rebind(ctx context.Context) {
	top, err := Setup(ctx, w.js, w.cfg)
	if err != nil {
		w.log.Error("set up again failed", "err", err)
		return
	}
	w.consMu.Lock()
	w.consumer, w.top.Ingest = top.Consumer, top.Ingest
	w.consMu.Unlock()
	w.log.Info("consumer bound again", "consumer", w.cfg.Consumer)
}

// handle processes one delivery and settles it.
func (w *Worker) handle(ctx context.Context, t *task) {
	start := time.Now()
	w.m.InFlight.Inc()
	w.inFlight.Add(1)
	defer func() {
		w.m.InFlight.Dec()
		w.inFlight.Add(-1)
	}()

	msg := t.msg
	meta, err := msg.Metadata()
	if err != nil {
		// Not a JetStream message: nothing to ack or redeliver.
		w.log.Error("message without JetStream metadata", "subject", msg.Subject(), "err", err)
		return
	}
	if meta.NumDelivered > 1 && t.tries == 0 {
		w.m.Redeliveries.Inc()
	}
	ctx, span := w.startDelivery(ctx, t, meta.Sequence.Stream, meta.NumDelivered)

	hbCtx, stopHB := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		w.heartbeat(hbCtx, msg)
	}()
	v := w.process(ctx, msg, meta.Sequence.Stream, meta.NumDelivered)
	stopHB()
	<-hbDone

	res := Result{Subject: msg.Subject(), StreamSeq: meta.Sequence.Stream, IngestSeq: v.seq, Delivery: meta.NumDelivered,
		Err: v.err, Chunks: v.chunks, Bytes: v.bytes}
	if v.req != nil {
		res.DocID = v.req.ID
	}
	res = w.settle(ctx, t, res, v)
	endDelivery(span, res)
	if res.Err == nil {
		w.out.success.Store(true)
	}
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
}

// heartbeat sends in-progress acks every AckWait/3 until ctx ends, so the
// server never redelivers a message a live worker is still on.
func (w *Worker) heartbeat(ctx context.Context, msg jetstream.Msg) {
	t := time.NewTicker(w.cfg.AckWait / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := msg.InProgress(); err != nil {
				w.log.Warn("in-progress ack failed", "subject", msg.Subject(), "err", err)
			}
		}
	}
}

// settle acts on the verdict of the delivery res describes (the policy is
// doc.go's): it acks, holds, NAKs or dead-letters it, and returns res with
// the outcome, the failure's cause and error.
func (w *Worker) settle(ctx context.Context, t *task, res Result, v verdict) Result {
	res.Outcome, res.Cause, res.Err = w.act(ctx, t, res, v)
	return res
}

func (w *Worker) act(ctx context.Context, t *task, res Result, v verdict) (Outcome, fault.Cause, error) {
	msg := t.msg
	if v.err == nil {
		w.ack(ctx, msg, res)
		return v.outcome, "", nil
	}
	cause, _ := fault.CauseOf(v.err)
	permanent := fault.IsPermanent(v.err)
	// An outage holds the delivery, up to MaxDeliver times unless for
	// want of room (doc.go, "Sink outages").
	if dep, ok := outageOf(v.err); ok && !permanent && ctx.Err() == nil && (t.tries < w.cfg.MaxDeliver || noRoom(v.err)) {
		if noRoom(v.err) {
			w.out.needRoom(refusedSize(res.Bytes))
		}
		w.out.markDown(dep, v.err)
		t.tries++
		if cause == "" {
			cause = fault.CauseUnavailable
		}
		return w.pause(t), cause, v.err
	}
	if ctx.Err() != nil && !permanent {
		if err := msg.Nak(); err != nil {
			w.log.Warn("nak failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
		}
		return OutcomeAbandoned, fault.CauseShutdown, v.err
	}
	kind, outcome := messages.KindPermanent, OutcomePermanent
	if !permanent {
		if cause == "" {
			cause = fault.CauseTransient
		}
		if res.Delivery < uint64(w.cfg.MaxDeliver) {
			if err := msg.NakWithDelay(w.backoff.Delay(res.Delivery, v.err)); err != nil {
				w.log.Warn("nak failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
			}
			return OutcomeRetried, cause, v.err
		}
		kind, outcome = messages.KindExhausted, OutcomeExhausted
	}
	// Settling must happen even while draining.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	sctx, span := w.step(sctx, SpanDeadLetter)
	defer span.End()
	dl := messages.DeadLetter{Reason: v.err.Error(), Kind: kind, Cause: cause, Subject: msg.Subject(),
		StreamSeq: res.StreamSeq, IngestSeq: ingestSeqOf(msg.Headers(), res.StreamSeq), Deliveries: res.Delivery}
	dup, err := w.deadLetter(sctx, msg.Data(), msg.Headers(), dl)
	if err == nil {
		err = w.recordFailure(sctx, v.req, msg.Headers(), msg.Data(), dl)
	}
	tracing.Fail(span, err)
	if err != nil {
		// Without the dead letter the request must stay: held when
		// JetStream is down or full, however often, else NAKed (doc.go).
		dlErr := err
		err = fmt.Errorf("%w (dead letter failed: %v)", v.err, dlErr)
		if dep, ok := deadLetterOutage(dlErr); ok && ctx.Err() == nil {
			if noRoom(dlErr) {
				w.out.needRoom(refusedSize(len(msg.Data())))
			}
			w.out.markDown(dep, dlErr)
			return w.pause(t), cause, err
		}
		if err := msg.NakWithDelay(w.backoff.Delay(res.Delivery, nil)); err != nil {
			w.log.Warn("nak failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
		}
		return OutcomeRetried, cause, err
	}
	if !dup {
		w.m.DeadLetters.WithLabelValues(string(kind), string(cause)).Inc()
	}
	if err := msg.TermWithReason(string(cause)); err != nil {
		w.log.Warn("term failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
	}
	return outcome, cause, v.err
}

// pause holds t for an outage and returns the outcome: paused, or
// abandoned when the worker drains and NAKed it instead.
func (w *Worker) pause(t *task) Outcome {
	if w.hold(t) {
		return OutcomePaused
	}
	return OutcomeAbandoned
}

// maxAckConfirmations bounds the ack confirmations awaited at once; past
// it an ack is sent without awaiting its confirmation.
const maxAckConfirmations = 256

// ackConfirmWait is how long an ack's confirmation is awaited: a server
// that does not answer within it will redeliver the message anyway.
func (w *Worker) ackConfirmWait() time.Duration {
	return min(w.cfg.AckWait/3, 5*time.Second)
}

// ack acks the delivery without blocking the processor, its confirmation
// awaited in the background (doc.go, "Acks").
func (w *Worker) ack(ctx context.Context, msg jetstream.Msg, res Result) {
	docID, seq := res.DocID, res.StreamSeq
	ctx, span := w.step(ctx, SpanAck)
	select {
	case w.ackSlots <- struct{}{}:
	default:
		w.m.AcksUnconfirmed.Inc()
		err := msg.Ack()
		if err != nil {
			w.log.WarnContext(ctx, "ack failed", "doc_id", docID, "stream_seq", seq, "err", err)
		}
		endStep(span, err)
		return
	}
	w.acks.Go(func() {
		defer func() { <-w.ackSlots }()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.ackConfirmWait())
		defer cancel()
		err := msg.DoubleAck(cctx)
		if err != nil {
			w.m.AcksUnconfirmed.Inc()
			w.log.WarnContext(ctx, "ack not confirmed", "doc_id", docID, "stream_seq", seq, "err", err)
		}
		endStep(span, err)
	})
}

// deadLetter publishes the original payload and user headers plus the
// dead letter headers, and waits for the PubAck; dup reports a dead letter
// stored before (its Nats-Msg-Id names the request: doc.go).
func (w *Worker) deadLetter(ctx context.Context, data []byte, h nats.Header, dl messages.DeadLetter) (dup bool, err error) {
	out := nats.NewMsg(w.cfg.DLQSubject)
	out.Data = data
	out.Header = nats.Header(messages.UserHeaders(h))
	tracing.Inject(ctx, out.Header)
	dl.Apply(out.Header)
	out.Header.Set(messages.HeaderMsgID, messages.DeadLetterMsgID(w.cfg.IngestStream, dl.StreamSeq, h.Get(messages.HeaderMsgID)))
	ack, err := w.js.PublishMsg(ctx, out)
	if err != nil {
		return false, fmt.Errorf("worker: publish dead letter: %w", err)
	}
	return ack.Duplicate, nil
}

// recordFailure records the failure of a dead-lettered request in its
// document record (KVRecords.Fail). A request that did not decode (req
// nil) is recorded under the id its payload shows, if any.
func (w *Worker) recordFailure(ctx context.Context, req *messages.IngestRequest, h nats.Header, data []byte, dl messages.DeadLetter) error {
	rec := messages.DocRecord{IngestSeq: dl.IngestSeq, Subject: dl.Subject, TraceID: traceID(ctx), LastFailure: messages.Failure{
		Cause: dl.Cause, Reason: messages.OneLine(dl.Reason, 1024), Time: time.Now().UTC(), IngestSeq: dl.IngestSeq,
	}}
	var id string
	if req != nil {
		if messages.ValidateTenant(req.Tenant) != nil {
			return nil // no record is a bad tenant's
		}
		id, rec.Op = messages.RecordID(req.Tenant, req.ID), messages.OpUpsert
		switch {
		case req.IsDelete():
			rec.Op = messages.OpDelete
		case req.ContentRef != nil:
			rec.DocVersion = req.ContentRef.Name // the content's sha256, by the contract
		case req.Content != nil:
			rec.DocVersion = messages.ContentVersion(req.Content)
		}
	} else {
		id, _ = messages.PeekIngestRecordID(h.Get(messages.HeaderContentType), data)
	}
	if id == "" {
		return nil
	}
	_, err := w.records.Fail(ctx, id, rec)
	return err
}

// ingestSeqOf returns the ingest_seq of the request stored at streamSeq:
// the replayed version's sequence it carries, else streamSeq.
func ingestSeqOf(h nats.Header, streamSeq uint64) uint64 {
	seq, err := messages.RequestIngestSeq(h.Get(messages.HeaderIngestSeq), streamSeq)
	if err != nil {
		return streamSeq
	}
	return seq
}
