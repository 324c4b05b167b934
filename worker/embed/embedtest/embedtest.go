// Package embedtest is an OpenAI-compatible embeddings server for tests
// and benchmarks (POST /v1/embeddings), modelled on a real one: latency
// per request and per input, a cap on concurrent requests, usage,
// vectors derived from the model and the text alone (Vector), and
// injected failures (Config's markers, Hold, SetStatus, SetDims). Every
// request is recorded (Requests) and counted (Stats).
package embedtest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Config describes the modelled server; the zero value answers at once,
// without a cap, with 8-dimensional vectors.
type Config struct {
	// Dims is the vector size (default 8); a request's "dimensions" wins.
	Dims int
	// Fixed and PerInput make the latency of a request of n inputs
	// Fixed + n·PerInput.
	Fixed, PerInput time.Duration
	// MaxConcurrent caps the requests served at once (0: no cap); a
	// request past the cap is answered 429 at once with a Retry-After.
	MaxConcurrent int
	// RetryAfter is the Retry-After of a 429, in seconds (default 1).
	RetryAfter int
	// Usage adds "usage" to every answer.
	Usage bool
	// FailMarker, when set, makes a request with an input containing it
	// fail with 503.
	FailMarker string
	// RejectMarker, when set, makes a request with an input containing it
	// fail with 400, naming the first such input.
	RejectMarker string
}

// Stats count what the server did.
type Stats struct {
	// Requests is the number of requests received (answered or not).
	Requests int
	// Answered counts requests answered with vectors, Inputs their inputs.
	Answered, Inputs int
	// Tokens is the number of tokens of the embedded inputs (Tokens).
	Tokens int
	// Throttled, Failed and Rejected count the answers 429, 503 and 400;
	// Refused those with the status of SetStatus.
	Throttled, Failed, Rejected, Refused int
	// MaxInFlight is the most requests served at once.
	MaxInFlight int
}

// Server is a running test embeddings server. It is safe for concurrent
// use.
type Server struct {
	cfg Config
	srv *httptest.Server

	mu       sync.Mutex
	inFlight int
	held     chan struct{} // non-nil while held; closed by Release
	status   int           // answer every request with it (SetStatus); 0: none
	stats    Stats
	requests [][]string
}

// Start starts a server on a loopback port and closes it when the test
// ends.
func Start(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	if cfg.Dims <= 0 {
		cfg.Dims = 8
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 1
	}
	s := &Server{cfg: cfg}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// URL is the server's root URL (the client appends /v1/embeddings).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server, releasing held requests first.
func (s *Server) Close() {
	s.Release()
	s.srv.Close()
}

// Hold makes every request that arrives from now on wait, before it is
// answered, until Release (it counts as in flight meanwhile).
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(chan struct{})
	}
}

// Release ends a Hold.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		close(s.held)
		s.held = nil
	}
}

// SetStatus makes every request that arrives from now on be answered
// with code and an error body, at once, until SetStatus(0).
func (s *Server) SetStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = code
}

// SetDims makes the answers from now on carry vectors of n dimensions
// (a request's "dimensions" still wins).
func (s *Server) SetDims(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Dims = n
}

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// InFlight returns the number of requests being served (held ones too).
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Requests returns the inputs of every request received, in arrival
// order.
func (s *Server) Requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.requests...)
}

// Vector returns the unit vector the server answers for text under
// model: dims pseudo-random normal components seeded by the SHA-256 of
// the model and the text, scaled to length 1 (so it is unchanged by the
// normalization of a cosine collection, up to rounding).
func Vector(model, text string, dims int) []float32 {
	h := sha256.Sum256([]byte(model + "\x00" + text))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	v := make([]float32, dims)
	var norm float64
	x := make([]float64, dims)
	for i := range x {
		x[i] = r.NormFloat64()
		norm += x[i] * x[i]
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(x[i] / norm)
	}
	return v
}

// Tokens is the server's token count of a text: its whitespace-separated
// words.
func Tokens(text string) int { return len(strings.Fields(text)) }

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions"`
}

type datum struct {
	Object    string    `json:"object"`
	Embedding []float32 `json:"embedding"`
	Index     int       `json:"index"`
}

type usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

type answer struct {
	Object string  `json:"object"`
	Data   []datum `json:"data"`
	Model  string  `json:"model"`
	Usage  *usage  `json:"usage,omitempty"`
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "embedtest"}})
	_, _ = w.Write(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		fail(w, http.StatusNotFound, "not found: "+r.Method+" "+r.URL.Path)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	s.mu.Lock()
	s.stats.Requests++
	s.requests = append(s.requests, req.Input)
	if s.cfg.MaxConcurrent > 0 && s.inFlight >= s.cfg.MaxConcurrent {
		s.stats.Throttled++
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(s.cfg.RetryAfter))
		fail(w, http.StatusTooManyRequests, fmt.Sprintf("more than %d concurrent requests", s.cfg.MaxConcurrent))
		return
	}
	if code := s.status; code != 0 {
		s.stats.Refused++
		s.mu.Unlock()
		fail(w, code, fmt.Sprintf("refused with status %d", code))
		return
	}
	s.inFlight++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.inFlight)
	held := s.held
	dims := s.cfg.Dims
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	if d := s.cfg.Fixed + time.Duration(len(req.Input))*s.cfg.PerInput; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if len(req.Input) == 0 {
		s.count(func(st *Stats) { st.Rejected++ })
		fail(w, http.StatusBadRequest, "input is empty")
		return
	}
	for i, in := range req.Input {
		switch {
		case s.cfg.FailMarker != "" && strings.Contains(in, s.cfg.FailMarker):
			s.count(func(st *Stats) { st.Failed++ })
			fail(w, http.StatusServiceUnavailable, "the model crashed")
			return
		case s.cfg.RejectMarker != "" && strings.Contains(in, s.cfg.RejectMarker):
			s.count(func(st *Stats) { st.Rejected++ })
			fail(w, http.StatusBadRequest, fmt.Sprintf("input %d cannot be embedded", i))
			return
		}
	}
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	ans := answer{Object: "list", Model: req.Model, Data: make([]datum, len(req.Input))}
	tokens := 0
	for i, in := range req.Input {
		ans.Data[i] = datum{Object: "embedding", Embedding: Vector(req.Model, in, dims), Index: i}
		tokens += Tokens(in)
	}
	if s.cfg.Usage {
		ans.Usage = &usage{PromptTokens: tokens, TotalTokens: tokens}
	}
	s.count(func(st *Stats) {
		st.Answered++
		st.Inputs += len(req.Input)
		st.Tokens += tokens
	})
	body, err := json.Marshal(ans)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}
