package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

const testModel = "test-model"

// batched starts a test embeddings server and a client running Run, with
// cfg's batching settings; retries do not wait.
func batched(t *testing.T, srvCfg embedtest.Config, mod func(*Config)) (*Client, *embedtest.Server) {
	t.Helper()
	srv := embedtest.Start(t, srvCfg)
	cfg := DefaultConfig()
	cfg.URL, cfg.Model = srv.URL(), testModel
	cfg.Linger = time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg, Options{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	testutil.WaitFor(t, time.Minute, "Run to start", func() bool { return c.running() != nil })
	return c, srv
}

// waitFor polls cond until it holds (the tests never assert on timing;
// the deadline only stops a broken test).
func queued(c *Client) int {
	b := c.running()
	if b == nil {
		return 0
	}
	return b.Queued("")
}

// call is one Embed call running in the background.
type call struct {
	texts []string
	vecs  [][]float32
	err   error
	done  chan struct{}
}

func start(ctx context.Context, c *Client, texts ...string) *call {
	cl := &call{texts: texts, done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		cl.vecs, cl.err = c.Embed(ctx, texts)
	}()
	return cl
}

// enqueue starts a call and waits until its inputs are queued, so calls
// queue in a known order.
func enqueue(t *testing.T, c *Client, texts ...string) *call {
	t.Helper()
	before := queued(c)
	cl := start(context.Background(), c, texts...)
	testutil.WaitFor(t, time.Minute, fmt.Sprintf("%d queued inputs", before+len(texts)), func() bool { return queued(c) == before+len(texts) })
	return cl
}

func (cl *call) wait(t *testing.T) {
	t.Helper()
	select {
	case <-cl.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Embed(%q) still waiting", cl.texts)
	}
}

// checkOwn asserts that the call got exactly the vectors of its texts, in
// order.
func (cl *call) checkOwn(t *testing.T) {
	t.Helper()
	cl.wait(t)
	if cl.err != nil {
		t.Fatalf("Embed(%q) = %v", cl.texts, cl.err)
	}
	if len(cl.vecs) != len(cl.texts) {
		t.Fatalf("Embed(%q) = %d vectors", cl.texts, len(cl.vecs))
	}
	for i, text := range cl.texts {
		if !slices.Equal(cl.vecs[i], embedtest.Vector(testModel, text, 8)) {
			t.Fatalf("Embed(%q): vector %d is not the vector of %q", cl.texts, i, text)
		}
	}
}

// block sends one call and holds its request at the server, so the
// following calls queue behind the only request slot; the returned
// function releases it.
func block(t *testing.T, c *Client, srv *embedtest.Server) (*call, func()) {
	t.Helper()
	srv.Hold()
	x := start(context.Background(), c, "blocker")
	testutil.WaitFor(t, time.Minute, "the blocking request", func() bool { return srv.InFlight() == 1 })
	return x, srv.Release
}

func sizes(reqs [][]string) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, len(r))
	}
	return out
}

// TestRunMixesDocuments: calls queued behind a busy endpoint share full
// requests, and each gets exactly its own vectors, in order.
func TestRunMixesDocuments(t *testing.T) {
	c, srv := batched(t, embedtest.Config{}, func(c *Config) { c.Batch, c.Concurrency = 8, 1 })
	x, release := block(t, c, srv)
	var calls []*call
	total := 0
	for d := range 20 {
		var texts []string
		for i := range 1 + d%5 {
			texts = append(texts, fmt.Sprintf("document %d, chunk %d", d, i))
		}
		total += len(texts)
		calls = append(calls, enqueue(t, c, texts...))
	}
	release()
	x.checkOwn(t)
	for _, cl := range calls {
		cl.checkOwn(t)
	}
	reqs := srv.Requests()[1:]
	if got := sizes(reqs); len(got) != (total+7)/8 || slices.Max(got) != 8 {
		t.Errorf("request sizes %v for %d inputs, want full requests of 8", got, total)
	}
	mixed := 0
	for _, r := range reqs {
		docs := map[string]bool{}
		for _, in := range r {
			docs[strings.Split(in, ",")[0]] = true
		}
		if len(docs) > 1 {
			mixed++
		}
	}
	if mixed == 0 {
		t.Errorf("no request mixes documents: %q", reqs)
	}
}

