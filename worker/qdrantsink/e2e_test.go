package qdrantsink_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// e2e is one end-to-end environment: an in-process JetStream server, the
// worker's topology, an in-process Qdrant and a worker writing into it
// through the Qdrant sink.
type e2e struct {
	t       *testing.T
	nc      *nats.Conn
	js      jetstream.JetStream
	cfg     worker.Config
	top     *topology.Handles
	qd      *qdranttest.Server
	sink    *qdrantsink.Sink
	w       *worker.Worker
	mu      sync.Mutex
	results map[uint64][]worker.Result // by stream sequence
	sends   atomic.Int64
}

func newE2E(t *testing.T, wrap func(worker.Sink) worker.Sink) *e2e {
	t.Helper()
	return newE2EWith(t, e2eOptions{wrap: wrap})
}

// e2eOptions change an end-to-end environment.
type e2eOptions struct {
	// wrap decorates the Qdrant sink.
	wrap func(worker.Sink) worker.Sink
	// config changes the worker's and the sink's configuration.
	config func(*worker.Config, *qdrantsink.Config)
	// embedder computes dense vectors (nil: none).
	embedder qdrantsink.Embedder
	// logger receives the worker's logs.
	logger *slog.Logger
	// backlog, when set, runs before the worker starts (to publish a
	// backlog).
	backlog func(*e2e)
}

