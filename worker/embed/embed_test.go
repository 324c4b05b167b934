package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// fakeServer speaks the OpenAI embeddings wire format. Its vector for a
// text is [len(text), index-in-request, 1, ...] of size dims.
type fakeServer struct {
	mu       sync.Mutex
	dims     int
	requests [][]string
	fail     []func(w http.ResponseWriter) bool // consumed one per request
	reverse  bool                               // answer data in reverse order
	auth     string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	f.auth = r.Header.Get("Authorization")
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.requests = append(f.requests, req.Input)
	if len(f.fail) > 0 {
		h := f.fail[0]
		f.fail = f.fail[1:]
		if h(w) {
			return
		}
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var data []item
	for i, in := range req.Input {
		v := make([]float32, f.dims)
		v[0] = float32(len(in))
		if f.dims > 1 {
			v[1] = float32(i)
		}
		data = append(data, item{"embedding", v, i})
	}
	if f.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func status(code int, retryAfter string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d from the fake","type":"x"}}`, code)
		return true
	}
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func setup(t *testing.T, f *fakeServer, mod func(*Config)) (*Client, *sleeps) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.URL = srv.URL
	cfg.Model = "test-model"
	cfg.Batch = 3
	if mod != nil {
		mod(&cfg)
	}
	sl := &sleeps{}
	c, err := New(cfg, Options{Sleep: sl.sleep, MaxAttempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

func TestBatchingAndOrder(t *testing.T) {
	f := &fakeServer{dims: 4, reverse: true}
	c, _ := setup(t, f, func(c *Config) { c.APIKey = "k" })
	ctx := context.Background()
	if d, err := c.Probe(ctx); err != nil || d != 4 {
		t.Fatalf("Probe = %d, %v; want 4", d, err)
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"}
	vecs, err := c.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if int(v[0]) != len(texts[i]) || int(v[1]) != i%3 {
			t.Errorf("vector %d = %v, want [%d %d ...]", i, v, len(texts[i]), i%3)
		}
	}
	var sizes []int
	for _, r := range f.requests[1:] { // after the probe
		sizes = append(sizes, len(r))
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Errorf("request sizes = %v, want [3 3 1]", sizes)
	}
	if f.auth != "Bearer k" {
		t.Errorf("Authorization = %q", f.auth)
	}
}

func TestRetryAfter429(t *testing.T) {
	f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(429, "7"), status(429, "")}}
	c, sl := setup(t, f, nil)
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(f.requests))
	}
	if fmt.Sprint(sl.d) != "[7s 1s]" {
		t.Fatalf("waits = %v, want [7s 1s] (Retry-After, then the second backoff step)", sl.d)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	if d := retryAfter(time.Unix(1000, 0).UTC().Format(http.TimeFormat), time.Unix(990, 0)); d != 10*time.Second {
		t.Fatalf("retryAfter(date) = %v, want 10s", d)
	}
	if d := retryAfter("soon", time.Now()); d != 0 {
		t.Fatalf("retryAfter(soon) = %v", d)
	}
}

func TestServerErrors(t *testing.T) {
	t.Run("500s then success", func(t *testing.T) {
		f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(500, ""), status(503, ""), status(502, "")}}
		c, sl := setup(t, f, nil)
		if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(sl.d) != "[500ms 1s 2s]" {
			t.Fatalf("waits = %v, want exponential [500ms 1s 2s]", sl.d)
		}
	})
	t.Run("500s forever", func(t *testing.T) {
		f := &fakeServer{dims: 2}
		for range 10 {
			f.fail = append(f.fail, status(500, ""))
		}
		c, _ := setup(t, f, nil)
		_, err := c.Embed(context.Background(), []string{"x"})
		if dep, ok := fault.UnavailableDependency(err); !ok || dep != Dependency || fault.IsPermanent(err) || !errors.Is(err, ErrStatus) {
			t.Fatalf("Embed = %v, want an ErrStatus marking the embedder unavailable", err)
		}
		if len(f.requests) != 4 {
			t.Fatalf("%d requests, want MaxAttempts = 4", len(f.requests))
		}
	})
	t.Run("429 with a long Retry-After goes to the worker", func(t *testing.T) {
		f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(429, "600")}}
		c, _ := setup(t, f, nil)
		_, err := c.Embed(context.Background(), []string{"x"})
		if d, ok := fault.RetryDelay(err); !ok || d != 10*time.Minute || !fault.IsUnavailable(err) {
			t.Fatalf("Embed = %v (delay %v), want fault.RetryAfter 10m on an unavailable embedder", err, d)
		}
	})
	t.Run("400 is permanent", func(t *testing.T) {
		f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(400, "")}}
		c, _ := setup(t, f, nil)
		_, err := c.Embed(context.Background(), []string{"x"})
		if !fault.IsPermanent(err) || !strings.Contains(err.Error(), "status 400 from the fake") {
			t.Fatalf("Embed = %v, want permanent with the server's message", err)
		}
		if len(f.requests) != 1 {
			t.Fatalf("%d requests, want 1 (no retry)", len(f.requests))
		}
	})
	// The deployment's faults (a bad key, a wrong URL or model) are
	// outages of the embedder, not retried within the call: the worker
	// pauses and probes instead of dead-lettering the backlog.
	for _, code := range []int{401, 403, 404} {
		t.Run(fmt.Sprintf("%d is an outage without retry", code), func(t *testing.T) {
			f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(code, "")}}
			c, sl := setup(t, f, nil)
			_, err := c.Embed(context.Background(), []string{"x"})
			if dep, ok := fault.UnavailableDependency(err); !ok || dep != Dependency || fault.IsPermanent(err) || len(f.requests) != 1 || len(sl.d) != 0 {
				t.Fatalf("Embed = %v after %d requests and waits %v, want an outage of %q after 1", err, len(f.requests), sl.d, Dependency)
			}
		})
	}
	t.Run("an unrecognised 4xx is transient", func(t *testing.T) {
		f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(409, "")}}
		c, _ := setup(t, f, nil)
		_, err := c.Embed(context.Background(), []string{"x"})
		if err == nil || fault.IsPermanent(err) || fault.IsUnavailable(err) || len(f.requests) != 1 {
			t.Fatalf("Embed = %v after %d requests, want transient (not an outage) after 1", err, len(f.requests))
		}
	})
	t.Run("cancelled context stops retries", func(t *testing.T) {
		f := &fakeServer{dims: 2, fail: []func(http.ResponseWriter) bool{status(503, "")}}
		srv := httptest.NewServer(f)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		c, err := New(Config{URL: srv.URL, Model: "m", Batch: 1, MaxInputChars: 10}, Options{Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) || fault.IsUnavailable(err) {
			t.Fatalf("Embed = %v, want context.Canceled, not an outage", err)
		}
	})
}

