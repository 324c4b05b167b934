package clustertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// testDoc is one generated Markdown document and the chunks the default
// Markdown chunker makes of it (the expectation).
type testDoc struct {
	id      string
	subject string
	content []byte
	want    []chunking.Chunk
}

// makeDocs generates n Markdown documents of varied length: sections with
// a heading and paragraphs, some long enough to need several chunks.
func makeDocs(t *testing.T, n int) []testDoc {
	t.Helper()
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("stream leader raft replica quorum consumer ack chunk header paragraph " +
		"sentence document worker cluster route store snapshot election term index commit")
	var docs []testDoc
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for s := range 1 + i%6 {
			fmt.Fprintf(&b, "## Section %d.%d\n\n", i, s)
			for p := range 2 + (i+s)%4 {
				for w := range 40 + 13*((i+p)%7) {
					b.WriteString(words[(i*7+s*5+p*3+w)%len(words)])
					if w%12 == 11 {
						b.WriteString(". ")
					} else {
						b.WriteByte(' ')
					}
				}
				b.WriteString("\n\n")
			}
		}
		d := testDoc{
			id:      fmt.Sprintf("docs/d%03d.md", i),
			subject: fmt.Sprintf("ingest.docs.d%03d", i),
			content: []byte(b.String()),
		}
		d.want, _, err = ch.Chunk(chunking.Document{Path: d.id, Format: "markdown", Content: d.content})
		if err != nil {
			t.Fatalf("chunk %s: %v", d.id, err)
		}
		if len(d.want) == 0 {
			t.Fatalf("%s makes no chunks", d.id)
		}
		docs = append(docs, d)
	}
	return docs
}

// publishDocs sends every document as an ingest request, retrying through
// leader elections (the Nats-Msg-Id keeps retries single).
func publishDocs(ctx context.Context, t *testing.T, js jetstream.JetStream, docs []testDoc) {
	t.Helper()
	for _, d := range docs {
		req := messages.IngestRequest{V: messages.Version, ID: d.id, Content: d.content}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		hdr := nats.Header{}
		hdr.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		hdr.Set(messages.HeaderMsgID, messages.IngestMsgID("", d.id, messages.ContentVersion(d.content), "send-1"))
		if err := publishRetry(ctx, js, d.subject, data, hdr); err != nil {
			t.Fatal(err)
		}
	}
}

// testWorker is one worker with its own connection, as one process.
type testWorker struct {
	nc   *nats.Conn
	w    *worker.Worker
	done chan error
}