func newE2EWith(t *testing.T, opts e2eOptions) *e2e {
	t.Helper()
	wrap := opts.wrap
	ns := jstest.Start(t, t.TempDir(), -1)
	e := &e2e{t: t, results: map[uint64][]worker.Result{}}
	var err error
	if e.nc, err = nats.Connect(ns.ClientURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.nc.Close)
	if e.js, err = jetstream.New(e.nc); err != nil {
		t.Fatal(err)
	}
	// The default AckWait: no test here waits for a redelivery after it,
	// and a short one redelivers work still in hand on a loaded machine.
	e.cfg = worker.DefaultConfig()
	e.cfg.MaxDeliver = 20
	e.cfg.BackoffBase = 50 * time.Millisecond
	e.cfg.BackoffMax = 200 * time.Millisecond
	e.cfg.Concurrency = 2
	e.cfg.MetricsAddr = ""
	e.cfg.DrainTimeout = 5 * time.Second
	qcfg := qdrantsink.DefaultConfig()
	if opts.config != nil {
		opts.config(&e.cfg, &qcfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if e.top, err = worker.Setup(ctx, e.js, e.cfg); err != nil {
		t.Fatal(err)
	}
	e.qd = qdranttest.Start(t)
	qcfg.Addr = e.qd.Addr()
	if e.sink, err = qdrantsink.New(ctx, qcfg, worker.NewKVRecords(e.top.Docs), opts.embedder, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sink.Close() })
	var sink worker.Sink = e.sink
	if wrap != nil {
		sink = wrap(sink)
	}
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{
		Config: e.cfg, Sink: sink, Chunkers: slowChunkers(), Logger: opts.logger,
		OnResult: func(r worker.Result) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.results[r.StreamSeq] = append(e.results[r.StreamSeq], r)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	if opts.backlog != nil {
		opts.backlog(e)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(runCtx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return e
}

// slowChunkers are the default chunkers plus "slow": markdown after a
// sleep of the "sleep_ms" option, to make an older version finish last.
func slowChunkers() *registry.Registry {
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		panic(err)
	}
	return registrytest.With(registrytest.Func("slow", func(c registrytest.Config) (chunking.Chunker, error) {
		return chunking.ChunkerFunc(func(d chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
			time.Sleep(time.Duration(c.SleepMS) * time.Millisecond)
			return md.Chunk(d)
		}), nil
	}))
}

func (e *e2e) publish(req messages.IngestRequest) uint64 {
	e.t.Helper()
	req.V = messages.Version
	data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
	if err != nil {
		e.t.Fatal(err)
	}
	m := nats.NewMsg("ingest.test")
	m.Data = data
	m.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
	m.Header.Set(messages.HeaderMsgID, fmt.Sprintf("%s@%d", req.ID, e.sends.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := e.js.PublishMsg(ctx, m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// wait waits until every sequence has a final result and returns them.
func (e *e2e) wait(seqs ...uint64) map[uint64]worker.Result {
	e.t.Helper()
	var out map[uint64]worker.Result
	testutil.WaitFor(e.t, 2*time.Minute, "every request final", func() (bool, string) {
		out = map[uint64]worker.Result{}
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, s := range seqs {
			for _, r := range e.results[s] {
				if r.Final() {
					out[s] = r
				}
			}
		}
		return len(out) == len(seqs), fmt.Sprintf("%d of %d: %v", len(out), len(seqs), out)
	})
	return out
}

func (e *e2e) outcomes(seq uint64) []worker.Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []worker.Outcome
	for _, r := range e.results[seq] {
		out = append(out, r.Outcome)
	}
	return out
}

// stored returns the document's points as id → point.
func (e *e2e) stored(docID string) map[string]*qdrant.RetrievedPoint {
	out := map[string]*qdrant.RetrievedPoint{}
	for _, p := range e.qd.Points("chunks") {
		if p.GetPayload()[qdrantsink.FieldDocID].GetStringValue() == docID {
			out[p.GetId().GetUuid()] = p
		}
	}
	return out
}

// expected chunks a Markdown document as the worker does.
func expected(t *testing.T, docID, content string) []chunking.Chunk {
	t.Helper()
	c, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: docID, Format: "markdown", Content: []byte(content)})
	if err != nil {
		t.Fatal(err)
	}
	return chunks
}

func (e *e2e) expectDoc(docID, content string, seq uint64) {
	e.t.Helper()
	want := expected(e.t, docID, content)
	got := e.stored(docID)
	if len(got) != len(want) {
		e.t.Fatalf("%s: %d points, want %d chunks", docID, len(got), len(want))
	}
	for pos, c := range want {
		id := messages.ChunkID(docID, pos)
		p := got[id]
		if p == nil {
			e.t.Fatalf("%s: chunk %d (%s) has no point", docID, pos, id)
		}
		pl := p.GetPayload()
		if pl[qdrantsink.FieldContent].GetStringValue() != c.Content() || pl[qdrantsink.FieldHash].GetStringValue() != c.Hash() ||
			pl[qdrantsink.FieldPosition].GetIntegerValue() != int64(pos) || pl[qdrantsink.FieldIngestSeq].GetIntegerValue() != int64(seq) ||
			pl[qdrantsink.FieldDocVersion].GetStringValue() != messages.ContentVersion([]byte(content)) {
			e.t.Fatalf("%s: chunk %d payload %v", docID, pos, pl)
		}
		sv := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorBM25].GetSparse()
		if want := bm25.Document(c.Content()); fmt.Sprint(sv.GetIndices(), sv.GetValues()) != fmt.Sprint(want.Indices, want.Values) {
			e.t.Fatalf("%s: chunk %d bm25 differs", docID, pos)
		}
	}
}

func doc(title string, paragraphs int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n\n", title)
	for i := range paragraphs {
		fmt.Fprintf(&sb, "## Section %d of %s\n\n%s\n\n", i, title, strings.Repeat(fmt.Sprintf("Words of %s in paragraph %d. ", title, i), 40))
	}
	return sb.String()
}

func TestEndToEndThroughJetStream(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)

	// Every chunk becomes a point with the right id, payload and vector.
	docs := map[string]string{"a.md": doc("Alpha", 6), "b.md": doc("Beta", 2), "c.md": doc("Gamma", 12)}
	seqs := map[string]uint64{}
	for id, content := range docs {
		seqs[id] = e.publish(messages.IngestRequest{ID: id, Content: []byte(content)})
	}
	for id, r := range e.wait(seqs["a.md"], seqs["b.md"], seqs["c.md"]) {
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("seq %d: %s (%s)", id, r.Outcome, r.Err)
		}
	}
	for id, content := range docs {
		e.expectDoc(id, content, seqs[id])
	}

	// A changed document re-ingested leaves exactly its new chunks.
	changed := doc("Alpha two", 2)
	s := e.publish(messages.IngestRequest{ID: "a.md", Content: []byte(changed)})
	e.wait(s)
	e.expectDoc("a.md", changed, s)

	// A delete removes them; the other documents stay.
	s = e.publish(messages.IngestRequest{ID: "c.md", Op: messages.OpDelete})
	e.wait(s)
	if n := len(e.stored("c.md")); n != 0 {
		t.Fatalf("c.md after delete: %d points", n)
	}
	e.expectDoc("b.md", docs["b.md"], seqs["b.md"])
}

// TestEndToEndRaces publishes two versions of a document back to back,
// the older one slowed in its chunker so that it writes after the newer
// one (older last), and the other way round (older first): both converge
// to the newer version.
func TestEndToEndRaces(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)
	for _, slowOlder := range []bool{true, false} {
		id := fmt.Sprintf("race-%v.md", slowOlder)
		v1, v2 := doc("Old "+id, 8), doc("New "+id, 3)
		r1 := messages.IngestRequest{ID: id, Content: []byte(v1), Chunker: "slow", Options: map[string]any{"sleep_ms": 10}}
		r2 := messages.IngestRequest{ID: id, Content: []byte(v2), Chunker: "slow", Options: map[string]any{"sleep_ms": 10}}
		if slowOlder {
			r1.Options["sleep_ms"] = 400
		} else {
			r2.Options["sleep_ms"] = 400
		}
		s1, s2 := e.publish(r1), e.publish(r2)
		res := e.wait(s1, s2)
		if res[s2].Outcome != worker.OutcomeAcked {
			t.Fatalf("newer: %s (%s)", res[s2].Outcome, res[s2].Err)
		}
		e.expectDoc(id, v2, s2)
	}
}