// TestProbe: a probe is one request, never retried; a refused one marks
// the embedder unavailable; a later probe must find the recorded size.
func TestProbe(t *testing.T) {
	f := &fakeServer{dims: 3, fail: []func(http.ResponseWriter) bool{status(503, "")}}
	c, sl := setup(t, f, nil)
	ctx := context.Background()
	_, err := c.Probe(ctx)
	if dep, ok := fault.UnavailableDependency(err); !ok || dep != Dependency || len(f.requests) != 1 || len(sl.d) != 0 {
		t.Fatalf("Probe = %v after %d requests and waits %v, want one try marking %q unavailable", err, len(f.requests), sl.d, Dependency)
	}
	if d, err := c.Probe(ctx); err != nil || d != 3 || c.Dimensions() != 3 {
		t.Fatalf("Probe = %d, %v (Dimensions %d), want 3", d, err, c.Dimensions())
	}
	f.mu.Lock()
	f.dims = 5
	f.mu.Unlock()
	if _, err := c.Probe(ctx); !errors.Is(err, ErrDimension) || fault.IsPermanent(err) || !fault.IsUnavailable(err) || c.Dimensions() != 3 {
		t.Fatalf("Probe after the model changed = %v (Dimensions %d), want ErrDimension as an outage, keeping 3", err, c.Dimensions())
	}
}

