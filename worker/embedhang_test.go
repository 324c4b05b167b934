package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// embedSink embeds every chunk with a real embeddings client before the
// subject sink writes it, as the Qdrant sink does: the client's outages
// are the dependency "embedder", and Probe asks the client, unless
// failProbes is set: then it fails without asking. probing counts the
// probes under way.
type embedSink struct {
	inner      worker.Sink
	client     *embed.Client
	failProbes atomic.Bool
	probing    atomic.Int32
}

func (s *embedSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if len(chunks) > 0 {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Chunk.Content()
		}
		if _, err := s.client.Embed(ctx, texts); err != nil {
			return err
		}
	}
	return s.inner.Write(ctx, doc, chunks)
}

func (s *embedSink) Probe(ctx context.Context, dependency string) error {
	if dependency != embed.Dependency {
		return nil
	}
	s.probing.Add(1)
	defer s.probing.Add(-1)
	if s.failProbes.Load() {
		return errors.New("test: probe failed without asking")
	}
	_, err := s.client.Probe(ctx)
	return err
}

// hangWorker is a worker of hangEnv with its sink, results and log.
type hangWorker struct {
	*worker.Worker
	sink *embedSink
	res  *results
	logs *logCounter
}

// hangEnv is a server, an embeddings server and a worker A that holds
// every request: the embedder hangs before they are published, and they
// are fewer than A fetches at once. B, started once A has them all, has
// no work.
func hangEnv(t *testing.T) (e *env, api *embedtest.Server, docs map[string][]byte, a, b *hangWorker) {
	cfg := outageConfig()
	e = newEnv(t, cfg)
	api = embedtest.Start(t, embedtest.Config{})
	start := func() *hangWorker {
		ec := embed.DefaultConfig()
		ec.URL, ec.Model, ec.Timeout = api.URL(), "test-model", time.Second
		client, err := embed.New(ec, embed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hw := &hangWorker{sink: &embedSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16), client: client}, logs: &logCounter{}}
		hw.Worker, hw.res, _ = e.startWorker(worker.Options{Sink: hw.sink, Logger: slog.New(hw.logs)})
		return hw
	}
	a = start()
	testutil.WaitFor(t, time.Minute, "worker A ready", a.Ready)
	api.Hold()
	docs = markdownDocs(3)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	testutil.WaitFor(t, time.Minute, "every request in A's hands", func() (bool, string) {
		info := e.consumerInfo()
		return info.NumPending == 0 && info.NumAckPending == len(docs), fmt.Sprintf("pending %d, ack pending %d", info.NumPending, info.NumAckPending)
	})
	return e, api, docs, a, start()
}

// checkHangEnd requires every request acked on its first delivery, by A,
// nothing dead-lettered, and each worker's outages logged once each way.
func checkHangEnd(t *testing.T, e *env, docs map[string][]byte, a, b *hangWorker, outagesB int) {
	t.Helper()
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(a.res.finals()) == len(docs) })
	testutil.WaitFor(t, time.Minute, "both ready again", func() bool { return a.Ready() && b.Ready() })
	for seq, r := range a.res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	if n := len(b.res.snapshot()); n != 0 {
		t.Errorf("B processed %d deliveries, want none", n)
	}
	checkComplete(t, e.records(), docs)
	if n := len(e.streamMsgs(e.cfg.DLQStream)); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	for _, w := range []struct {
		name    string
		logs    *logCounter
		outages int
	}{{"A", a.logs, 1}, {"B", b.logs, outagesB}} {
		if down, back := w.logs.count("sink down"), w.logs.count("sink up again"); down != w.outages || back != w.outages {
			t.Errorf("worker %s: %d 'sink down' and %d 'sink up again' log lines, want %d each", w.name, down, back, w.outages)
		}
	}
}

// TestHungEmbedderPausesIdleWorker: the embedder hangs while worker A has
// every request in hand and worker B has none. A finds the outage when
// its requests time out; B, which sends the embedder nothing, must pause
// too: not ready, one "sink down" line, its probe confirming A's notice.
// Once the embedder answers, both resume with one "sink up again" line
// each, and every request is acked on its first delivery, none
// dead-lettered.
func TestHungEmbedderPausesIdleWorker(t *testing.T) {
	e, api, docs, a, b := hangEnv(t)
	testutil.WaitFor(t, time.Minute, "A paused by its own timed-out requests", func() bool { return !a.Ready() })
	testutil.WaitFor(t, time.Minute, "B, with no work, paused too", func() bool { return !b.Ready() })
	if up := metricValue(t, b.Metrics().SinkUp.WithLabelValues(embed.Dependency)); up != 0 {
		t.Errorf("B's sink_up{embedder} = %v during the hang, want 0", up)
	}
	api.Release()
	checkHangEnd(t, e, docs, a, b, 1)
}

