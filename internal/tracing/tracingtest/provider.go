package tracingtest

import (
	"context"
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
// in-memory exporter it returns too. When the test ends (after the
// cleanups registered later, such as stopping a worker), the provider is
// shut down and, unless the test failed already, every span started must
// have ended.
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
	var out []string
	for _, n := range o.spans {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
