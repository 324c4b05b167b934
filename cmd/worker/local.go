package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/schollz/progressbar/v3"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/envflag"
	"github.com/chunkstream/chunkstream/internal/natsconn"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// localFlags are the flags of local mode.
type localFlags struct {
	dir, out, store, ext string
	cpuProfile           string
	workers              int
	noProgress           bool
	// chunker and options are the chunker of every request and its
	// options (-chunker, -chunker-options and the chunker flags, or
	// their variables).
	chunker registry.Entry
	options map[string]any
}

// localSubject is the ingest subject local mode publishes on.
const localSubject = "ingest.local"

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
		return nil, fmt.Errorf("embedded server: not ready after 30s")
	}
	return ns, nil
}

// collector is local mode's sink. It writes the chunks in document id
// order as soon as every earlier document is settled (written, or
// dead-lettered, or unreadable), so only the documents finished out of
// order wait in memory. When the ids are not known in advance (mailboxes:
// threads are found by the producer) it writes everything at the end.
type collector struct {
	mu      sync.Mutex
	cw      chunking.ChunkWriter
	order   []string             // expected ids, sorted; nil when unknown
	next    int                  // order[next] is the next document to write
	docs    map[string]collected // finished, not written yet
	settled map[string]bool      // finished without chunks to write
	written map[string]bool
	n       int // chunks written
	err     error
}

type collected struct {
	seq    uint64
	chunks []worker.Chunk
}

func newCollector(cw chunking.ChunkWriter, order []string) *collector {
	return &collector{cw: cw, order: order, docs: map[string]collected{}, settled: map[string]bool{}, written: map[string]bool{}}
}

// Write implements worker.Sink: it keeps the newest version of each
// document.
func (c *collector) Write(_ context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written[doc.ID] {
		return nil // a redelivery of a document already written
	}
	if cur, ok := c.docs[doc.ID]; ok && cur.seq > doc.Seq {
		return nil
	}
	cs := slices.Clone(chunks)
	slices.SortFunc(cs, func(a, b worker.Chunk) int { return a.Position - b.Position })
	c.docs[doc.ID] = collected{seq: doc.Seq, chunks: cs}
	c.flushLocked()
	return nil
}

// settle marks a document finished without a write (dead letter, unread
// file), so the documents after it can be written.
func (c *collector) settle(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled[id] = true
	c.flushLocked()
}

func (c *collector) writeDoc(id string) {
	for _, ch := range c.docs[id].chunks {
		if c.err != nil {
			break
		}
		if err := c.cw.Write(ch.Chunk); err != nil {
			c.err = fmt.Errorf("write chunks of %s: %w", id, err)
			break
		}
		c.n++
	}
	delete(c.docs, id)
	c.written[id] = true
}

func (c *collector) flushLocked() {
	for c.next < len(c.order) {
		id := c.order[c.next]
		if _, ok := c.docs[id]; ok {
			c.writeDoc(id)
		} else if !c.settled[id] {
			return
		}
		c.next++
	}
}

// finish writes what is left (documents not in the expected order, or
// every document when the order was unknown), in id order, closes the
// chunk writer and returns the number of chunks written.
func (c *collector) finish() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.docs))
	for id := range c.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c.writeDoc(id)
	}
	if err := c.cw.Close(); err != nil && c.err == nil {
		c.err = err
	}
	return c.n, c.err
}

// tracker counts the final results and keeps the dead letters.
type tracker struct {
	mu      sync.Mutex
	final   map[uint64]bool // stream sequences finished
	bar     *progressbar.ProgressBar
	coll    *collector
	deadLet []worker.Result
}

func (t *tracker) onResult(r worker.Result) {
	if !r.Final() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.final[r.StreamSeq] {
		return
	}
	t.final[r.StreamSeq] = true
	if r.Outcome == worker.OutcomePermanent || r.Outcome == worker.OutcomeExhausted {
		t.deadLet = append(t.deadLet, r)
		t.coll.settle(r.DocID)
	}
	_ = t.bar.Add(1)
}

