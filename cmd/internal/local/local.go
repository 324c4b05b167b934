// Package local is the worker's local mode: the whole pipeline in one
// process. It starts an embedded JetStream server, runs the real producer
// over a folder and the real worker with a sink that writes the chunks to
// a file in document order, and stops when every request is settled. Its
// output is what `chunk split` writes for the same folder.
//
// Without a store folder the run is its own fleet for one run: the
// server keeps its streams in memory, the worker its document records
// (worker.Options.MemoryRecords), and the producer is paced to stay a
// bounded window ahead of the worker (BackfillOptions.Pace), so the
// server's memory stays bounded whatever the input's size (a mailbox's
// chunks wait in the writer until its last thread, for their id order).
package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// Subject is the ingest subject local mode publishes on.
const Subject = "ingest.local"

// ErrStoreInUse means Options.Store holds requests of an earlier run
// that did not finish: this run would process them with its own.
var ErrStoreInUse = errors.New("local: the store holds an earlier run's requests")

// Options configure a local run.
type Options struct {
	// Dir is the folder (or file) to chunk; Out the output file, JSON
	// Lines or YAML by its extension.
	Dir, Out string
	// Exts are the extensions picked in Dir; nil means the chunker's.
	Exts []string
	// Store is the JetStream store folder, kept; empty means memory
	// storage (and the document records in the worker's memory).
	Store string
	// Worker is the worker's configuration (its metrics server is off).
	Worker worker.Config
	// Chunkers is the registry; Chunker and Options the chunker of every
	// request and the options it sets.
	Chunkers *registry.Registry
	Chunker  registry.Entry
	Options  map[string]any
	// Logger receives the worker's and producer's logs; nil discards them.
	Logger *slog.Logger
	// TracerProvider traces the producer's sends and the worker's
	// deliveries, as in the services; nil means tracing off.
	TracerProvider trace.TracerProvider
	// OnProgress, when set, is called with the documents settled and
	// their total (0 until known).
	OnProgress func(done, total int)
}

// Summary is what a run did.
type Summary struct {
	// Documents and Bytes are the documents sent and their size; Chunks
	// the chunks written.
	Documents, Chunks int
	Bytes             int64
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
	// DeadLetters are the requests dead-lettered, by document id.
	DeadLetters []worker.Result
	// Failures are the documents the producer could not send, Warnings
	// what it noticed in the folder and then the chunker's, by document
	// id, as chunk split prints them.
	Failures []producer.Failure
	Warnings []chunking.Warning
	// Memory is true when the embedded server kept the streams and
	// buckets in memory (no Store).
	Memory bool
}