// TestRunRefusedInputFailsOnlyItsCall: the endpoint refuses a request for
// one input (400): the request is split until that input is alone; only
// its call fails, permanently, naming the input; the other call gets its
// vectors.
func TestRunRefusedInputFailsOnlyItsCall(t *testing.T) {
	c, srv := batched(t, embedtest.Config{RejectMarker: "REJECT"}, func(c *Config) { c.Batch, c.Concurrency = 4, 1 })
	x, release := block(t, c, srv)
	a := enqueue(t, c, "a0", "a1")
	b := enqueue(t, c, "b0", "b1 REJECT")
	release()
	x.checkOwn(t)
	a.checkOwn(t)
	b.wait(t)
	if !fault.IsPermanent(b.err) || !errors.Is(b.err, ErrStatus) || !strings.Contains(b.err.Error(), "input 1") ||
		!strings.Contains(b.err.Error(), "cannot be embedded") {
		t.Fatalf("Embed(b) = %v, want a permanent ErrStatus naming input 1 with the server's reason", b.err)
	}
	want := [][]string{{"a0", "a1", "b0", "b1 REJECT"}, {"a0", "a1"}, {"b0", "b1 REJECT"}, {"b0"}, {"b1 REJECT"}}
	if got := srv.Requests()[1:]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %q, want %q (split in halves down to the refused input)", got, want)
	}
}

// TestRunFailedRequestFailsOnlyItsCalls: a request the endpoint keeps
// failing (503) is retried, then fails the calls that had inputs in it,
// as an outage of the embedder; a call in another request gets its
// vectors; a failed call sent again alone succeeds.
func TestRunFailedRequestFailsOnlyItsCalls(t *testing.T) {
	c, srv := batched(t, embedtest.Config{FailMarker: "CRASH"}, func(c *Config) { c.Batch, c.Concurrency = 4, 1 })
	x, release := block(t, c, srv)
	a := enqueue(t, c, "a0", "a1")
	b := enqueue(t, c, "b0", "b1 CRASH")
	d := enqueue(t, c, "d0", "d1", "d2", "d3")
	release()
	x.checkOwn(t)
	d.checkOwn(t)
	for _, cl := range []*call{a, b} {
		cl.wait(t)
		if dep, ok := fault.UnavailableDependency(cl.err); !ok || dep != Dependency || fault.IsPermanent(cl.err) {
			t.Fatalf("Embed(%q) = %v, want the embedder unavailable", cl.texts, cl.err)
		}
	}
	reqs := srv.Requests()[1:]
	failed := 0
	for _, r := range reqs {
		switch fmt.Sprint(r) {
		case "[a0 a1 b0 b1 CRASH]":
			failed++
		case "[d0 d1 d2 d3]":
		default:
			t.Errorf("unexpected request %q", r)
		}
	}
	if failed != 3 {
		t.Errorf("the failing request was sent %d times, want MaxAttempts = 3", failed)
	}
	start(context.Background(), c, "a0", "a1").checkOwn(t)
}

// TestRunCancelledWhileQueued: a call whose ctx ends while its inputs
// wait returns at once, and its inputs are never sent.
func TestRunCancelledWhileQueued(t *testing.T) {
	c, srv := batched(t, embedtest.Config{}, func(c *Config) { c.Concurrency = 1 })
	x, release := block(t, c, srv)
	ctx, cancel := context.WithCancel(context.Background())
	a := start(ctx, c, "a0", "a1")
	testutil.WaitFor(t, time.Minute, "queued inputs", func() bool { return queued(c) == 2 })
	cancel()
	a.wait(t)
	if !errors.Is(a.err, context.Canceled) || fault.IsUnavailable(a.err) {
		t.Fatalf("Embed after cancel = %v, want context.Canceled", a.err)
	}
	if n := queued(c); n != 0 {
		t.Fatalf("%d inputs still queued after their call left", n)
	}
	release()
	x.checkOwn(t)
	start(context.Background(), c, "b0").checkOwn(t)
	for _, r := range srv.Requests() {
		if slices.Contains(r, "a0") {
			t.Fatalf("the cancelled call's inputs were sent: %q", r)
		}
	}
}

// TestRunCancelledInFlight: when every call waiting for a request has
// left, the request is cancelled.
func TestRunCancelledInFlight(t *testing.T) {
	c, srv := batched(t, embedtest.Config{}, func(c *Config) { c.Batch, c.Concurrency = 2, 1 })
	srv.Hold()
	defer srv.Release()
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	a := start(ctxA, c, "a0")
	b := start(ctxB, c, "b0")
	testutil.WaitFor(t, time.Minute, "the shared request", func() bool { return srv.InFlight() == 1 })
	if got := srv.Requests(); len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("requests %q, want one with both inputs", got)
	}
	cancelA()
	a.wait(t)
	if srv.InFlight() != 1 {
		t.Fatal("the request was cancelled while b still waits for it")
	}
	cancelB()
	b.wait(t)
	if !errors.Is(a.err, context.Canceled) || !errors.Is(b.err, context.Canceled) {
		t.Fatalf("Embed = %v, %v; want context.Canceled", a.err, b.err)
	}
	testutil.WaitFor(t, time.Minute, "the request to be cancelled", func() bool { return srv.InFlight() == 0 })
}

