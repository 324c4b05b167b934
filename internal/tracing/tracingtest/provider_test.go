package tracingtest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the cleanups and errors of what it
// is given, for checking a helper's own checks.
type recorder struct {
	*testing.T
	cleanups []func()
	errors   []string
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}
func (r *recorder) Failed() bool { return len(r.errors) > 0 }

// end runs the cleanups as a test's end does, last registered first.
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestNewProviderFindsOpenSpans(t *testing.T) {
	for _, tt := range []struct {
		name     string
		end      bool
		exported int
	}{{"ended", true, 1}, {"left open", false, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{T: t}
			tp, exp := NewProvider(r)
			_, span := tp.Tracer("test").Start(context.Background(), "chunkstream.deliver")
			if tt.end {
				span.End()
			}
			if got := len(exp.GetSpans()); got != tt.exported {
				t.Errorf("%d spans exported, want %d", got, tt.exported)
			}
			r.end()
			if open := !tt.end; open != (len(r.errors) == 1 && strings.Contains(r.errors[0], "chunkstream.deliver")) || len(r.errors) > 1 {
				t.Errorf("span ended = %v: errors %q, want one naming the open span exactly when it is open", tt.end, r.errors)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	given := func(k string) (string, bool) {
		if k == "NATS_URL" {
			return "nats://x", true
		}
		return "", false
	}
	t.Setenv(Env, "")
	if _, ok := Lookup(given)("OTEL_EXPORTER_OTLP_ENDPOINT"); ok {
		t.Errorf("Lookup without %s=1 sets the endpoint", Env)
	}
	t.Setenv(Env, "1")
	lookup := Lookup(given)
	if v, _ := lookup("NATS_URL"); v != "nats://x" {
		t.Errorf("Lookup(NATS_URL) = %q, want the given environment's", v)
	}
	if v, ok := Lookup(func(k string) (string, bool) { return "http://mine:4318", true })("OTEL_EXPORTER_OTLP_ENDPOINT"); !ok || v != "http://mine:4318" {
		t.Errorf("Lookup replaced an endpoint the environment sets: %q", v)
	}
	url, ok := lookup("OTEL_EXPORTER_OTLP_ENDPOINT")
	if !ok {
		t.Fatalf("Lookup with %s=1 sets no endpoint", Env)
	}
	for path, want := range map[string]int{"/v1/traces": http.StatusOK, "/v1/metrics": http.StatusNotFound} {
		resp, err := http.Post(url+path, "application/x-protobuf", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
