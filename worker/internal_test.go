package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/tracing"
)

// fakeMsg is a jetstream.Msg that records what the worker did with it.
type fakeMsg struct {
	mu          sync.Mutex
	inProgress  []time.Time
	naks        []time.Duration
	acks, terms int
	meta        jetstream.MsgMetadata
}

func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) { return &m.meta, nil }
func (m *fakeMsg) Data() []byte                              { return nil }
func (m *fakeMsg) Headers() nats.Header                      { return nats.Header{} }
func (m *fakeMsg) Subject() string                           { return "ingest.docs" }
func (m *fakeMsg) Reply() string                             { return "" }
func (m *fakeMsg) Ack() error                                { m.mu.Lock(); m.acks++; m.mu.Unlock(); return nil }
func (m *fakeMsg) DoubleAck(context.Context) error           { return m.Ack() }
func (m *fakeMsg) Nak() error                                { return m.NakWithDelay(0) }
func (m *fakeMsg) NakWithDelay(d time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.naks = append(m.naks, d)
	return nil
}
func (m *fakeMsg) InProgress() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inProgress = append(m.inProgress, time.Now())
	return nil
}
func (m *fakeMsg) Term() error                 { m.mu.Lock(); m.terms++; m.mu.Unlock(); return nil }
func (m *fakeMsg) TermWithReason(string) error { return m.Term() }

var _ jetstream.Msg = (*fakeMsg)(nil)

func testWorker() *Worker {
	cfg := DefaultConfig()
	cfg.AckWait = 3 * time.Second
	cfg.MaxDeliver = 5
	m := NewMetrics()
	log := slog.New(slog.DiscardHandler)
	chunkers, err := registry.Default().Resolver(registry.Defaults{})
	if err != nil {
		panic(err)
	}
	w := &Worker{cfg: cfg, log: log, m: m}
	w.out = w.newOutage(nopSink{})
	w.fleet = &fleet{log: log, cfg: &w.cfg, out: w.out, own: chunkers}
	w.fleet.chunkers.Store(chunkers)
	w.pull = &puller{cfg: &w.cfg, log: log, m: m, out: w.out, waiting: map[*task]struct{}{}}
	w.proc = &processor{cfg: &w.cfg, log: log, m: m, fleet: w.fleet, tracer: tracing.Tracer(nil),
		backoff:  Backoff{Base: time.Second, Max: 8 * time.Second, Rand: func() float64 { return 0.5 }},
		ackSlots: make(chan struct{}, maxAckConfirmations)}
	return w
}

// TestHeartbeat: in-progress acks every AckWait/3 while work runs, none
// after it ends (stop), none after the worker's context ends.
func TestHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := testWorker()
		msg := &fakeMsg{}
		start := time.Now()
		hb := w.proc.heartbeat(context.Background(), msg)
		time.Sleep(10*time.Second + time.Millisecond)
		hb.stop()
		time.Sleep(5 * time.Second)
		if len(msg.inProgress) != 10 {
			t.Fatalf("%d in-progress acks in 10s with AckWait 3s, want 10", len(msg.inProgress))
		}
		for i, at := range msg.inProgress {
			if want := time.Duration(i+1) * time.Second; at.Sub(start) != want {
				t.Errorf("in-progress ack %d at %v, want %v", i, at.Sub(start), want)
			}
		}
		hb.stop() // a second stop changes nothing

		msg = &fakeMsg{}
		ctx, cancel := context.WithCancel(context.Background())
		hb = w.proc.heartbeat(ctx, msg)
		time.Sleep(3*time.Second + time.Millisecond)
		cancel()
		time.Sleep(5 * time.Second)
		hb.stop()
		if len(msg.inProgress) != 3 {
			t.Errorf("%d in-progress acks in 3s and 5s after the context ended, want 3", len(msg.inProgress))
		}
	})
}

