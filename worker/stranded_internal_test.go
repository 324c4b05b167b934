package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
)

// TestStrandedRequestsDeadLettered: requests that reached MaxDeliver
// while no worker listened for the advisories stay in INGEST below the
// consumer's ack floor, never delivered again. A worker's sweep finds
// them; while the dead letter stream is full it pauses (no request is
// lost or dropped), and once there is room each is dead-lettered once,
// as max_deliveries, with its record, and leaves INGEST. A request an
// advisory named is dead-lettered without waiting for a second sighting.
func TestStrandedRequestsDeadLettered(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, ns.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.MaxDeliver = 1
	cfg.AckWait = 200 * time.Millisecond
	cfg.SinkProbeBase, cfg.SinkProbeMax = 20*time.Millisecond, 100*time.Millisecond
	top, err := Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	for i := range n {
		data, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: fmt.Sprintf("stranded/%d.md", i), Content: []byte("# x\n\ny")}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "ingest.docs", data); err != nil {
			t.Fatal(err)
		}
	}
	// One delivery each (MaxDeliver 1), never acked, and nobody listens
	// for the advisories.
	batch, err := top.Consumer.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for range batch.Messages() {
		got++
	}
	if got != n {
		t.Fatalf("fetched %d requests, want %d", got, n)
	}
	testutil.WaitFor(t, time.Minute, "the requests past MaxDeliver", func() (bool, string) {
		info, err := top.Consumer.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.Delivered.Stream == n && info.NumAckPending == 0, fmt.Sprintf("delivered %d, ack pending %d", info.Delivered.Stream, info.NumAckPending)
	})

	// The dead letter stream is full.
	dlq, err := js.Stream(ctx, cfg.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := dlq.CachedInfo().Config
	sc.MaxBytes, sc.Discard = 1, jetstream.DiscardNew
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	w, err := New(nc, js, top, Options{Config: cfg, Sink: nopSink{}})
	if err != nil {
		t.Fatal(err)
	}
	w.sweepEvery = 50 * time.Millisecond
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	testutil.WaitFor(t, time.Minute, "the full dead letter stream noticed", func() bool { return w.out.isDown() })
	// An advisory for the last request while the stream is full: it is
	// remembered, not lost.
	adv, _ := json.Marshal(maxDeliveriesAdvisory{Stream: cfg.IngestStream, Consumer: cfg.Consumer, StreamSeq: n, Deliveries: 1})
	if err := nc.Publish(AdvisorySubject(cfg.IngestStream, cfg.Consumer), adv); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, time.Minute, "the advisory remembered", func() bool {
		w.strandedMu.Lock()
		defer w.strandedMu.Unlock()
		_, ok := w.stranded[n]
		return ok
	})
	testutil.WaitFor(t, time.Minute, "failed storage probes", func() bool {
		var m dto.Metric
		if err := w.m.SinkProbes.WithLabelValues(DependencyJetStream, "failed").Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue() >= 10
	})
	if info, _ := top.Ingest.Info(ctx); info.State.Msgs != n || w.Ready() {
		t.Fatalf("while the dead letter stream is full: INGEST holds %d requests (want %d), ready %v (want false)", info.State.Msgs, n, w.Ready())
	}

	sc.MaxBytes = -1
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() (bool, string) {
		info, err := top.Ingest.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == 0, fmt.Sprintf("%d requests left", info.State.Msgs)
	})
	info, err := dlq.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != n {
		t.Errorf("DLQ holds %d dead letters, want %d", info.State.Msgs, n)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := dlq.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		dl, err := messages.ParseDeadLetter(m.Header)
		if err != nil || dl.Cause != fault.CauseMaxDeliveries || dl.Kind != messages.KindExhausted {
			t.Errorf("dead letter %d = %+v, %v; want exhausted, max_deliveries", seq, dl, err)
		}
	}
	for i := range n {
		id := fmt.Sprintf("stranded/%d.md", i)
		rec, _, ok, err := w.records.Get(ctx, id)
		if err != nil || !ok || rec.State != messages.StateDeadLettered || rec.LastFailure.Cause != fault.CauseMaxDeliveries {
			t.Errorf("record of %s = %+v, %v, %v; want dead_lettered, max_deliveries", id, rec, ok, err)
		}
	}
	var m dto.Metric
	if err := w.m.DeadLetters.WithLabelValues(string(messages.KindExhausted), string(fault.CauseMaxDeliveries)).Write(&m); err != nil || m.GetCounter().GetValue() != n {
		t.Errorf("dead letters counted %v, want %d", m.GetCounter().GetValue(), n)
	}
}