func TestWrongDimension(t *testing.T) {
	f := &fakeServer{dims: 4}
	c, _ := setup(t, f, func(c *Config) { c.Dimensions = 8 })
	_, err := c.Probe(context.Background())
	if !errors.Is(err, ErrDimension) || !fault.IsPermanent(err) {
		t.Fatalf("Probe = %v, want permanent ErrDimension", err)
	}
	// The server changes model after the probe.
	f2 := &fakeServer{dims: 4}
	c2, _ := setup(t, f2, nil)
	if _, err := c2.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	f2.mu.Lock()
	f2.dims = 5
	f2.mu.Unlock()
	if _, err := c2.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrDimension) || fault.IsPermanent(err) || !fault.IsUnavailable(err) {
		t.Fatalf("Embed after a model change = %v, want ErrDimension as an outage of the embedder", err)
	}
}

func TestOverLongInputRejectedBeforeSending(t *testing.T) {
	f := &fakeServer{dims: 2}
	c, _ := setup(t, f, func(c *Config) { c.MaxInputChars = 5 })
	_, err := c.Embed(context.Background(), []string{"ok", "ééééé", "toolong"})
	if !errors.Is(err, ErrInputTooLong) || !fault.IsPermanent(err) {
		t.Fatalf("Embed = %v, want permanent ErrInputTooLong", err)
	}
	if len(f.requests) != 0 {
		t.Fatalf("%d requests sent, want none", len(f.requests))
	}
	// Five two-byte characters are within a five-character limit.
	if _, err := c.Embed(context.Background(), []string{"ééééé"}); err != nil {
		t.Fatal(err)
	}
}

// TestOverTokenLimitRejectedBeforeSending: with a token limit, an input
// over it in tokens of the encoding is a permanent error and nothing is
// sent; an input within it (even when long in characters) goes.
func TestOverTokenLimitRejectedBeforeSending(t *testing.T) {
	f := &fakeServer{dims: 2}
	c, _ := setup(t, f, func(c *Config) { c.MaxInputTokens, c.Tokenizer = 4, "o200k_base" })
	// "hello world" is 2 tokens; "日本語のテキストです" is more than 4.
	_, err := c.Embed(context.Background(), []string{"hello world", "日本語のテキストです"})
	if !errors.Is(err, ErrInputTooLong) || !fault.IsPermanent(err) || !strings.Contains(err.Error(), "input 1") {
		t.Fatalf("Embed = %v, want permanent ErrInputTooLong for input 1", err)
	}
	if len(f.requests) != 0 {
		t.Fatalf("%d requests sent, want none", len(f.requests))
	}
	// 29 characters, 4 tokens: within the limit.
	if _, err := c.Embed(context.Background(), []string{"internationalization is long"}); err != nil {
		t.Fatal(err)
	}
}

