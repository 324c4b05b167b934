package worker_test

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

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// downSink wraps a sink: while down is set, every write fails as an
// outage of the dependency "test" and so does its probe. Documents named
// in broken fail as an outage whatever down says, while the probe passes.
type downSink struct {
	inner  worker.Sink
	down   atomic.Bool
	probes atomic.Int64
	broken map[string]bool
}

func (s *downSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if s.down.Load() || s.broken[doc.ID] {
		return fault.Unavailable("test", errors.New("test sink: connection refused"))
	}
	return s.inner.Write(ctx, doc, chunks)
}

func (s *downSink) Probe(_ context.Context, dependency string) error {
	if dependency != "test" {
		return fmt.Errorf("probe of unknown dependency %q", dependency)
	}
	s.probes.Add(1)
	if s.down.Load() {
		return errors.New("test sink: still down")
	}
	return nil
}

// logCounter is a slog.Handler that keeps every message.
type logCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }

// count returns the number of messages starting with prefix.
func (h *logCounter) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// outageConfig is testConfig with quick probes.
func outageConfig() worker.Config {
	cfg := testConfig()
	cfg.SinkProbeBase = 20 * time.Millisecond
	cfg.SinkProbeMax = 100 * time.Millisecond
	return cfg
}

func (e *env) consumerInfo() *jetstream.ConsumerInfo {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := e.top.Consumer.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// TestSinkOutageHoldsDeliveries: a sink down for many times the whole
// retry budget (MaxDeliver 3, backoff from 50 ms) and for longer than
// AckWait costs no delivery and no dead letter: the worker stops
// fetching, holds what it has with in-progress acks, is not ready, logs
// the outage once, and processes everything on the first delivery once
// the probe passes. The acks go out every AckWait/3, so only a stall of
// the worker's process longer than two thirds of AckWait (here 3 s) could
// let the server redeliver.
func TestSinkOutageHoldsDeliveries(t *testing.T) {
	cfg := outageConfig()
	cfg.AckWait = 5 * time.Second
	e := newEnv(t, cfg)
	docs := markdownDocs(60)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	sink := &downSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16)}
	sink.down.Store(true)
	logs := &logCounter{}
	w, res, _ := e.startWorker(worker.Options{Sink: sink, Logger: slog.New(logs)})
	m := w.Metrics()

	testutil.WaitFor(t, time.Minute, "the outage noticed and probed", func() bool { return sink.probes.Load() >= 3 })
	before := e.consumerInfo()
	// Hold the sink down for longer than AckWait (the outage's length is
	// the test's input): held deliveries must be kept alive by their
	// in-progress acks.
	for end := time.Now().Add(cfg.AckWait + time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if w.Ready() {
			t.Fatal("Ready() = true while the sink is down")
		}
	}
	during := e.consumerInfo()
	if during.NumPending != before.NumPending {
		t.Errorf("requests fetched during the outage: pending went from %d to %d", before.NumPending, during.NumPending)
	}
	inHand := uint64(max(2*cfg.Concurrency, 4) + 2*cfg.Concurrency) // a batch, the queue, the processors
	if during.NumAckPending == 0 || uint64(during.NumAckPending) > inHand {
		t.Errorf("%d requests in hand during the outage, want 1 to %d", during.NumAckPending, inHand)
	}
	if during.NumRedelivered != 0 {
		t.Errorf("%d requests redelivered during the outage, want 0 (held with in-progress acks)", during.NumRedelivered)
	}
	if held := metricValue(t, m.Held); held < 1 || held > float64(during.NumAckPending) {
		t.Errorf("held gauge = %v, want 1 to the %d requests in hand", held, during.NumAckPending)
	}
	if up := metricValue(t, m.SinkUp.WithLabelValues("test")); up != 0 {
		t.Errorf("sink_up = %v during the outage, want 0", up)
	}
	if since := metricValue(t, m.SinkDownSince.WithLabelValues("test")); since <= 0 {
		t.Errorf("sink_down_since_seconds = %v during the outage, want its start", since)
	}
	for _, r := range res.snapshot() {
		if r.Outcome != worker.OutcomePaused {
			t.Fatalf("result during the outage: %+v, want only %s", r, worker.OutcomePaused)
		}
	}

	sink.down.Store(false)
	testutil.WaitFor(t, 60*time.Second, "every request acked", func() bool { return len(res.finals()) == len(docs) })
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() bool { return e.pendingIngest() == 0 })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	checkComplete(t, e.records(), docs)
	if n := len(e.streamMsgs(cfg.DLQStream)); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	testutil.WaitFor(t, time.Minute, "ready again", w.Ready)
	if up := metricValue(t, m.SinkUp.WithLabelValues("test")); up != 1 {
		t.Errorf("sink_up = %v after the outage, want 1", up)
	}
	if down, back := logs.count("sink down"), logs.count("sink up again"); down != 1 || back != 1 {
		t.Errorf("%d 'sink down' and %d 'sink up again' log lines, want one each", down, back)
	}
}

