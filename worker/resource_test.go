package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// setQuota sets the account's JetStream storage quota: maxStore bytes,
// or -1 for none. It is what an operator changes in the account's limits.
func (e *env) setQuota(maxStore int64) {
	e.t.Helper()
	acc, err := e.ns.LookupAccount(server.DEFAULT_GLOBAL_ACCOUNT)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := acc.UpdateJetStreamLimits(map[string]server.JetStreamAccountLimits{
		"": {MaxMemory: -1, MaxStore: maxStore, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1},
	}); err != nil {
		e.t.Fatal(err)
	}
}

// storeUsed returns the account's storage in use.
func (e *env) storeUsed() int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := e.js.AccountInfo(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return int64(info.Store)
}

// limitStream sets a stream's byte limit with discard new (0: none).
func (e *env) limitStream(name string, maxBytes int64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := e.js.Stream(ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.MaxBytes, sc.Discard = maxBytes, jetstream.DiscardNew
	if maxBytes == 0 {
		sc.MaxBytes = -1
	}
	if _, err := e.js.UpdateStream(ctx, sc); err != nil {
		e.t.Fatal(err)
	}
}

// checkOutcomes checks that every request of docs was acked and every
// one of bad dead-lettered with cause, each on its first delivery: a
// storage outage costs no delivery.
func checkOutcomes(t *testing.T, res *results, good, bad map[uint64]bool, cause fault.Cause) {
	t.Helper()
	finals := res.finals()
	if len(finals) != len(good)+len(bad) {
		t.Fatalf("%d requests settled, want %d", len(finals), len(good)+len(bad))
	}
	for seq, r := range finals {
		switch {
		case good[seq] && r.Outcome != worker.OutcomeAcked,
			bad[seq] && (r.Outcome != worker.OutcomePermanent || r.Cause != cause):
			t.Errorf("seq %d: %s (%s), want acked for a document, a %s dead letter for a bad request", seq, r.Outcome, r.Cause, cause)
		case r.Delivery != 1:
			t.Errorf("seq %d: %s on delivery %d, want the first", seq, r.Outcome, r.Delivery)
		}
	}
}

// TestStorageQuotaHoldsEveryRequest: the account's JetStream quota is
// used up (as a full disk or a lowered quota leaves it): the records
// writes and the dead letters fail for want of room. The worker holds
// what it has, fetches nothing, is not ready, logs the outage once and
// probes with a write; nothing is dead-lettered for the outage and no
// delivery is spent, through many AckWaits. Once the quota is raised,
// every document is processed and every bad request dead-lettered with
// its own cause, each on its first delivery.
func TestStorageQuotaHoldsEveryRequest(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	// A worker ran before the quota ran out: the defaults are advertised.
	w0, _, stop := e.startWorker(worker.Options{})
	testutil.WaitFor(t, time.Minute, "a first worker ready", w0.Ready)
	stop()
	// The bad requests come first, so their dead letters are the first
	// writes refused.
	docs := markdownDocs(30)
	good, bad := map[uint64]bool{}, map[uint64]bool{}
	for i := range 4 {
		bad[e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("bad/%d.md", i)}, "")] = true
	}
	for id, c := range docs {
		good[e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")] = true
	}
	e.setQuota(e.storeUsed())

	logs := &logCounter{}
	w, res, _ := e.startWorker(worker.Options{Logger: slog.New(logs)})
	m := w.Metrics()
	// The failed probes are the clock: 100 ms apart at most, so 60 of
	// them outlast AckWait (2 s) three times over.
	testutil.WaitFor(t, time.Minute, "storage probed through three AckWaits", func() bool {
		return metricValue(t, m.SinkProbes.WithLabelValues(worker.DependencyJetStream, "failed")) >= 60
	})
	if w.Ready() {
		t.Error("Ready() = true while the quota is used up")
	}
	if held := metricValue(t, m.Held); held < 1 {
		t.Errorf("held gauge = %v, want the requests in hand", held)
	}
	during := e.consumerInfo()
	if during.NumRedelivered != 0 {
		t.Errorf("%d requests redelivered while the quota was used up, want 0", during.NumRedelivered)
	}
	heldDeadLetters := 0
	for _, r := range res.snapshot() {
		if r.Final() {
			t.Fatalf("settled while the quota was used up: %+v", r)
		}
		if bad[r.StreamSeq] {
			heldDeadLetters++
		}
	}
	if heldDeadLetters == 0 {
		t.Error("no dead letter was refused and held while the quota was used up")
	}
	e.setQuota(-1)
	testutil.WaitFor(t, time.Minute, "every request settled", func() bool { return len(res.finals()) == len(good)+len(bad) })
	checkOutcomes(t, res, good, bad, fault.CauseNoContent)
	checkComplete(t, e.records(), docs)
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() bool { return e.pendingIngest() == 0 })
	if n := len(e.streamMsgs(cfg.DLQStream)); n != len(bad) {
		t.Errorf("%d dead letters, want %d", n, len(bad))
	}
	if down, back := logs.count("sink down"), logs.count("sink up again"); down != 1 || back != 1 {
		t.Errorf("%d 'sink down' and %d 'sink up again' log lines, want one each", down, back)
	}
}

