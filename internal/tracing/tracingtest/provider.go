package tracingtest

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Env is the variable that turns tracing on in the tests (On).
const Env = "CHUNKSTREAM_TEST_TRACING"

// On reports whether CHUNKSTREAM_TEST_TRACING=1 asks the tests to trace.
func On() bool { return os.Getenv(Env) == "1" }

// Provider returns the tracer provider a test gives the worker and the
// producer: nil (tracing off) unless On, else NewProvider's.
func Provider(tb testing.TB) trace.TracerProvider {
	if !On() {
		return nil
	}
	tp, _ := NewProvider(tb)
	return tp
}

// NewProvider returns an SDK tracer provider exporting synchronously to the
// in-memory exporter it returns too, checked for open spans when the test
// ends, after the cleanups registered later (package documentation).
func NewProvider(tb testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	open := &openSpans{spans: map[trace.SpanID]string{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(open), sdktrace.WithSyncer(exp))
	tb.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			tb.Errorf("tracer provider shutdown: %v", err)
		}
		if names := open.names(); len(names) > 0 && !tb.Failed() {
			tb.Errorf("%d spans started and never ended: %q", len(names), names)
		}
	})
	return tp, exp
}

// openSpans is a span processor that keeps the spans started and not yet
// ended.
type openSpans struct {
	mu    sync.Mutex
	spans map[trace.SpanID]string
}

func (o *openSpans) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.spans[s.SpanContext().SpanID()] = s.Name()
}

func (o *openSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.spans, s.SpanContext().SpanID())
}

func (o *openSpans) Shutdown(context.Context) error   { return nil }
func (o *openSpans) ForceFlush(context.Context) error { return nil }

func (o *openSpans) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Values(o.spans))
}

// Lookup returns lookup (a command's environment in a test), and when On,
// one that also answers OTEL_EXPORTER_OTLP_ENDPOINT, unless lookup sets
// it, with the endpoint of the package documentation.
func Lookup(lookup func(string) (string, bool)) func(string) (string, bool) {
	if !On() {
		return lookup
	}
	return func(k string) (string, bool) {
		if v, ok := lookup(k); ok || k != "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return v, ok
		}
		return sinkURL(), true
	}
}

// sinkURL returns the base URL of Lookup's OTLP/HTTP endpoint, started by
// its first use and left to end with the test binary. It answers every
// POST to /v1/traces with an empty (successful) export response.
var sinkURL = sync.OnceValue(func() string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	return httptest.NewServer(mux).URL
})