// runLocal runs local mode and returns the exit status.
func runLocal(ctx context.Context, c *config, lf *localFlags, log *slog.Logger, stdout, stderr io.Writer) (int, error) {
	start := time.Now()
	if lf.cpuProfile != "" {
		f, err := os.Create(lf.cpuProfile)
		if err != nil {
			return 1, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 1, err
		}
		defer pprof.StopCPUProfile()
	}
	if lf.out == "" {
		return 2, fmt.Errorf("%w: -local needs -out FILE", errUsage)
	}
	outFormat, err := chunking.FormatOf(lf.out)
	if err != nil {
		return 2, fmt.Errorf("%w: -out: %v", errUsage, err)
	}
	entry := lf.chunker
	// The options set, checked and in the wire's types: the chunker's
	// defaults apply to the others.
	opts, err := entry.Normalize(lf.options)
	if err != nil {
		return 2, fmt.Errorf("%w: %v", errUsage, err)
	}
	// A chunker that splits its inputs (email: a mailbox into threads)
	// gets one request per part, as the producer sends them; others one
	// per file.
	mailbox := entry.Split != nil
	var exts []string
	if !mailbox {
		exts = entry.Extensions
	}
	if lf.ext != "" {
		exts = envflag.SplitList(lf.ext)
	}
	info, err := os.Stat(lf.dir)
	if err != nil {
		return 1, err
	}
	// The ids in output order, when known in advance (the producer walks
	// folders the same way; a file's id is its base name).
	var order []string
	switch {
	case mailbox:
	case info.IsDir():
		if order, _, err = chunking.WalkFolder(ctx, lf.dir, exts); err != nil {
			return 1, err
		}
	default:
		order = []string{filepath.Base(lf.dir)}
	}

	cfg := c.Config
	cfg.MetricsAddr = ""
	if lf.workers > 0 {
		cfg.Concurrency = lf.workers
	}
	if err := cfg.Validate(); err != nil {
		return 2, fmt.Errorf("%w: %v", errUsage, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	store := lf.store
	if store == "" {
		if store, err = os.MkdirTemp("", "chunkstream-local-"); err != nil {
			return 1, err
		}
		defer os.RemoveAll(store)
	}
	ns, err := startEmbedded(store)
	if err != nil {
		return 1, err
	}
	defer func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}()
	embedded := natsconn.Config{ConnectTimeout: c.NATS.ConnectTimeout}
	nc, err := natsconn.Connect(ctx, embedded, "chunkstream-local", log, nats.InProcessServer(ns))
	if err != nil {
		return 1, fmt.Errorf("connect to the embedded server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(cfg.Workers()*cfg.MaxPendingPublishes+256),
		jetstream.WithPublishAsyncTimeout(cfg.AckWait))
	if err != nil {
		return 1, err
	}
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		return 1, err
	}

	bar := progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetVisibility(!lf.noProgress),
		progressbar.OptionSetDescription("chunking"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("docs"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	out, err := os.Create(lf.out)
	if err != nil {
		return 1, err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<16)
	cw, err := chunking.NewChunkWriter(bw, outFormat)
	if err != nil {
		return 1, err
	}
	coll := newCollector(cw, order)
	tr := &tracker{final: map[uint64]bool{}, bar: bar, coll: coll}
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg, Logger: log, Sink: coll, OnResult: tr.onResult,
	})
	if err != nil {
		return 1, err
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(runCtx) }()

	// The producer has its own connection, so that its bulk publishes do
	// not queue in front of the worker's acks and record writes.
	pnc, err := natsconn.Connect(ctx, embedded, "chunkstream-local-producer", log, nats.InProcessServer(ns))
	if err != nil {
		return 1, fmt.Errorf("connect to the embedded server: %w", err)
	}
	defer pnc.Close()
	pjs, err := jetstream.New(pnc)
	if err != nil {
		return 1, err
	}
	p := producer.New(pnc, pjs, producer.Options{Subject: localSubject, Topology: cfg.Config, MaxDocBytes: cfg.MaxDocBytes})
	var maxSet sync.Once
	sum, err := p.Backfill(ctx, producer.BackfillOptions{
		Paths:      []string{lf.dir},
		Exts:       exts,
		Template:   producer.Document{Chunker: entry.Name, Options: opts},
		Split:      entry.Split,
		Force:      true, // local mode writes every document, recorded or not
		Logger:     log,
		OnProgress: func(s producer.Stats) { maxSet.Do(func() { bar.ChangeMax(s.Total) }) },
	})
	if err != nil {
		return 1, fmt.Errorf("enqueue: %w", err)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "worker: warning: %s\n", w)
	}
	for _, f := range sum.Failures {
		fmt.Fprintf(stderr, "worker: %s: %v\n", f.ID, f.Err)
		coll.settle(f.ID)
	}
	// INGEST is a WorkQueue: it is empty once every request was acked or
	// dead-lettered.
	for ctx.Err() == nil {
		info, err := top.Ingest.Info(ctx)
		if err == nil && info.State.Msgs == 0 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	stopRun()
	<-runDone
	if err := nc.Drain(); err != nil {
		log.Warn("drain failed", "err", err)
	}
	_ = bar.Finish()
	if ctx.Err() != nil {
		return 1, fmt.Errorf("interrupted: %w", ctx.Err())
	}

	nChunks, err := coll.finish()
	if err == nil {
		err = bw.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 1, fmt.Errorf("-out: %w", err)
	}

	secs := time.Since(start).Seconds()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	nDocs, inBytes := sum.Sent, sum.Bytes
	fmt.Fprintf(stderr, "worker -local: %d documents, %d chunks, %.2f MB in %.3f s (%.1f docs/s, %.1f chunks/s, %.2f MB/s), %d dead letters\n",
		nDocs, nChunks, float64(inBytes)/1e6, secs, float64(nDocs)/secs, float64(nChunks)/secs, float64(inBytes)/1e6/secs, len(tr.deadLet))
	slices.SortFunc(tr.deadLet, func(a, b worker.Result) int { return strings.Compare(a.DocID, b.DocID) })
	for _, r := range tr.deadLet {
		reason := ""
		if r.Err != nil {
			reason = messages.OneLine(r.Err.Error(), 300)
		}
		fmt.Fprintf(stderr, "  dead letter: %s (%s, %s): %s\n", r.DocID, r.Outcome, r.Cause, reason)
	}
	if len(tr.deadLet) > 0 || sum.Failed > 0 {
		return 1, nil
	}
	return 0, nil
}