func TestBadResponses(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not json", "oops"},
		{"too few", `{"data":[]}`},
		{"repeated index", `{"data":[{"embedding":[1],"index":0},{"embedding":[1],"index":0}]}`},
		{"index out of range", `{"data":[{"embedding":[1],"index":5},{"embedding":[1],"index":1}]}`},
		{"empty embedding", `{"data":[{"embedding":[],"index":0},{"embedding":[1],"index":1}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			c, err := New(Config{URL: srv.URL + "/v1", Model: "m", Batch: 8, MaxInputChars: 10}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, ErrResponse) {
				t.Fatalf("Embed = %v, want ErrResponse", err)
			}
		})
	}
}

func TestEndpointAndValidate(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:11434":                 "http://h:11434/v1/embeddings",
		"http://h/v1":                    "http://h/v1/embeddings",
		"https://h/v1/":                  "https://h/v1/embeddings",
		"https://h/openai/v1/embeddings": "https://h/openai/v1/embeddings",
		"http://h/api/v1/embeddings?x=1": "http://h/api/v1/embeddings?x=1",
	} {
		if got, err := endpoint(in); err != nil || got != want {
			t.Errorf("endpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []Config{
		{URL: "ftp://h", Model: "m", Batch: 1, MaxInputChars: 1},
		{URL: "http://h", Batch: 1, MaxInputChars: 1},
		{URL: "http://h", Model: "m", Batch: 0, MaxInputChars: 1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 0},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Dimensions: -1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, MaxInputTokens: -1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, MaxInputTokens: 10, Tokenizer: "gpt2"},
		{URL: "http://h", Model: "m\xff", Batch: 1, MaxInputChars: 1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, BatchBytes: -1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Linger: -time.Millisecond},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Linger: MaxLinger + 1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Concurrency: -1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Concurrency: MaxConcurrency + 1},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Timeout: -time.Second},
		{URL: "http://h", Model: "m", Batch: 1, MaxInputChars: 1, Timeout: MaxTimeout + 1},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
	c := Config{URL: "http://h", Model: "m", APIKey: "sekrit", Batch: 1, MaxInputChars: 1}
	if s := fmt.Sprint(c.LogValue()); strings.Contains(s, "sekrit") {
		t.Errorf("LogValue leaks the key: %s", s)
	}
	// Zero BatchBytes, Concurrency and Timeout take the defaults.
	client, err := New(c, Options{})
	if err != nil || client.cfg.BatchBytes != DefaultBatchBytes || cap(client.slots) != DefaultConcurrency || client.cfg.Timeout != DefaultTimeout {
		t.Errorf("New(%+v) = %+v, %v; want the default batch bytes, concurrency and timeout", c, client.cfg, err)
	}
}

// TestTimeoutIsAnOutage: an endpoint that accepts a request and never
// answers is an outage of the embedder after Config.Timeout, in one try:
// a hang is not tried again within the call (each try would wait as
// long), and the probe is bounded the same way. The time is fake
// (testing/synctest, the endpoint reached over in-memory connections):
// the timeout passes only once the request is at the endpoint and
// everything else waits, however busy the machine is.
func TestTimeoutIsAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var requests atomic.Int32
		srv := testutil.StartPipeHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client give up
			<-r.Context().Done()
		}))
		const timeout = 50 * time.Millisecond
		c, err := New(Config{URL: srv.URL, Model: "m", Batch: 8, MaxInputChars: 100, Timeout: timeout}, Options{HTTPClient: srv.Client})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = c.Embed(context.Background(), []string{"x"})
		if dep, ok := fault.UnavailableDependency(err); !ok || dep != Dependency || fault.IsPermanent(err) ||
			!strings.Contains(err.Error(), "CHUNKSTREAM_EMBED_TIMEOUT") || requests.Load() != 1 {
			t.Fatalf("Embed of a hung endpoint = %v after %d requests, want one outage naming CHUNKSTREAM_EMBED_TIMEOUT", err, requests.Load())
		}
		if d := time.Since(start); d != timeout {
			t.Errorf("Embed of a hung endpoint gave up after %v of fake time, want the timeout, %v", d, timeout)
		}
		start = time.Now()
		if _, err := c.Probe(context.Background()); !fault.IsUnavailable(err) || requests.Load() != 2 {
			t.Fatalf("Probe of a hung endpoint = %v after %d requests, want an outage after one more", err, requests.Load())
		}
		if d := time.Since(start); d != timeout {
			t.Errorf("Probe of a hung endpoint gave up after %v of fake time, want the timeout, %v", d, timeout)
		}
		// The caller's own end is not the endpoint's fault.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		c.cfg.Timeout = time.Hour
		if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) || fault.IsUnavailable(err) || requests.Load() != 3 {
			t.Fatalf("Embed with the caller's deadline = %v after %d requests, want context.DeadlineExceeded after one more, not an outage", err, requests.Load())
		}
	})
}