// fakeProbeSink fails every write as an outage of "test" while down is
// set, but its probe always passes: a dependency that answers probes and
// fails real work. It counts the writes made while down.
type fakeProbeSink struct {
	inner        worker.Sink
	down         atomic.Bool
	writesWhile  atomic.Int64
	writing, max atomic.Int64
}

func (s *fakeProbeSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if s.down.Load() {
		n := s.writing.Add(1)
		defer s.writing.Add(-1)
		for m := s.max.Load(); n > m && !s.max.CompareAndSwap(m, n); m = s.max.Load() {
		}
		s.writesWhile.Add(1)
		time.Sleep(20 * time.Millisecond) // a write that hangs until its time-out
		return fault.Unavailable("test", errors.New("test sink: write timed out"))
	}
	return s.inner.Write(ctx, doc, chunks)
}

func (s *fakeProbeSink) Probe(context.Context, string) error { return nil }

// TestTrialKeepsOutage: the sink's probe passes but every write fails as
// an outage. After the first failures the worker does not resume on the
// passing probe: it lets one held request through at a time (the trial),
// which fails, and the outage goes on with one "sink down" line; once a
// trial is written it resumes with one "sink up again" line, and every
// request is acked on its first delivery.
func TestTrialKeepsOutage(t *testing.T) {
	cfg := outageConfig()
	cfg.MaxDeliver = 8 // trials rotate over the held requests: none is tried that often
	e := newEnv(t, cfg)
	docs := markdownDocs(6)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	sink := &fakeProbeSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16)}
	sink.down.Store(true)
	logs := &logCounter{}
	w, res, _ := e.startWorker(worker.Options{Sink: sink, Logger: slog.New(logs)})
	testutil.WaitFor(t, time.Minute, "the outage noticed", func() bool { return logs.count("sink down") == 1 })
	trialsFrom := sink.writesWhile.Load()
	sink.max.Store(0)
	testutil.WaitFor(t, time.Minute, "five trials", func() bool { return sink.writesWhile.Load() >= trialsFrom+5 })
	if w.Ready() {
		t.Error("ready while every write fails")
	}
	if n := sink.max.Load(); n != 1 {
		t.Errorf("%d writes at once during the trials, want one at a time", n)
	}
	if down, up := logs.count("sink down"), logs.count("sink up again"); down != 1 || up != 0 {
		t.Errorf("%d 'sink down' and %d 'sink up again' lines during the outage, want one and none", down, up)
	}
	sink.down.Store(false)
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(res.finals()) == len(docs) })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	testutil.WaitFor(t, time.Minute, "ready again", w.Ready)
	if down, up := logs.count("sink down"), logs.count("sink up again"); down != 1 || up != 1 {
		t.Errorf("%d 'sink down' and %d 'sink up again' lines, want one each", down, up)
	}
	checkComplete(t, e.records(), docs)
}

// TestRecordsBucketRecreated: the bucket of document records is deleted
// under a running worker. The worker pauses at its first record write
// that fails, its probe creates the bucket again and says so by name, and
// it resumes by itself: every request is acked, none dead-lettered, and
// the fleet's chunker defaults are written again.
func TestRecordsBucketRecreated(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	logs := &logCounter{}
	w, res, _ := e.startWorker(worker.Options{Logger: slog.New(logs)})
	first := markdownDocs(3)
	for id, c := range first {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	testutil.WaitFor(t, time.Minute, "the first requests acked", func() bool { return len(res.finals()) == len(first) })
	ctx := context.Background()
	if err := e.js.DeleteKeyValue(ctx, cfg.DocsBucket); err != nil {
		t.Fatal(err)
	}
	more := map[string][]byte{}
	for id, c := range markdownDocs(8) {
		if _, ok := first[id]; !ok {
			more["more/"+id] = c
			e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "more/" + id, Content: c}, "")
		}
	}
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(res.finals()) == len(first)+len(more) })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked {
			t.Errorf("seq %d: %s (%v), want acked", seq, r.Outcome, r.Err)
		}
	}
	if n := logs.count("records bucket KV_" + cfg.DocsBucket + " is gone: recreating it"); n != 1 {
		t.Errorf("%d lines naming the bucket gone, want 1", n)
	}
	kv, err := e.js.KeyValue(ctx, cfg.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, messages.ChunkerDefaultsKey); err != nil {
		t.Errorf("the fleet's chunker defaults after the bucket came back: %v", err)
	}
	testutil.WaitFor(t, time.Minute, "ready again", w.Ready)
	if n := len(e.streamMsgs(cfg.DLQStream)); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

