package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// testConfig is the worker configuration of the tests: short backoff so
// that retries stay quick, and the default AckWait, so that a loaded
// machine never makes the server redeliver work still in hand (a test
// that is about redelivery after AckWait sets a short one itself).
func testConfig() worker.Config {
	c := worker.DefaultConfig()
	c.AckWait = 30 * time.Second
	c.MaxDeliver = 3
	c.BackoffBase = 50 * time.Millisecond
	c.BackoffMax = 400 * time.Millisecond
	c.Concurrency = 2
	c.MetricsAddr = ""
	c.DrainTimeout = 5 * time.Second
	return c
}

// env is one test's server, connection and topology.
type env struct {
	t   testing.TB
	ns  *server.Server
	dir string
	nc  *nats.Conn
	js  jetstream.JetStream
	cfg worker.Config
	top *topology.Handles
}

func newEnv(t testing.TB, cfg worker.Config) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), cfg: cfg}
	e.ns = jstest.Start(t, e.dir, -1)
	t.Cleanup(func() { e.ns.Shutdown(); e.ns.WaitForShutdown() })
	e.connect()
	return e
}

func (e *env) connect() {
	e.t.Helper()
	nc, err := nats.Connect(e.ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nc.Close)
	e.nc = nc
	if e.js, err = jetstream.New(nc); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if e.top, err = worker.Setup(ctx, e.js, e.cfg); err != nil {
		e.t.Fatal(err)
	}
}

// faultEntries are test chunkers: "panic" panics, "slow" sleeps for the
// "sleep_ms" option and then chunks as markdown.
func faultEntries() []registry.Entry {
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		panic(err)
	}
	return []registry.Entry{
		registrytest.Func("panic", func(registrytest.Config) (chunking.Chunker, error) {
			return chunking.ChunkerFunc(func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
				panic("boom")
			}), nil
		}),
		registrytest.Func("slow", func(c registrytest.Config) (chunking.Chunker, error) {
			return chunking.ChunkerFunc(func(d chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
				time.Sleep(time.Duration(c.SleepMS) * time.Millisecond)
				return md.Chunk(d)
			}), nil
		}),
	}
}

// results collects worker.Results.
type results struct {
	mu  sync.Mutex
	all []worker.Result
}

func (r *results) add(res worker.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, res)
}

func (r *results) snapshot() []worker.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]worker.Result(nil), r.all...)
}

func (r *results) finals() map[uint64]worker.Result {
	out := map[uint64]worker.Result{}
	for _, res := range r.snapshot() {
		if res.Final() {
			out[res.StreamSeq] = res
		}
	}
	return out
}

// startWorker runs a worker until the test ends (or stop is called) and
// returns it with its results.
func (e *env) startWorker(opts worker.Options) (*worker.Worker, *results, func()) {
	e.t.Helper()
	res := &results{}
	if opts.Sink == nil {
		opts.Sink = subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)
	}
	if opts.Chunkers == nil {
		opts.Chunkers = registrytest.With(faultEntries()...)
	}
	opts.Config = e.cfg
	if opts.TracerProvider == nil {
		opts.TracerProvider = tracingtest.Provider(e.t)
	}
	if testing.Verbose() && opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	prev := opts.OnResult
	opts.OnResult = func(r worker.Result) {
		res.add(r)
		if prev != nil {
			prev(r)
		}
	}
	w, err := worker.New(e.nc, e.js, e.top, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	e.t.Cleanup(stop)
	return w, res, stop
}

// publish sends a request (msgpack unless ct says JSON) with a fresh
// message id and returns its stream sequence.
func (e *env) publish(subject string, req messages.IngestRequest, ct string) uint64 {
	e.t.Helper()
	data, err := messages.EncodeIngest(&req, ct)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.publishRaw(subject, data, ct)
}

var sendCounter struct {
	sync.Mutex
	n int
}