// startWorker connects, sets up the topology (retrying while the cluster
// elects leaders) and runs a worker until ctx ends.
func startWorker(ctx context.Context, t *testing.T, c *cluster, cfg worker.Config, name string, onResult func(worker.Result)) *testWorker {
	t.Helper()
	nc, err := nats.Connect(c.urls(), nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	// The publish-ack timeout matters: a chunk record published to a
	// stream leader that dies before answering never gets a PubAck, and
	// without a timeout the sink waits forever while in-progress acks keep
	// the request from being redelivered (seen in this test). cmd/worker
	// needs the same option (reported to the worker's owner).
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(5*time.Second),
		jetstream.WithPublishAsyncMaxPending(cfg.Workers()*cfg.MaxPendingPublishes))
	if err != nil {
		t.Fatal(err)
	}
	var top *topology.Handles
	testutil.WaitFor(t, 30*time.Second, name+" topology set up", func() (bool, string) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		top, err = worker.Setup(sctx, js, cfg)
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg,
		Logger: slog.New(slog.NewJSONHandler(testWriter{t, name}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Sink:   subjectsink.New(js, cfg.ChunksPrefix, cfg.MaxPendingPublishes),

		OnResult:       onResult,
		TracerProvider: tracingtest.Provider(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	tw := &testWorker{nc: nc, w: w, done: make(chan error, 1)}
	go func() { tw.done <- w.Run(ctx) }()
	return tw
}

// testWriter sends a worker's warnings to the test log (shown with -v or
// on failure).
type testWriter struct {
	t    *testing.T
	name string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s: %s", w.name, strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestWorkersSurviveStreamLeaderLoss runs two workers against a
// three-node cluster with R3 streams, shuts the INGEST stream leader down
// mid-run, and checks that every document's chunks arrive exactly once by
// id, that nothing is dead-lettered, and that the node rejoins.
func TestWorkersSurviveStreamLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	const nDocs = 60
	docs := makeDocs(t, nDocs)
	c := newCluster(t, 3)

	cfg := worker.DefaultConfig()
	cfg.Replicas = 3
	cfg.MetricsAddr = ""
	cfg.Concurrency = 2
	// Requests whose ack was lost with the leader come back quickly, and
	// retries through the election neither wait long nor run out.
	cfg.AckWait = 3 * time.Second
	cfg.BackoffBase = 100 * time.Millisecond
	cfg.BackoffMax = time.Second
	cfg.MaxDeliver = 30
	cfg.DrainTimeout = 10 * time.Second

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, js := c.connect(t)

	// Results by document: the distinct documents finished, and the rest.
	var mu sync.Mutex
	finished := map[string]worker.Outcome{}
	var acked, retried atomic.Int64
	var failures []string
	onResult := func(r worker.Result) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Outcome {
		case worker.OutcomeAcked, worker.OutcomeDuplicate, worker.OutcomeSuperseded:
			finished[r.DocID] = r.Outcome
			acked.Add(1)
		case worker.OutcomeRetried, worker.OutcomeAbandoned, worker.OutcomePaused:
			retried.Add(1)
		default:
			failures = append(failures, fmt.Sprintf("%s: %s %s: %v", r.DocID, r.Outcome, r.Cause, r.Err))
		}
	}
	nFinished := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(finished)
	}

	runCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	workers := []*testWorker{
		startWorker(runCtx, t, c, cfg, "worker-1", onResult),
		startWorker(runCtx, t, c, cfg, "worker-2", onResult),
	}
	for _, s := range []string{cfg.IngestStream, cfg.ChunksStream, cfg.DLQStream} {
		testutil.WaitFor(t, 30*time.Second, "stream "+s+" at R3", func() (bool, string) { return streamCurrent(ctx, js, s, 3) })
	}

	publishDocs(ctx, t, js, docs)

	// Kill the INGEST leader once about a third of the documents are done.
	testutil.WaitFor(t, 60*time.Second, "a third of the documents", func() (bool, string) {
		n := nFinished()
		return n >= nDocs/3, fmt.Sprintf("%d finished", n)
	})
	ingest, err := js.Stream(ctx, cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ingest.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := c.byName(info.Cluster.Leader)
	t.Logf("shutting down INGEST leader %s with %d of %d documents finished", info.Cluster.Leader, nFinished(), nDocs)
	c.kill(victim)

	testutil.WaitFor(t, 90*time.Second, "every document finished on the survivors", func() (bool, string) {
		n := nFinished()
		return n == nDocs, fmt.Sprintf("%d of %d finished, %d retries", n, nDocs, retried.Load())
	})
	testutil.WaitFor(t, 30*time.Second, "INGEST drained", func() (bool, string) {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		info, err := ingest.Info(sctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == 0, fmt.Sprintf("%d messages left", info.State.Msgs)
	})

	checkChunks(ctx, t, js, cfg, docs)

	mu.Lock()
	if len(failures) > 0 {
		t.Errorf("dead letters or failures: %q", failures)
	}
	mu.Unlock()
	dlq, err := js.Stream(ctx, cfg.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	if di, err := dlq.Info(ctx); err != nil || di.State.Msgs != 0 {
		t.Errorf("DLQ holds %v messages (err %v), want 0", di.State.Msgs, err)
	}

	// The node rejoins and every R3 stream (the buckets too) is current.
	c.restart(victim)
	for _, s := range []string{cfg.IngestStream, cfg.ChunksStream, cfg.DLQStream, "KV_" + cfg.DocsBucket, "OBJ_" + cfg.ObjectsBucket} {
		testutil.WaitFor(t, 60*time.Second, "stream "+s+" current after the restart", func() (bool, string) { return streamCurrent(ctx, js, s, 3) })
	}
	peers := map[string]bool{}
	for _, s := range []string{cfg.IngestStream, cfg.ChunksStream} {
		st, err := js.Stream(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		si, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		peers[si.Cluster.Leader] = true
		for _, r := range si.Cluster.Replicas {
			peers[r.Name] = true
		}
	}
	if !peers[victim.opts.ServerName] {
		t.Errorf("restarted %s is not a peer of the streams: %v", victim.opts.ServerName, peers)
	}

	stopWorkers()
	for i, w := range workers {
		select {
		case err := <-w.done:
			if err != nil {
				t.Errorf("worker %d Run: %v", i+1, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("worker %d did not stop", i+1)
		}
		w.nc.Close()
	}
	t.Logf("%d results (%d retries or abandons)", acked.Load(), retried.Load())
}

// checkChunks reads the whole CHUNKS stream and compares it with the
// expected chunks: every position of every document exactly once (by
// chunk id and ingest sequence), with the expected content hash.
func checkChunks(ctx context.Context, t *testing.T, js jetstream.JetStream, cfg worker.Config, docs []testDoc) {
	t.Helper()
	want := 0
	for _, d := range docs {
		want += len(d.want)
	}
	// Right after a node is killed the stream's leader may still be being
	// elected ("no responders", "leadership change"): each read waits for
	// an answer.
	var stream jetstream.Stream
	testutil.WaitFor(t, 30*time.Second, "the chunks stream answering", func() (bool, string) {
		s, err := js.Stream(ctx, cfg.ChunksStream)
		if err != nil {
			return false, err.Error()
		}
		stream = s
		return true, ""
	})
	total := 0
	testutil.WaitFor(t, 30*time.Second, "chunk records stored", func() (bool, string) {
		info, err := stream.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		total = int(info.State.Msgs)
		return info.State.Msgs >= uint64(want), fmt.Sprintf("%d of %d", info.State.Msgs, want)
	})
	var cons jetstream.Consumer
	testutil.WaitFor(t, 30*time.Second, "an ordered consumer on the chunks stream", func() (bool, string) {
		c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return false, err.Error()
		}
		cons = c
		return true, ""
	})
	type key struct {
		id  string
		seq uint64
	}
	seen := map[key]int{}
	byDoc := map[string]map[int]messages.ChunkRecord{}
	for read := 0; read < total; {
		batch, err := cons.Fetch(min(500, total-read), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			rec, err := messages.DecodeChunkRecord(msg.Headers().Get(messages.HeaderContentType), msg.Data())
			if err != nil {
				t.Fatalf("chunk record %s: %v", msg.Subject(), err)
			}
			seen[key{rec.ID, rec.IngestSeq}]++
			if byDoc[rec.DocID] == nil {
				byDoc[rec.DocID] = map[int]messages.ChunkRecord{}
			}
			byDoc[rec.DocID][rec.Position] = rec
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("read %d of %d chunk records, then nothing", read, total)
		}
		read += n
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("chunk %s of ingest_seq %d stored %d times", k.id, k.seq, n)
		}
	}
	if total != want {
		t.Errorf("CHUNKS holds %d records, want %d (one per chunk)", total, want)
	}
	for _, d := range docs {
		got := byDoc[d.id]
		if len(got) != len(d.want) {
			t.Errorf("%s: %d chunk records, want %d", d.id, len(got), len(d.want))
			continue
		}
		for pos, w := range d.want {
			r, ok := got[pos]
			switch {
			case !ok:
				t.Errorf("%s: position %d missing", d.id, pos)
			case r.ID != messages.ChunkID(d.id, pos) || r.Count != len(d.want) || r.Hash != w.Hash():
				t.Errorf("%s#%d: record id %s count %d hash %s, want %s %d %s", d.id, pos, r.ID, r.Count, r.Hash, messages.ChunkID(d.id, pos), len(d.want), w.Hash())
			}
		}
	}
}