// TestEmbedderHangsAgainBeforeAResumes: after a first hang, the idle
// worker B passes a probe and resumes while A's probes still fail (A's
// sink makes them fail without asking, as a probe that came a moment
// too late would); then the embedder hangs again and A's probes ask it
// once more. A stays down throughout, so it finds no new outage; B,
// ready with nothing to do, must pause again on A's repeated notice.
func TestEmbedderHangsAgainBeforeAResumes(t *testing.T) {
	e, api, docs, a, b := hangEnv(t)
	testutil.WaitFor(t, time.Minute, "both paused by the first hang", func() bool { return !a.Ready() && !b.Ready() })
	a.sink.failProbes.Store(true)
	testutil.WaitFor(t, time.Minute, "A's probes that ask the embedder over", func() bool { return a.sink.probing.Load() == 0 })
	api.Release()
	testutil.WaitFor(t, time.Minute, "B resumed", b.Ready)
	api.Hold()
	a.sink.failProbes.Store(false)
	testutil.WaitFor(t, time.Minute, "B paused again by the second hang", func() bool { return !b.Ready() })
	if a.Ready() {
		t.Error("A ready during the second hang")
	}
	api.Release()
	checkHangEnd(t, e, docs, a, b, 2)
}

// stallSink fails every write as an outage of "test" while down is set
// (its probe fails too), and otherwise holds every write until release
// is closed, while its probe passes: a dependency that hangs again the
// moment the worker resumes.
type stallSink struct {
	inner   worker.Sink
	down    atomic.Bool
	release chan struct{}
	stalled atomic.Int32 // writes waiting for release
}

func (s *stallSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if s.down.Load() {
		return fault.Unavailable("test", errors.New("test sink: connection refused"))
	}
	s.stalled.Add(1)
	defer s.stalled.Add(-1)
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.inner.Write(ctx, doc, chunks)
}

func (s *stallSink) Probe(context.Context, string) error {
	if s.down.Load() {
		return errors.New("test sink: still down")
	}
	return nil
}

// TestResumeIntoStallKeepsHeldAlive: worker A ends an outage with more
// held deliveries than its processor and queue take, and the processor
// stalls on its first write (the outage's trial) for longer than
// AckWait, while worker B pulls. The deliveries still waiting for A's processor keep
// their in-progress acks: none is redelivered to B, and each is acked on
// its first delivery.
func TestResumeIntoStallKeepsHeldAlive(t *testing.T) {
	cfg := outageConfig()
	cfg.Concurrency = 1 // one processor, a queue of one, batches of 4
	cfg.AckWait = 3 * time.Second
	e := newEnv(t, cfg)
	docs := markdownDocs(4)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	sink := &stallSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16), release: make(chan struct{})}
	sink.down.Store(true)
	w, res, _ := e.startWorker(worker.Options{Sink: sink})
	testutil.WaitFor(t, time.Minute, "every request held", func() bool { return metricValue(t, w.Metrics().Held) == float64(len(docs)) })
	_, resB, _ := e.startWorker(worker.Options{})
	sink.down.Store(false)
	testutil.WaitFor(t, time.Minute, "the first write after the outage stalled", func() bool { return sink.stalled.Load() > 0 })
	// The stall lasts twice AckWait (the test's input): the deliveries
	// behind the stalled one must be kept alive meanwhile.
	for end := time.Now().Add(2 * cfg.AckWait); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if info := e.consumerInfo(); info.NumRedelivered != 0 {
			t.Fatalf("%d requests redelivered while the processor stalled, want 0", info.NumRedelivered)
		}
	}
	if n := len(resB.snapshot()); n != 0 {
		t.Errorf("B processed %d deliveries, want none", n)
	}
	close(sink.release)
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(res.finals()) == len(docs) })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	checkComplete(t, e.records(), docs)
}