// TestEndToEndQdrantDown: while Qdrant is unavailable, requests are held
// (nothing acked, nothing NAKed, the worker not ready); once it returns,
// every document lands on its first delivery.
func TestEndToEndQdrantDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)
	e.qd.SetUnavailable(true)
	docs := map[string]string{"x.md": doc("X", 3), "y.md": doc("Y", 4)}
	seqs := map[string]uint64{}
	for id, content := range docs {
		seqs[id] = e.publish(messages.IngestRequest{ID: id, Content: []byte(content)})
	}
	// The first failed write pauses the worker: that request is held
	// ("paused"), the other one too if it was fetched (without a result),
	// or it waits in INGEST.
	testutil.WaitFor(t, 20*time.Second, "a request held and Qdrant probed while it is down", func() bool {
		return len(e.outcomes(seqs["x.md"]))+len(e.outcomes(seqs["y.md"])) >= 1 && e.failedProbes() >= 2
	})
	if e.w.Ready() {
		t.Error("Ready() = true while Qdrant is down")
	}
	for _, s := range seqs {
		for _, o := range e.outcomes(s) {
			if o != worker.OutcomePaused {
				t.Fatalf("seq %d while Qdrant is down: %s, want only %s", s, o, worker.OutcomePaused)
			}
		}
	}
	e.qd.SetUnavailable(false)
	for s, r := range e.wait(seqs["x.md"], seqs["y.md"]) {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Fatalf("seq %d: %s on delivery %d (%v)", s, r.Outcome, r.Delivery, r.Err)
		}
	}
	for id, content := range docs {
		e.expectDoc(id, content, seqs[id])
	}
}

// failedProbes counts the health checks Qdrant failed (probes of a
// Qdrant that is down).
func (e *e2e) failedProbes() int {
	n := 0
	for _, c := range e.qd.Calls() {
		if c.Method == "HealthCheck" && c.Err != codes.OK {
			n++
		}
	}
	return n
}