// TestOutageThatIsTheMessage: a request whose write always fails as an
// outage while the probe passes is tried MaxDeliver times per delivery,
// then NAKed as an ordinary failure, and ends as an exhausted dead letter;
// the other requests are acked.
func TestOutageThatIsTheMessage(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	sink := &downSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16), broken: map[string]bool{"bad.md": true}}
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	bad := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "bad.md", Content: []byte("# Bad\n\nx")}, "")
	docs := markdownDocs(5)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	testutil.WaitFor(t, 60*time.Second, "every request settled", func() bool { return len(res.finals()) == len(docs)+1 })
	r := res.finals()[bad]
	if r.Outcome != worker.OutcomeExhausted || r.Delivery != uint64(cfg.MaxDeliver) {
		t.Errorf("bad.md: %s on delivery %d, want exhausted on %d", r.Outcome, r.Delivery, cfg.MaxDeliver)
	}
	paused := map[uint64]int{}
	for _, r := range res.snapshot() {
		if r.StreamSeq == bad && r.Outcome == worker.OutcomePaused {
			paused[r.Delivery]++
		}
	}
	for d := uint64(1); d <= uint64(cfg.MaxDeliver); d++ {
		if paused[d] != cfg.MaxDeliver {
			t.Errorf("bad.md delivery %d held %d times, want %d", d, paused[d], cfg.MaxDeliver)
		}
	}
	checkComplete(t, e.records(), docs)
}

// TestOutageDrain: a worker stopped during an outage NAKs what it holds at
// once, so the next worker takes every request, each on its second
// delivery, and nothing is lost.
func TestOutageDrain(t *testing.T) {
	cfg := outageConfig()
	cfg.AckWait = time.Minute // a request left unNAKed would wait this long
	e := newEnv(t, cfg)
	docs := markdownDocs(12)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	sink := &downSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16)}
	sink.down.Store(true)
	w, _, stop := e.startWorker(worker.Options{Sink: sink})
	testutil.WaitFor(t, time.Minute, "requests held", func() bool { return metricValue(t, w.Metrics().Held) > 0 })
	stop()
	// The held requests were NAKed at once: the next worker gets them long
	// before their AckWait would have run out.
	_, res, _ := e.startWorker(worker.Options{})
	testutil.WaitFor(t, cfg.AckWait/3, "every request acked by the next worker", func() bool { return len(res.finals()) == len(docs) })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery > 2 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first or second", seq, r.Outcome, r.Delivery)
		}
	}
	checkComplete(t, e.records(), docs)
}

// TestChunksStreamMissingPauses: the subject sink's stream disappears;
// its publishes find no responder, an outage of NATS: the worker holds
// its requests and probes the stream until it exists again, then writes
// everything, with no dead letter.
func TestChunksStreamMissingPauses(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	ctx := context.Background()
	if err := e.js.DeleteStream(ctx, cfg.ChunksStream); err != nil {
		t.Fatal(err)
	}
	logs := &logCounter{}
	w, res, _ := e.startWorker(worker.Options{Logger: slog.New(logs)})
	docs := markdownDocs(8)
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	m := w.Metrics()
	testutil.WaitFor(t, 20*time.Second, "the outage probed", func() bool {
		return metricValue(t, m.SinkProbes.WithLabelValues(worker.DependencyNATS, "failed")) >= 3
	})
	if w.Ready() {
		t.Error("Ready() = true while the chunks stream is missing")
	}
	if _, err := worker.Setup(ctx, e.js, cfg); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, "every request acked", func() bool { return len(res.finals()) == len(docs) })
	for seq, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	checkComplete(t, e.records(), docs)
	if n := len(e.streamMsgs(cfg.DLQStream)); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	if down, back := logs.count("sink down"), logs.count("sink up again"); down != 1 || back != 1 {
		t.Errorf("%d 'sink down' and %d 'sink up again' log lines, want one each", down, back)
	}
}