// TestRunEndLeavesNobodyWaiting: when Run ends, calls queued or in a
// request send their texts themselves and get their vectors; Run does
// not wait for them.
func TestRunEndLeavesNobodyWaiting(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Config{})
	cfg := DefaultConfig()
	cfg.URL, cfg.Model, cfg.Concurrency, cfg.Batch, cfg.Linger = srv.URL(), testModel, 1, 4, time.Millisecond
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	testutil.WaitFor(t, time.Minute, "Run to start", func() bool { return c.running() != nil })
	x, release := block(t, c, srv)
	a := enqueue(t, c, "a0", "a1")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	release()
	x.checkOwn(t)
	a.checkOwn(t)
}

func TestRunTwice(t *testing.T) {
	c, _ := batched(t, embedtest.Config{}, nil)
	if err := c.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Run = %v, want ErrRunning", err)
	}
}

// TestConcurrencyCap: however many calls run, at most Concurrency
// requests are in flight, with or without Run, so a server capped there
// never throttles.
func TestConcurrencyCap(t *testing.T) {
	for _, run := range []bool{false, true} {
		t.Run(fmt.Sprintf("run=%v", run), func(t *testing.T) {
			srvCfg := embedtest.Config{MaxConcurrent: 2, Fixed: time.Millisecond}
			var c *Client
			var srv *embedtest.Server
			if run {
				c, srv = batched(t, srvCfg, func(c *Config) { c.Concurrency, c.Batch = 2, 3 })
			} else {
				srv = embedtest.Start(t, srvCfg)
				cfg := DefaultConfig()
				cfg.URL, cfg.Model, cfg.Concurrency, cfg.Batch = srv.URL(), testModel, 2, 3
				c = must(New(cfg, Options{}))
			}
			var wg sync.WaitGroup
			for d := range 16 {
				wg.Go(func() {
					cl := start(context.Background(), c, fmt.Sprintf("d%d-0", d), fmt.Sprintf("d%d-1", d))
					cl.checkOwn(t)
				})
			}
			wg.Wait()
			if st := srv.Stats(); st.Throttled != 0 || st.MaxInFlight > 2 {
				t.Fatalf("stats %+v, want at most 2 requests at once and none throttled", st)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestBatchBytes: a request holds at most BatchBytes bytes of text; a
// longer input goes alone.
func TestBatchBytes(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Config{})
	cfg := DefaultConfig()
	cfg.URL, cfg.Model, cfg.Batch, cfg.BatchBytes = srv.URL(), testModel, 10, 10
	c := must(New(cfg, Options{}))
	cl := start(context.Background(), c, "aaaa", "bbbb", "cccc", "dddddddddddd", "eeee")
	cl.checkOwn(t)
	if got := fmt.Sprint(sizes(srv.Requests())); got != "[2 1 1 1]" {
		t.Fatalf("request sizes %s, want [2 1 1 1]", got)
	}
}

// TestMetrics: inputs, tokens (from the answers' usage), reused inputs,
// request sizes and latencies are counted per model.
func TestMetrics(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Config{Usage: true, RejectMarker: "REJECT"})
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	cfg := DefaultConfig()
	cfg.URL, cfg.Model, cfg.Batch = srv.URL(), testModel, 2
	c := must(New(cfg, Options{Metrics: m}))
	texts := []string{"one two three", "four", "five six"}
	start(context.Background(), c, texts...).checkOwn(t)
	if _, err := c.Embed(context.Background(), []string{"REJECT me"}); !fault.IsPermanent(err) {
		t.Fatalf("Embed = %v, want permanent", err)
	}
	c.Reused(4)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"inputs", value(t, m.Inputs.WithLabelValues(testModel)), 3},
		{"tokens", value(t, m.Tokens.WithLabelValues(testModel)), 6},
		{"reused", value(t, m.Reused.WithLabelValues(testModel)), 4},
		{"requests 200", value(t, m.Requests.WithLabelValues(testModel, "200")), 2},
		{"requests 400", value(t, m.Requests.WithLabelValues(testModel, "400")), 1},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	h := histogram(t, m.RequestInputs.WithLabelValues(testModel).(prometheus.Metric))
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 4 || h.GetBucket()[0].GetCumulativeCount() != 2 || h.GetBucket()[1].GetCumulativeCount() != 3 {
		t.Errorf("request_inputs = %v, want 3 requests of 2, 1 and 1 inputs", h)
	}
	if h := histogram(t, m.RequestSeconds.WithLabelValues(testModel).(prometheus.Metric)); h.GetSampleCount() != 3 {
		t.Errorf("request_seconds counted %d requests, want 3", h.GetSampleCount())
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 6 {
		t.Errorf("registry holds %d metric families, want 6", len(families))
	}
}

func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

func histogram(t *testing.T, m prometheus.Metric) *dto.Histogram {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetHistogram()
}