// TestEndToEndRedelivery: the first write lands in Qdrant but its ack is
// lost (the sink reports a transient error after writing); the
// redelivery writes the same points again, nothing more.
func TestEndToEndRedelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	var (
		mu     sync.Mutex
		first  map[string]string
		failed bool
	)
	var e *e2e
	e = newE2E(t, func(s worker.Sink) worker.Sink {
		return worker.SinkFunc(func(ctx context.Context, d worker.Doc, chunks []worker.Chunk) error {
			if err := s.Write(ctx, d, chunks); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if !failed {
				failed = true
				first = snapshot(e.stored(d.ID))
				return fmt.Errorf("test: connection lost after the write")
			}
			return nil
		})
	})
	content := doc("Redelivered", 5)
	s := e.publish(messages.IngestRequest{ID: "r.md", Content: []byte(content)})
	if r := e.wait(s)[s]; r.Outcome != worker.OutcomeAcked {
		t.Fatalf("%s (%s)", r.Outcome, r.Err)
	}
	if o := e.outcomes(s); len(o) < 2 || o[0] != worker.OutcomeRetried {
		t.Fatalf("outcomes %v, want a retry first", o)
	}
	mu.Lock()
	defer mu.Unlock()
	if after := snapshot(e.stored("r.md")); !maps.Equal(first, after) {
		t.Fatalf("points changed on redelivery:\n%v\n%v", first, after)
	}
	e.expectDoc("r.md", content, s)
}

func snapshot(points map[string]*qdrant.RetrievedPoint) map[string]string {
	out := map[string]string{}
	for id, p := range points {
		out[id] = p.String()
	}
	return out
}

// TestEndToEndTenants: through JetStream and the worker, documents of
// equal ids under two tenants and none are three documents, with three
// records and their own points; a new version and a delete of one tenant's
// leave the others' points as they were; a request with a bad tenant is
// dead-lettered as an invalid request.
func TestEndToEndTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)
	tenants := []string{"", "acme", "globex"}
	var seqs []uint64
	for _, tenant := range tenants {
		seqs = append(seqs, e.publish(messages.IngestRequest{ID: "a.md", Tenant: tenant, Content: []byte(doc("Tenant "+tenant, 4))}))
	}
	for s, r := range e.wait(seqs...) {
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("seq %d: %s (%s)", s, r.Outcome, r.Err)
		}
	}
	perTenant := func() map[string]int {
		out := map[string]int{}
		for _, p := range e.stored("a.md") {
			tenant := p.GetPayload()[qdrantsink.FieldTenant].GetStringValue()
			if want := messages.TenantChunkID(tenant, "a.md", int(p.GetPayload()[qdrantsink.FieldPosition].GetIntegerValue())); p.GetId().GetUuid() != want {
				t.Errorf("point %s of tenant %q: want id %s", p.GetId().GetUuid(), tenant, want)
			}
			out[tenant]++
		}
		return out
	}
	before := perTenant()
	if len(before) != 3 {
		t.Fatalf("points by tenant %v, want three documents", before)
	}
	for _, tenant := range tenants {
		if _, err := e.top.Docs.Get(context.Background(), messages.DocRecordKey(messages.RecordID(tenant, "a.md"))); err != nil {
			t.Errorf("record of %q's a.md: %v", tenant, err)
		}
	}
	s1 := e.publish(messages.IngestRequest{ID: "a.md", Tenant: "acme", Content: []byte(doc("Acme again", 1))})
	s2 := e.publish(messages.IngestRequest{ID: "a.md", Tenant: "globex", Op: messages.OpDelete})
	bad := e.publish(messages.IngestRequest{ID: "a.md", Tenant: "no spaces", Content: []byte("x")})
	res := e.wait(s1, s2, bad)
	if r := res[bad]; r.Outcome != worker.OutcomePermanent || !strings.Contains(fmt.Sprint(r.Err), "tenant") {
		t.Errorf("request with a bad tenant: %s (%v), want dead-lettered naming the tenant", r.Outcome, r.Err)
	}
	after := perTenant()
	if after[""] != before[""] || after["globex"] != 0 || after["acme"] == 0 || after["acme"] == before["acme"] {
		t.Errorf("points by tenant %v after acme's new version and globex's delete (before %v), want the untenanted untouched", after, before)
	}
}
