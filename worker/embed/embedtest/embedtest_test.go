package embedtest_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

type answer struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func post(t *testing.T, s *embedtest.Server, body string) (*http.Response, answer) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/v1/embeddings", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("decode answer: %v", err)
	}
	return resp, a
}

func TestVector(t *testing.T) {
	v := embedtest.Vector("m", "hello", 16)
	if !slices.Equal(v, embedtest.Vector("m", "hello", 16)) {
		t.Fatal("Vector is not deterministic")
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("|Vector|² = %v, want 1", norm)
	}
	if slices.Equal(v, embedtest.Vector("m", "hello!", 16)) || slices.Equal(v, embedtest.Vector("m2", "hello", 16)) {
		t.Error("Vector does not depend on the text and the model")
	}
}

// TestAnswers: vectors in input order, usage when configured, the
// markers' failures, and the counts.
func TestAnswers(t *testing.T) {
	s := embedtest.Start(t, embedtest.Config{Dims: 4, Usage: true, FailMarker: "CRASH", RejectMarker: "REJECT"})
	resp, a := post(t, s, `{"model":"m","input":["one two","three"]}`)
	if resp.StatusCode != 200 || len(a.Data) != 2 {
		t.Fatalf("status %d, %d vectors", resp.StatusCode, len(a.Data))
	}
	for i, text := range []string{"one two", "three"} {
		if a.Data[i].Index != i || !slices.Equal(a.Data[i].Embedding, embedtest.Vector("m", text, 4)) {
			t.Errorf("data[%d] = %v, want the vector of %q", i, a.Data[i], text)
		}
	}
	if a.Usage == nil || a.Usage.PromptTokens != 3 || a.Usage.TotalTokens != 3 {
		t.Errorf("usage = %+v, want 3 tokens", a.Usage)
	}
	_, a = post(t, s, `{"model":"m","input":["x"],"dimensions":2}`)
	if len(a.Data[0].Embedding) != 2 {
		t.Errorf("dimensions 2 gave %d", len(a.Data[0].Embedding))
	}
	resp, a = post(t, s, `{"model":"m","input":["fine","CRASH here"]}`)
	if resp.StatusCode != 503 || a.Error == nil {
		t.Errorf("a request with the fail marker: status %d, error %+v; want 503", resp.StatusCode, a.Error)
	}
	resp, a = post(t, s, `{"model":"m","input":["fine","REJECT me"]}`)
	if resp.StatusCode != 400 || a.Error == nil || !strings.Contains(a.Error.Message, "input 1") {
		t.Errorf("a request with the reject marker: status %d, error %+v; want 400 naming input 1", resp.StatusCode, a.Error)
	}
	want := embedtest.Stats{Requests: 4, Answered: 2, Inputs: 3, Tokens: 4, Failed: 1, Rejected: 1, MaxInFlight: 1}
	if got := s.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	if got := s.Requests(); len(got) != 4 || !slices.Equal(got[0], []string{"one two", "three"}) {
		t.Errorf("Requests = %q", got)
	}
	s2 := embedtest.Start(t, embedtest.Config{})
	if _, a := post(t, s2, `{"model":"m","input":["x"]}`); a.Usage != nil || len(a.Data[0].Embedding) != 8 {
		t.Errorf("default server: usage %+v, %d dimensions; want none and 8", a.Usage, len(a.Data[0].Embedding))
	}
}

// TestDeploymentFaults: SetStatus answers every request with its status
// until it is cleared; SetDims changes the size of later vectors.
func TestDeploymentFaults(t *testing.T) {
	s := embedtest.Start(t, embedtest.Config{Dims: 4})
	s.SetStatus(http.StatusUnauthorized)
	if resp, a := post(t, s, `{"model":"m","input":["x"]}`); resp.StatusCode != 401 || a.Error == nil {
		t.Errorf("with status 401 set: status %d, error %+v; want 401", resp.StatusCode, a.Error)
	}
	s.SetStatus(0)
	s.SetDims(6)
	if resp, a := post(t, s, `{"model":"m","input":["x"]}`); resp.StatusCode != 200 || len(a.Data[0].Embedding) != 6 {
		t.Errorf("after SetDims(6): status %d, %d dimensions; want 200 and 6", resp.StatusCode, len(a.Data))
	}
	if got := s.Stats(); got.Refused != 1 || got.Answered != 1 {
		t.Errorf("Stats = %+v, want 1 refused and 1 answered", got)
	}
}

// TestCap: past MaxConcurrent requests in flight the server answers 429
// with a Retry-After.
func TestCap(t *testing.T) {
	s := embedtest.Start(t, embedtest.Config{MaxConcurrent: 1, RetryAfter: 3})
	s.Hold()
	first := make(chan int)
	go func() {
		resp, err := http.Post(s.URL()+"/v1/embeddings", "application/json", strings.NewReader(`{"model":"m","input":["a"]}`))
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	testutil.WaitFor(t, 10*time.Second, "the first request in flight", func() bool { return s.InFlight() == 1 })
	resp, a := post(t, s, `{"model":"m","input":["b"]}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || a.Error == nil {
		t.Errorf("second request: status %d, Retry-After %q; want 429 and 3", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	s.Release()
	if code := <-first; code != 200 {
		t.Errorf("held request: status %d", code)
	}
	if st := s.Stats(); st.Throttled != 1 || st.Answered != 1 {
		t.Errorf("Stats = %+v, want 1 throttled and 1 answered", st)
	}
}

// TestTokens: a text's tokens are its fields, as strings.Fields splits
// them.
func TestTokens(t *testing.T) {
	for _, text := range []string{
		"", " ", "one", "  two words ", "tab\tand\nnewline\r\n", "no\u00a0break\u2003em space",
		"\xff bad \xfe utf-8", "# Title\n\n- item *one*\n- item two", "a\u3000b", "trailing\v",
	} {
		if got, want := embedtest.Tokens(text), len(strings.Fields(text)); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", text, got, want)
		}
	}
}
