package qdrantsink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// outageConfig scales the retry budget down (MaxDeliver 3, backoff from
// 50 ms: a message would be dead-lettered within half a second of
// failures); a Qdrant request times out after 300 ms.
func outageConfig(c *worker.Config, q *qdrantsink.Config) {
	c.MaxDeliver = 3
	c.BackoffBase = 50 * time.Millisecond
	c.BackoffMax = 200 * time.Millisecond
	c.SinkProbeBase = 50 * time.Millisecond
	c.SinkProbeMax = 200 * time.Millisecond
	q.Timeout = 300 * time.Millisecond
}

func (e *e2e) consumerInfo() *jetstream.ConsumerInfo {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := e.top.Consumer.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

func (e *e2e) deadLetters() uint64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := e.js.Stream(ctx, e.cfg.DLQStream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

// outageDuring runs down for long, with the worker asserted not ready and
// not fetching the whole time, and returns when it is over.
func (e *e2e) outageDuring(long time.Duration) {
	e.t.Helper()
	before := e.consumerInfo()
	for end := time.Now().Add(long); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if e.w.Ready() {
			e.t.Fatal("Ready() = true during the outage")
		}
	}
	during := e.consumerInfo()
	if during.NumPending != before.NumPending {
		e.t.Errorf("requests fetched during the outage: pending went from %d to %d", before.NumPending, during.NumPending)
	}
	inHand := max(2*e.cfg.Concurrency, 4) + 2*e.cfg.Concurrency
	if during.NumAckPending > inHand || during.NumRedelivered != 0 {
		e.t.Errorf("during the outage: %d requests in hand (want at most %d), %d redelivered (want 0)",
			during.NumAckPending, inHand, during.NumRedelivered)
	}
}

// publishBacklog publishes n documents and returns their contents by
// stream sequence.
func (e *e2e) publishBacklog(n int) map[uint64][2]string {
	e.t.Helper()
	out := map[uint64][2]string{}
	for i := range n {
		id := fmt.Sprintf("backlog/%03d.md", i)
		content := doc(fmt.Sprintf("Backlog %d", i), 1+i%4)
		out[e.publish(messages.IngestRequest{ID: id, Content: []byte(content)})] = [2]string{id, content}
	}
	return out
}

// expectAllOnFirstDelivery waits for every request of the backlog and
// requires it acked on its first delivery, stored, and no dead letter.
func (e *e2e) expectAllOnFirstDelivery(backlog map[uint64][2]string) {
	e.t.Helper()
	seqs := make([]uint64, 0, len(backlog))
	for s := range backlog {
		seqs = append(seqs, s)
	}
	for s, r := range e.wait(seqs...) {
		if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
			e.t.Errorf("seq %d: %s on delivery %d (%v), want acked on the first", s, r.Outcome, r.Delivery, r.Err)
		}
	}
	for s, d := range backlog {
		e.expectDoc(d[0], d[1], s)
	}
	if n := e.deadLetters(); n != 0 {
		e.t.Errorf("%d dead letters, want 0", n)
	}
}

// TestEndToEndQdrantHang: Qdrant stops answering (every call waits, as a
// stopped process) for many times the whole retry budget, with a backlog
// waiting: the requests in hand are held, nothing more is fetched, the
// worker is not ready, and once Qdrant answers again every document is
// stored on its first delivery, with no dead letter. A permanent error
// afterwards still dead-letters at once.
func TestEndToEndQdrantHang(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2EWith(t, e2eOptions{config: outageConfig})
	e.qd.Hang()
	backlog := e.publishBacklog(40)
	testutil.WaitFor(t, 20*time.Second, "probes of the hung Qdrant", func() bool { return e.failedProbes() >= 3 })
	e.outageDuring(3 * time.Second) // the retry budget is ~0.35 s
	e.qd.Release()
	e.expectAllOnFirstDelivery(backlog)
	waitReady(t, e.w)

	// Invalid data is still the message's fault: dead letter at once.
	e.qd.FailNext(1, codes.InvalidArgument)
	s := e.publish(messages.IngestRequest{ID: "bad.md", Content: []byte(doc("Bad", 1))})
	if r := e.wait(s)[s]; r.Outcome != worker.OutcomePermanent || r.Delivery != 1 {
		t.Errorf("InvalidArgument: %s on delivery %d, want a permanent dead letter on the first", r.Outcome, r.Delivery)
	}
}

func waitReady(t *testing.T, w *worker.Worker) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, "ready after the outage", w.Ready)
}

// embeddingsServer is an OpenAI-compatible embeddings endpoint returning
// 4-dimensional vectors, or 503 while down is set.
type embeddingsServer struct {
	*httptest.Server
	down     atomic.Bool
	refused  atomic.Int64 // requests answered 503
	answered atomic.Int64
}

func newEmbeddingsServer(t *testing.T) *embeddingsServer {
	es := &embeddingsServer{}
	es.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if es.down.Load() {
			es.refused.Add(1)
			http.Error(w, `{"error":{"message":"model loading"}}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, in := range req.Input {
			resp.Data = append(resp.Data, item{Embedding: []float32{float32(len(in)), 1, 2, 3}, Index: i})
		}
		es.answered.Add(1)
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(es.Close)
	return es
}

// TestEndToEndEmbedderDown: the embeddings endpoint answers 503 for many
// times the retry budget: the worker holds its requests, is not ready and
// probes the embedder; when it answers again every document is stored,
// with its dense vectors, on its first delivery. The same holds whether
// each document sends its own requests or Run gathers them across
// documents.
func TestEndToEndEmbedderDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched=%v", batched), func(t *testing.T) {
			es := newEmbeddingsServer(t)
			client, err := embed.New(embed.Config{URL: es.URL, Model: "test", Batch: 8, MaxInputChars: 8000, Linger: time.Millisecond},
				embed.Options{MaxAttempts: 2, BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if batched {
				runEmbedder(t, client)
			}
			e := newE2EWith(t, e2eOptions{config: outageConfig, embedder: client})
			es.down.Store(true)
			backlog := e.publishBacklog(30)
			// The writes' two tries, then probes.
			testutil.WaitFor(t, 20*time.Second, "probes of the embedder", func() bool { return es.refused.Load() >= 6 })
			e.outageDuring(2 * time.Second)
			if up := metricValue(t, e.w.Metrics().SinkUp.WithLabelValues(qdrantsink.DependencyEmbedder)); up != 0 {
				t.Errorf("sink_up{dependency=embedder} = %v during the outage, want 0", up)
			}
			es.down.Store(false)
			e.expectAllOnFirstDelivery(backlog)
			for _, p := range e.qd.Points("chunks") {
				if v := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorDense]; len(v.GetDense().GetData()) != 4 {
					t.Fatalf("point %s has no 4-dimensional dense vector: %v", p.GetId().GetUuid(), v)
				}
			}
			waitReady(t, e.w)
			if up := metricValue(t, e.w.Metrics().SinkUp.WithLabelValues(qdrantsink.DependencyEmbedder)); up != 1 {
				t.Errorf("sink_up{dependency=embedder} = %v after the outage, want 1", up)
			}
		})
	}
}

// metricValue reads a gauge or counter.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}