func (e *env) publishRaw(subject string, data []byte, ct string) uint64 {
	e.t.Helper()
	sendCounter.Lock()
	sendCounter.n++
	id := fmt.Sprintf("test-%d-%d", time.Now().UnixNano(), sendCounter.n)
	sendCounter.Unlock()
	m := nats.NewMsg(subject)
	m.Data = data
	if ct != "" {
		m.Header.Set(messages.HeaderContentType, ct)
	}
	m.Header.Set(messages.HeaderMsgID, id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := e.js.PublishMsg(ctx, m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// streamMsgs returns every message stored in a stream.
func (e *env) streamMsgs(name string) []*jetstream.RawStreamMsg {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.js.Stream(ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// records decodes every chunk record on CHUNKS.
func (e *env) records() []messages.ChunkRecord {
	e.t.Helper()
	var out []messages.ChunkRecord
	for _, m := range e.streamMsgs(e.cfg.ChunksStream) {
		rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			e.t.Fatalf("chunk record %d: %v", m.Sequence, err)
		}
		out = append(out, rec)
	}
	return out
}

// pendingIngest returns the number of requests left in INGEST.
func (e *env) pendingIngest() uint64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		return 1 << 62
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 1 << 62
	}
	return info.State.Msgs
}

// markdownDocs generates n Markdown documents of varied length.
func markdownDocs(n int) map[string][]byte {
	words := strings.Fields("stream leader replica quorum consumer ack chunk header paragraph sentence document worker")
	docs := make(map[string][]byte, n)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for s := range 1 + i%5 {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", i, s)
			for p := range 2 + (i+s)%3 {
				for w := range 30 + 17*((i+p)%9) {
					b.WriteString(words[(i*7+s*5+p*3+w)%len(words)])
					b.WriteByte(' ')
				}
				b.WriteString("\n\n")
			}
		}
		docs[fmt.Sprintf("docs/d%03d.md", i)] = []byte(b.String())
	}
	return docs
}

// expectedChunks chunks content as the worker should.
func expectedChunks(t testing.TB, id string, content []byte) []chunking.Chunk {
	t.Helper()
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := ch.Chunk(chunking.Document{Path: id, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkComplete verifies that CHUNKS holds, for every document, exactly
// its expected chunks once for its (only) ingest sequence, and nothing
// else.
func checkComplete(t testing.TB, recs []messages.ChunkRecord, docs map[string][]byte) {
	t.Helper()
	byDoc := map[string][]messages.ChunkRecord{}
	seen := map[string]int{}
	for _, r := range recs {
		byDoc[r.DocID] = append(byDoc[r.DocID], r)
		if r.Op == messages.OpUpsert {
			seen[r.MsgID()]++
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("chunk record %s stored %d times", id, n)
		}
	}
	for id, content := range docs {
		want := expectedChunks(t, id, content)
		got := byDoc[id]
		if len(want) == 0 {
			if len(got) != 1 || got[0].Op != messages.OpDelete {
				t.Errorf("%s: got %d records, want one delete record", id, len(got))
			}
			continue
		}
		byPos := map[int]messages.ChunkRecord{}
		for _, r := range got {
			if r.Op != messages.OpUpsert {
				t.Errorf("%s: unexpected %s record", id, r.Op)
				continue
			}
			if r.Count != len(want) {
				t.Errorf("%s: record count = %d, want %d", id, r.Count, len(want))
			}
			byPos[r.Position] = r
		}
		if len(byPos) != len(want) {
			t.Errorf("%s: %d distinct positions, want %d", id, len(byPos), len(want))
		}
		for i, w := range want {
			r, ok := byPos[i]
			if !ok {
				t.Errorf("%s: chunk %d missing", id, i)
				continue
			}
			if r.ID != messages.ChunkID(id, i) || r.Content != w.Content() || r.Hash != w.Hash() ||
				r.DocVersion != messages.ContentVersion(content) {
				t.Errorf("%s#%d: record %+v differs from the chunk %q (hash %s)", id, i, r, w.Content(), w.Hash())
			}
		}
	}
	for id := range byDoc {
		if _, ok := docs[id]; !ok {
			t.Errorf("records for unknown document %q", id)
		}
	}
}