// TestSettleRetries: a transient failure is NAKed with the backoff of its
// delivery count; success is acked.
func TestSettleRetries(t *testing.T) {
	w := testWorker()
	for _, tc := range []struct {
		delivery uint64
		err      error
		want     time.Duration
	}{
		{1, errors.New("down"), 750 * time.Millisecond},
		{2, errors.New("down"), 1500 * time.Millisecond},
		{4, errors.New("down"), 6 * time.Second},
		{3, fault.RetryAfter(errors.New("slow down"), 20*time.Second), 20 * time.Second},
	} {
		msg := &fakeMsg{}
		r := w.settle(context.Background(), &task{msg: msg}, Result{Delivery: tc.delivery}, verdict{err: tc.err})
		out, cause := r.Outcome, r.Cause
		if out != OutcomeRetried || cause != fault.CauseTransient || len(msg.naks) != 1 || msg.naks[0] != tc.want || msg.terms+msg.acks != 0 {
			t.Errorf("delivery %d, %v: outcome %s (%s), naks %v; want retried after %v", tc.delivery, tc.err, out, cause, msg.naks, tc.want)
		}
	}
	msg := &fakeMsg{}
	out := w.settle(context.Background(), &task{msg: msg}, Result{Delivery: 5}, verdict{outcome: OutcomeAcked}).Outcome
	w.proc.acks.Wait()
	if out != OutcomeAcked || msg.acks != 1 {
		t.Errorf("success: outcome %s, acks %d", out, msg.acks)
	}
	// Shutdown: a cancelled context NAKs at once for another worker.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msg = &fakeMsg{}
	r := w.settle(ctx, &task{msg: msg}, Result{Delivery: 1}, verdict{err: context.Canceled})
	out, cause := r.Outcome, r.Cause
	if out != OutcomeAbandoned || cause != fault.CauseShutdown || len(msg.naks) != 1 || msg.naks[0] != 0 {
		t.Errorf("shutdown: outcome %s (%s), naks %v", out, cause, msg.naks)
	}
}

// unansweredAckMsg is a fakeMsg whose ack confirmation never comes, as
// after a server restart that forgot the delivery.
type unansweredAckMsg struct{ fakeMsg }

func (m *unansweredAckMsg) DoubleAck(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestAckNeverBlocksAProcessor: settle returns at once even when the
// server does not answer acks (no fake time passes); each confirmation is
// awaited in the background for exactly AckWait/3, at most 5 s; past
// maxAckConfirmations pending ones, acks go out unconfirmed.
func TestAckNeverBlocksAProcessor(t *testing.T) {
	for _, tc := range []struct {
		ackWait, confirmWait time.Duration
	}{
		{3 * time.Second, time.Second},
		{time.Minute, 5 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			w := testWorker()
			w.cfg.AckWait = tc.ackWait
			start := time.Now()
			msgs := make([]*unansweredAckMsg, maxAckConfirmations+3)
			for i := range msgs {
				msgs[i] = &unansweredAckMsg{}
				if out := w.settle(context.Background(), &task{msg: msgs[i]}, Result{Delivery: 1}, verdict{outcome: OutcomeAcked}).Outcome; out != OutcomeAcked {
					t.Fatalf("outcome %s, want acked", out)
				}
			}
			if d := time.Since(start); d != 0 {
				t.Fatalf("settling %d unanswered acks took %v, want no wait", len(msgs), d)
			}
			// The confirmations are all pending; the last three acks went
			// out without one.
			for i, m := range msgs {
				if want := i >= maxAckConfirmations; (m.acks == 1) != want {
					t.Errorf("ack %d sent unconfirmed = %v, want %v", i, m.acks == 1, want)
				}
			}
			w.proc.acks.Wait()
			if d := time.Since(start); d != tc.confirmWait {
				t.Errorf("AckWait %v: confirmations given up after %v, want %v", tc.ackWait, d, tc.confirmWait)
			}
			var n dto.Metric
			if err := w.m.AcksUnconfirmed.Write(&n); err != nil || n.GetCounter().GetValue() != float64(len(msgs)) {
				t.Errorf("acks_unconfirmed_total = %v (%v), want %d", n.GetCounter().GetValue(), err, len(msgs))
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	prevMax := time.Duration(0)
	for n := uint64(1); n <= 70; n++ {
		full := min(b.Base<<min(n-1, 20), b.Max)
		for range 50 {
			d := b.Delay(n, nil)
			if d < full/2 || d > full {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
		if full < prevMax {
			t.Fatalf("cap decreased at delivery %d", n)
		}
		prevMax = full
	}
	huge := Backoff{Base: time.Second, Max: 1<<63 - 1, Rand: func() float64 { return 0 }}
	if d := huge.Delay(200, nil); d <= 0 {
		t.Errorf("Delay with a huge max overflowed: %v", d)
	}
	if d := b.Delay(1, fault.RetryAfter(errors.New("x"), 5*time.Second)); d != 5*time.Second {
		t.Errorf("RetryAfter floor: %v, want 5s", d)
	}
}

func TestSafeChunkRecoversPanic(t *testing.T) {
	_, err := safeChunk(context.Background(), chunkerFunc(func() { panic("boom") }), chunkingDoc(), func(chunking.Chunk) bool { return true })
	var p *panicError
	if !errors.As(err, &p) || p.Error() != "chunker panic: boom" || len(p.stack) == 0 {
		t.Errorf("safeChunk = %v, want a recovered panic with a stack", err)
	}
}

func chunkerFunc(f func()) chunking.ChunkerFunc {
	return func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		f()
		return nil, nil, nil
	}
}

func chunkingDoc() chunking.Document { return chunking.Document{Path: "a.md", Content: []byte("x")} }