// Run chunks o.Dir through the pipeline into o.Out.
func Run(ctx context.Context, o Options) (Summary, error) {
	start := time.Now()
	var sum Summary
	format, err := chunking.FormatOf(o.Out)
	if err != nil {
		return sum, err
	}
	if o.Exts == nil && o.Chunker.Split == nil {
		// The chunker's for its options; none for a chunker that splits
		// its inputs (it reads them whole) unless given.
		if o.Exts, err = o.Chunker.WalkExtensions(o.Options); err != nil {
			return sum, err
		}
	}
	// A Dir that is not there is refused before anything starts. The
	// producer walks it, once: its plan gives the collector the order of
	// the documents (send, OnPlan).
	if _, err := os.Stat(o.Dir); err != nil {
		return sum, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := o.Worker
	cfg.MetricsAddr = ""
	store := o.Store
	if store == "" {
		// The server lives for this run: the file store's writes would
		// buy nothing. The producer keeps at most window documents ahead
		// of the worker (tracker.pace), so memory stays bounded whatever
		// the input's size. The server still wants a folder.
		if store, err = os.MkdirTemp("", "chunkstream-local-"); err != nil {
			return sum, err
		}
		defer os.RemoveAll(store)
		cfg.Storage = jetstream.MemoryStorage
		sum.Memory = true
	}
	ns, err := startEmbedded(store)
	if err != nil {
		return sum, err
	}
	defer func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}()
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("chunkstream-local"))
	if err != nil {
		return sum, fmt.Errorf("connect to the embedded server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(cfg.Workers()*cfg.MaxPendingPublishes+256),
		jetstream.WithPublishAsyncTimeout(cfg.AckWait))
	if err != nil {
		return sum, err
	}
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		return sum, err
	}
	if o.Store != "" {
		// A store an interrupted run left holds its requests: this run's
		// worker would take them too, old text among the new.
		info, err := top.Ingest.Info(ctx)
		if err != nil {
			return sum, err
		}
		if n := info.State.Msgs; n > 0 {
			return sum, fmt.Errorf("%w: the store %s holds %d requests of an earlier run that did not finish: remove the folder (or name another) to run afresh",
				ErrStoreInUse, o.Store, n)
		}
	}

	out, err := os.Create(o.Out)
	if err != nil {
		return sum, err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<16)
	cw, err := chunking.NewChunkWriter(bw, format)
	if err != nil {
		return sum, err
	}
	coll := newCollector(cw)
	tr := &tracker{final: map[finalKey]bool{}, warnings: map[string][]chunking.Warning{}, coll: coll, progress: o.OnProgress,
		ahead: map[string]int{}, wake: make(chan struct{}, 1)}
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg, Logger: log, Sink: coll, Chunkers: o.Chunkers, OnResult: tr.onResult, TracerProvider: o.TracerProvider,
		SetFleetDefaults: true, // its own embedded server: this worker is the fleet
		// Without a store folder the records live for this run and
		// nothing else reads them: kept in memory, they spare the server
		// two writes per document.
		MemoryRecords: o.Store == "",
		// Its producer, in this process, hashed each content for its
		// request's id a moment before.
		VersionsFromMsgIDs: true,
	})
	if err != nil {
		return sum, err
	}
	var sent producer.Summary
	err = supervise(ctx, w.Run, func(ctx context.Context) error {
		var err error
		sent, err = send(ctx, ns, o, cfg, log, tr)
		return err
	}, func(ctx context.Context) error {
		// INGEST is a WorkQueue: it is empty once every request was
		// acked or dead-lettered.
		for {
			info, err := top.Ingest.Info(ctx)
			if err == nil && info.State.Msgs == 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	sum.Documents, sum.Bytes, sum.Failures, sum.Warnings = sent.Sent, sent.Bytes, sent.Failures, sent.Warnings
	if errors.Is(err, ErrWorkerEnded) {
		return sum, err
	}
	if err != nil && ctx.Err() == nil {
		return sum, err
	}
	if err := nc.Drain(); err != nil {
		log.Warn("drain failed", "err", err)
	}
	if ctx.Err() != nil {
		return sum, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	sum.Chunks, err = coll.finish()
	err = errors.Join(err, bw.Flush(), out.Close())
	if err != nil {
		return sum, fmt.Errorf("%s: %w", o.Out, err)
	}
	sum.Elapsed = time.Since(start)
	sum.DeadLetters = tr.deadLetters()
	sum.Warnings = append(sum.Warnings, unreported(sum.Warnings, tr.chunkerWarnings())...)
	return sum, nil
}

// ErrWorkerEnded means the worker stopped before every request was
// settled (a set-up step that failed after the start): nothing else would
// settle the requests the run waits for.
var ErrWorkerEnded = errors.New("local: the worker stopped before every request was settled")

// supervise runs the worker (run) alongside the producer (send) and then
// the wait for every request to settle (settled), and stops the worker
// after them. A worker that ends before it is stopped cancels the send and
// the wait, which would otherwise wait for it for ever, and supervise
// returns ErrWorkerEnded with the worker's error.
func supervise(ctx context.Context, run, send, settled func(context.Context) error) error {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	sendCtx, stopSend := context.WithCancelCause(ctx)
	defer stopSend(nil)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		err := run(runCtx)
		if runCtx.Err() == nil {
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrWorkerEnded, err)
			} else {
				err = ErrWorkerEnded
			}
			stopSend(err)
		}
	}()
	err := send(sendCtx)
	if err == nil {
		err = settled(sendCtx)
	}
	stopRun()
	<-ended
	if err == nil {
		// Every request settled: a worker that ended after that, before
		// it was stopped, lost nothing.
		return nil
	}
	if cause := context.Cause(sendCtx); errors.Is(cause, ErrWorkerEnded) {
		return cause
	}
	return err
}

// send runs the producer over Dir on a connection of its own, so that its
// bulk publishes do not queue in front of the worker's acks and record
// writes.
func send(ctx context.Context, ns *server.Server, o Options, cfg worker.Config, log *slog.Logger, tr *tracker) (producer.Summary, error) {
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("chunkstream-local-producer"))
	if err != nil {
		return producer.Summary{}, fmt.Errorf("connect to the embedded server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return producer.Summary{}, err
	}
	p := producer.New(nc, js, producer.Options{Subject: Subject, Topology: cfg.Config, MaxDocBytes: cfg.MaxDocBytes, Chunkers: o.Chunkers,
		TracerProvider: o.TracerProvider})
	var once sync.Once
	sum, err := p.Backfill(ctx, producer.BackfillOptions{
		Paths:      []string{o.Dir},
		Exts:       o.Exts,
		Template:   producer.Document{Chunker: o.Chunker.Name, Options: o.Options},
		Split:      o.Chunker.Split,
		Force:      true, // local mode writes every document, recorded or not
		Bulk:       true, // its worker is this build's
		Logger:     log,
		OnProgress: func(s producer.Stats) { once.Do(func() { tr.setTotal(s.Total) }) },
		// A document not sent is settled at once: the collector holds
		// the documents after it until then.
		OnFailure: func(f producer.Failure) { tr.unsent(f.ID) },
		Pace:      tr.pace,
		// The ids in the order they are sent, known before any is: the
		// collector writes each document's chunks as soon as the ones
		// before it are settled. A chunker that splits its inputs finds
		// the documents as it reads them: their chunks are written at
		// the end, in id order.
		OnPlan: func(ids []string) {
			if o.Chunker.Split == nil {
				tr.coll.setOrder(ids)
			}
		},
	})
	if err != nil {
		return sum, fmt.Errorf("enqueue: %w", err)
	}
	return sum, nil
}

