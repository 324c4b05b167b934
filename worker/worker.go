package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/outage"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/topology"
)

// Result is the final disposition of one delivery, reported to
// Options.OnResult (local mode counts them for its progress bar).
type Result struct {
	// DocID is the request's document id (empty when undecodable).
	DocID string
	// Subject is the ingest subject.
	Subject string
	// StreamSeq is the request's INGEST sequence; the requests of a bulk
	// request share its sequence (DocID tells them apart).
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
	// Warnings are the chunker's for the version chunked (what the
	// document record keeps the first of).
	Warnings []chunking.Warning
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
	// whole fleet (local mode). docs/design.md, "One fleet, one resolution".
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
	// MemoryRecords keeps the document records in this process instead
	// of the records bucket: for a worker that is the whole fleet and
	// lives for one run with its server (local mode without a store
	// folder), where nothing else reads them. The same record code runs
	// over a key-value store in memory with the bucket's revisions and
	// compare-and-set, so versions, redeliveries and dead letters are
	// told apart as with the bucket; `producer status`, skips by record
	// and -wait see none of them.
	MemoryRecords bool
	// VersionsFromMsgIDs takes an inline upsert's version, its content's
	// sha256 (messages.ContentVersion), from its Nats-Msg-Id when the id
	// holds it (messages.IngestMsgIDVersion) instead of hashing the
	// content again: for a worker whose only producer runs in its own
	// process and hashed the content a moment before (local mode, whose
	// server listens nowhere). Any other request is hashed.
	VersionsFromMsgIDs bool
}

// Worker consumes ingest requests, chunks them and writes them to its
// sink, at least once, with dead letters for what cannot succeed. Its
// parts: the puller fetches and holds deliveries (pull.go), the
// processor runs the five steps (process.go), decide and act settle a
// delivery (decide.go, act.go), the outage machine pauses and resumes
// it (outage.go), requests the consumer lost are put back (requeue.go),
// and the rest is health (presence.go, sample.go, health.go).
type Worker struct {
	cfg      Config
	log      *slog.Logger
	m        *Metrics
	nc       *nats.Conn
	js       jetstream.JetStream
	top      *topology.Handles
	out      *outage.Machine
	need     atomic.Int64 // room the storage probe requires, in bytes (outage.go)
	pull     *puller
	proc     *processor
	fleet    *fleet
	onResult func(Result)
	id       string // the worker's presence (presence.go)
	started  time.Time
	// requeueEvery is how often requests below the ack floor are looked
	// for (requeue.go).
	requeueEvery time.Duration
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
	own, err := reg.Resolver(registry.Defaults{Chunker: opts.Config.Chunker, Options: opts.Config.ChunkerOptions})
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
	w := &Worker{cfg: opts.Config, log: log, m: m, nc: nc, js: js, top: top, onResult: opts.OnResult,
		id: nuid.Next(), started: time.Now().UTC(), requeueEvery: requeueEvery}
	w.out = w.newOutage(opts.Sink)
	w.fleet = newFleet(w, own, opts.Sink, opts.SetFleetDefaults)
	w.pull = &puller{cfg: &w.cfg, log: log, m: m, js: js, out: w.out, consumer: top.Consumer, waiting: map[*task]struct{}{}}
	records := NewKVRecords(top.Docs).WithLeaderReads(nc)
	if opts.MemoryRecords {
		records = &KVRecords{kv: newMemKV()} // no leader: NewestSeq reads it
	}
	w.proc = &processor{cfg: &w.cfg, log: log, m: m, js: js, sink: SinkMetrics(m)(opts.Sink), raw: opts.Sink,
		records: records, fleet: w.fleet, backoff: b, tracer: tracing.Tracer(opts.TracerProvider),
		objects: map[string]jetstream.ObjectStore{opts.Config.ObjectsBucket: top.Objects}, ackSlots: make(chan struct{}, maxAckConfirmations),
		objectSlots:   make(chan struct{}, max(runtime.GOMAXPROCS(0), w.cfg.Workers()/4)),
		msgIDVersions: opts.VersionsFromMsgIDs}
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

// TargetSink is implemented by sinks that write each document to one of
// several places (the Qdrant sink: a collection). Target names doc's. The
// worker records with each version where it went (messages.DocRecord
// Targets), so that what a version wrote is removed only when a newer
// version started at the same place: a version overtaken by one sent
// elsewhere keeps its chunks (docs/design.md, "Versions in several
// places").
type TargetSink interface {
	Target(doc Doc) string
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
	if !w.pull.ready.Load() || !w.nc.IsConnected() || w.out.Down() {
		return false
	}
	if rs, ok := w.proc.raw.(ReadySink); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return rs.Ready(ctx)
	}
	return true
}

// Run consumes until ctx is cancelled, then drains: it stops fetching,
// NAKs what it fetched and has not started and what it holds, lets
// in-flight work finish for up to DrainTimeout, then cancels it (NAKed,
// outcome abandoned). It does not close the connection.
func (w *Worker) Run(ctx context.Context) error {
	n := w.cfg.Workers()
	if err := w.fleet.adopt(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		if !noRoom(err) {
			return err
		}
		// JetStream is full: start paused; the storage probe adopts the
		// fleet's defaults once there is room.
		w.out.Hold(DependencyJetStream, err)
	}
	// Processing outlives ctx by up to DrainTimeout.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var helpers sync.WaitGroup
	helpers.Go(func() { w.out.Run(ctx) })
	helpers.Go(func() { w.pull.keepAlive(ctx) })
	helpers.Go(func() { w.sample(ctx) })
	helpers.Go(func() { w.fleet.watch(ctx) })
	helpers.Go(func() { w.requeue(ctx) })
	defer helpers.Wait()
	// A small queue lets the next fetch run while the processors work.
	work := make(chan *task, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { w.serve(ctx, workCtx, work) })
	}
	w.log.Info("worker started", "concurrency", n, "consumer", w.cfg.Consumer, "stream", w.cfg.IngestStream)
	w.pull.run(ctx, work)
	w.pull.ready.Store(false)
	close(work)
	w.pull.release()

	done := make(chan struct{})
	go func() { wg.Wait(); w.proc.acks.Wait(); close(done) }()
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