// TestFullStreamsPauseWithoutFlapping: the chunks stream, then the dead
// letter stream, reach their byte limit (discard new). Each is an outage
// whose probe checks room, not reachability: the worker stays paused,
// with one "sink down" line however long the stream stays full, spends
// no delivery, and resumes when the limit is raised.
func TestFullStreamsPauseWithoutFlapping(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stream func(worker.Config) string
	}{
		{"chunks", func(c worker.Config) string { return c.ChunksStream }},
		{"dead letters", func(c worker.Config) string { return c.DLQStream }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := outageConfig()
			e := newEnv(t, cfg)
			name := tt.stream(cfg)
			// Full from the start: the limit is what the stream holds.
			e.limitStream(name, 1)
			logs := &logCounter{}
			w, res, _ := e.startWorker(worker.Options{Logger: slog.New(logs)})
			docs := markdownDocs(12)
			good, bad := map[uint64]bool{}, map[uint64]bool{}
			for id, c := range docs {
				good[e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")] = true
			}
			for i := range 3 {
				bad[e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("bad/%d.md", i)}, "")] = true
			}
			m := w.Metrics()
			testutil.WaitFor(t, time.Minute, "the full stream probed through three AckWaits", func() bool {
				return metricValue(t, m.SinkProbes.WithLabelValues(worker.DependencyJetStream, "failed")) >= 60
			})
			if w.Ready() {
				t.Errorf("Ready() = true while %s is full", name)
			}
			if n := logs.count("sink down"); n != 1 {
				t.Errorf("%d 'sink down' lines while %s is full, want 1 (no flapping)", n, name)
			}
			if info := e.consumerInfo(); info.NumRedelivered != 0 {
				t.Errorf("%d requests redelivered while %s is full, want 0", info.NumRedelivered, name)
			}
			e.limitStream(name, 0)
			testutil.WaitFor(t, time.Minute, "every request settled", func() bool { return len(res.finals()) == len(good)+len(bad) })
			checkOutcomes(t, res, good, bad, fault.CauseNoContent)
			checkComplete(t, e.records(), docs)
			if down, back := logs.count("sink down"), logs.count("sink up again"); down != 1 || back != 1 {
				t.Errorf("%d 'sink down' and %d 'sink up again' log lines, want one each", down, back)
			}
		})
	}
}

// TestWaitingDeliveriesKeptAlive: while every processor is busy (one
// processor, a chunker held until the test lets it go), the deliveries
// fetched and waiting behind it get in-progress acks too, read on the
// server's ack subjects: the test lets the chunker go once each waiting
// delivery has had three, more than one AckWait's worth. None is then
// redelivered, so none is processed twice. (The in-progress acks are the
// assertion; the AckWait of 5 s leaves a loaded machine room between two
// of them.)
func TestWaitingDeliveriesKeptAlive(t *testing.T) {
	cfg := testConfig()
	cfg.Concurrency = 1
	cfg.AckWait = 5 * time.Second
	e := newEnv(t, cfg)
	var mu sync.Mutex
	inProgress := map[uint64]int{} // by stream sequence
	sub, err := e.nc.Subscribe("$JS.ACK.>", func(m *nats.Msg) {
		if string(m.Data) != "+WPI" {
			return
		}
		// The ack subject is the reply subject of the delivery it acks.
		if md, err := (&nats.Msg{Reply: m.Subject, Sub: m.Sub}).Metadata(); err == nil {
			mu.Lock()
			inProgress[md.Sequence.Stream]++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	held := registrytest.Func("held", func(registrytest.Config) (chunking.Chunker, error) {
		return chunking.ChunkerFunc(func(d chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
			<-release
			return []chunking.Chunk{chunking.NewChunk(string(d.Content), nil)}, nil, nil
		}), nil
	})
	w, res, _ := e.startWorker(worker.Options{Chunkers: registrytest.With(held)})
	// One batch: the first is held in the processor, the others wait.
	var seqs []uint64
	for i := range 3 {
		seqs = append(seqs, e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("held/%d.md", i),
			Chunker: "held", Content: []byte("# Held\n\ntext")}, ""))
	}
	testutil.WaitFor(t, time.Minute, "three in-progress acks of each waiting delivery", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, seq := range seqs[1:] {
			if inProgress[seq] < 3 {
				return false, fmt.Sprintf("in-progress acks by stream sequence: %v", inProgress)
			}
		}
		return true, ""
	})
	letGo()
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(res.finals()) == len(seqs) })
	for _, seq := range seqs {
		if r := res.finals()[seq]; r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
		}
	}
	if n := metricValue(t, w.Metrics().Redeliveries); n != 0 {
		t.Errorf("%v redeliveries, want 0", n)
	}
	if n := len(res.snapshot()); n != len(seqs) {
		t.Errorf("%d deliveries handled, want %d (each once)", n, len(seqs))
	}
}