// startEmbedded starts an in-process JetStream server storing in dir,
// reachable only through nats.InProcessServer.
func startEmbedded(dir string) (*server.Server, error) {
	ns, err := server.NewServer(&server.Options{
		JetStream: true, StoreDir: dir, DontListen: true, NoSigs: true, NoLog: true,
		ServerName: "chunkstream-local",
	})
	if err != nil {
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("embedded server: not ready after 30s")
	}
	return ns, nil
}

// finalKey names a request: its stream sequence, and its document, as
// the requests of a bulk share the sequence.
type finalKey struct {
	seq uint64
	id  string
}

// Local mode's producer keeps at most windowDocs documents, and
// windowBytes of them, sent and not finished: eight full bulks, more than
// one holds (256 documents, 256 KiB), so the documents it waits for are
// never ones it still packs.
const (
	windowDocs  = 2048
	windowBytes = 64 << 20
)

// tracker counts the final results, keeps the dead letters, reports
// progress and paces the producer.
type tracker struct {
	mu       sync.Mutex
	final    map[finalKey]bool // requests finished
	total    int
	coll     *collector
	deadLet  []worker.Result
	warnings map[string][]chunking.Warning // the chunker's, by document id
	progress func(done, total int)
	// ahead holds the size of each document sent and not finished,
	// aheadBytes their sum; wake tells pace that some finished.
	ahead      map[string]int
	aheadBytes int
	wake       chan struct{}
}

// pace is the producer's Pace: it waits while the documents sent and not
// finished reach the window, then counts id as sent.
func (t *tracker) pace(ctx context.Context, id string, bytes int) error {
	for {
		t.mu.Lock()
		if n := len(t.ahead); n == 0 || (n < windowDocs && t.aheadBytes+bytes <= windowBytes) {
			t.ahead[id] += bytes
			t.aheadBytes += bytes
			t.mu.Unlock()
			return nil
		}
		t.mu.Unlock()
		select {
		case <-t.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finishedLocked takes id out of the documents ahead; t.mu is held.
func (t *tracker) finishedLocked(id string) {
	if b, ok := t.ahead[id]; ok {
		delete(t.ahead, id)
		t.aheadBytes -= b
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// unsent settles a document the producer could not send.
func (t *tracker) unsent(id string) {
	t.mu.Lock()
	t.finishedLocked(id)
	t.mu.Unlock()
	t.coll.settle(id)
}

func (t *tracker) onResult(r worker.Result) {
	if !r.Final() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := finalKey{r.StreamSeq, r.DocID}
	if t.final[key] {
		return
	}
	t.final[key] = true
	t.finishedLocked(r.DocID)
	if r.Outcome == worker.OutcomePermanent || r.Outcome == worker.OutcomeExhausted {
		t.deadLet = append(t.deadLet, r)
		t.coll.settle(r.DocID)
	}
	if len(r.Warnings) > 0 {
		t.warnings[r.DocID] = r.Warnings // a redelivery's replace the first's
	}
	if t.progress != nil {
		t.progress(len(t.final), t.total)
	}
}

func (t *tracker) setTotal(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total = n
	if t.progress != nil {
		t.progress(len(t.final), n)
	}
}

// chunkerWarnings returns the chunker's warnings in document id order.
func (t *tracker) chunkerWarnings() []chunking.Warning {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []chunking.Warning
	for _, id := range slices.Sorted(maps.Keys(t.warnings)) {
		out = append(out, t.warnings[id]...)
	}
	return out
}

// unreported returns the chunker's warnings but those about a message
// that the producer's warnings report already: a mailbox's parts are its
// threads re-rendered, so the worker re-reads what the producer read (a
// duplicate Message-ID warns again) at a place that is no file (the
// thread id and a line of the rendering); the producer's warning names
// the mailbox's file and line.
func unreported(producer, chunker []chunking.Warning) []chunking.Warning {
	type key struct {
		kind      chunking.WarningKind
		messageID string
		text      string
	}
	seen := map[key]bool{}
	for _, w := range producer {
		if w.MessageID != "" {
			seen[key{w.Kind, w.MessageID, w.Text}] = true
		}
	}
	var out []chunking.Warning
	for _, w := range chunker {
		if !seen[key{w.Kind, w.MessageID, w.Text}] {
			out = append(out, w)
		}
	}
	return out
}

// deadLetters returns the dead letters in document id order.
func (t *tracker) deadLetters() []worker.Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.deadLet)
	slices.SortFunc(out, func(a, b worker.Result) int { return strings.Compare(a.DocID, b.DocID) })
	return out
}
