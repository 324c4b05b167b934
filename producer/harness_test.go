package producer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// env is an in-process JetStream server (file storage under t.TempDir),
// a client connection and the worker's topology.
type env struct {
	t     *testing.T
	dir   string
	port  int
	ns    *server.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	top   *topology.Handles
	cfg   worker.Config
	extra func(*server.Options)
}

// newEnv starts a server on a fixed local port (so it can be restarted on
// the same store), connects and runs the worker's set-up.
func newEnv(t *testing.T, extra func(*server.Options)) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), port: testutil.FreePort(t), extra: extra}
	e.start()
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", e.port),
		nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	e.nc = nc
	if e.js, err = jetstream.New(nc, jetstream.WithPublishAsyncTimeout(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	e.cfg = worker.DefaultConfig()
	e.cfg.MetricsAddr = ""
	e.cfg.Concurrency = 2
	e.cfg.AckWait = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.top, err = worker.Setup(ctx, e.js, e.cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) start() {
	e.t.Helper()
	e.ns = jstest.Start(e.t, e.dir, e.port, func(o *server.Options) {
		o.ServerName = "producer-test"
		if e.extra != nil {
			e.extra(o)
		}
	})
	e.t.Cleanup(func() { e.stop() })
}

func (e *env) stop() {
	if e.ns != nil {
		e.ns.Shutdown()
		e.ns.WaitForShutdown()
		e.ns = nil
	}
}

// producer returns a producer publishing msgpack on ingest.docs.
func (e *env) producer(opts Options) *Producer {
	if opts.TracerProvider == nil {
		opts.TracerProvider = tracingtest.Provider(e.t)
	}
	return New(e.nc, e.js, opts)
}

// runWorker runs the real worker (subject sink) until want documents have
// reached a final outcome; it returns the results by document id.
func (e *env) runWorker(ctx context.Context, want int) map[string][]worker.Result {
	e.t.Helper()
	return e.runWorkerWith(ctx, subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), want)
}

// runWorkerWith is runWorker writing to sink.
func (e *env) runWorkerWith(ctx context.Context, sink worker.Sink, want int) map[string][]worker.Result {
	e.t.Helper()
	return e.runWorkerChunkers(ctx, sink, nil, want)
}

// runWorkerChunkers is runWorkerWith with the chunkers newChunker builds.
func (e *env) runWorkerChunkers(ctx context.Context, sink worker.Sink, chunkers *registry.Registry, want int) map[string][]worker.Result {
	e.t.Helper()
	var mu sync.Mutex
	results := map[string][]worker.Result{}
	final := 0
	done := make(chan struct{})
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{
		Config: e.cfg, Sink: sink, Chunkers: chunkers, TracerProvider: tracingtest.Provider(e.t),
		OnResult: func(r worker.Result) {
			if !r.Final() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			results[r.DocID] = append(results[r.DocID], r)
			final++
			if final == want {
				close(done)
			}
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(rctx) }()
	if want > 0 {
		select {
		case <-done:
		case <-ctx.Done():
			e.t.Fatalf("worker: %d of %d documents finished: %v", final, want, ctx.Err())
		}
	}
	stop()
	if err := <-errc; err != nil && ctx.Err() == nil {
		e.t.Fatalf("worker.Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return results
}

// view applies the CHUNKS records in stream order, keeping per document
// only the records of the highest ingest_seq seen (a delete record there
// means no chunks), and returns each document's chunk hashes by position.
func (e *env) view(ctx context.Context) map[string][]string {
	e.t.Helper()
	s, err := e.js.Stream(ctx, e.cfg.ChunksStream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	type docState struct {
		seq    uint64
		chunks map[int]string
	}
	docs := map[string]*docState{}
	last := info.State.LastSeq
	if last > 0 {
		c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		if err != nil {
			e.t.Fatal(err)
		}
		it, err := c.Messages()
		if err != nil {
			e.t.Fatal(err)
		}
		for {
			m, err := it.Next()
			if err != nil {
				e.t.Fatal(err)
			}
			rec, err := messages.DecodeChunkRecord(m.Headers().Get(messages.HeaderContentType), m.Data())
			if err != nil {
				e.t.Fatal(err)
			}
			d := docs[rec.DocID]
			if d == nil || rec.IngestSeq > d.seq {
				d = &docState{seq: rec.IngestSeq, chunks: map[int]string{}}
				docs[rec.DocID] = d
			}
			if rec.IngestSeq == d.seq && rec.Op == messages.OpUpsert {
				d.chunks[rec.Position] = rec.Hash
			}
			md, _ := m.Metadata()
			if md.Sequence.Stream >= last {
				it.Stop()
				break
			}
		}
	}
	out := map[string][]string{}
	for id, d := range docs {
		if len(d.chunks) == 0 {
			continue
		}
		hs := make([]string, len(d.chunks))
		for pos, h := range d.chunks {
			if pos >= len(hs) {
				e.t.Fatalf("document %s: position %d of %d", id, pos, len(hs))
			}
			hs[pos] = h
		}
		out[id] = hs
	}
	return out
}

// expected chunks every file under dir with the chunker the worker would
// use, keyed by id (prefix + relative path).
func expected(t *testing.T, dir, prefix string) map[string][]string {
	t.Helper()
	ids, _, err := chunking.WalkFolder(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, id := range ids {
		content, err := os.ReadFile(filepath.Join(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := registry.Default().Resolver(registry.Defaults{})
		choice, err := rs.Choose(registry.Request{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		c, err := rs.Chunker(choice)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: prefix + id, Format: choice.Format.Name, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks) == 0 {
			continue
		}
		var hs []string
		for _, ch := range chunks {
			hs = append(hs, ch.Hash())
		}
		out[prefix+id] = hs
	}
	return out
}

// compareViews reports the documents whose chunks differ.
func compareViews(t *testing.T, got, want map[string][]string) {
	t.Helper()
	bad := 0
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			bad++
			if bad <= 5 {
				t.Errorf("document %s: chunks %v, want %v", id, got[id], w)
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			bad++
			if bad <= 10 {
				t.Errorf("document %s: has chunks, want none", id)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d documents differ", bad)
	}
}

// writeFiles writes n small Markdown files under dir, in sub-folders.
func writeFiles(t *testing.T, dir string, n, size int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, mdContent(i, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mdContent(i, size int) []byte {
	b := fmt.Appendf(nil, "# Document %d\n\n", i)
	for len(b) < size {
		b = fmt.Appendf(b, "Paragraph %d of document %d says something worth chunking.\n\n", len(b), i)
	}
	return b
}

func bufioReader(s string, size int) *bufio.Reader {
	return bufio.NewReaderSize(strings.NewReader(s), size)
}

// startTCPServer starts a JetStream server on a random local port.
func startTCPServer(tb testing.TB, dir string) *server.Server {
	tb.Helper()
	return jstest.Start(tb, dir, -1)
}
