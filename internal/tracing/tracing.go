package tracing

import (
	"context"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of chunkstream's tracers.
const Scope = "github.com/chunkstream/chunkstream"

// The attribute keys of chunkstream's spans.
const (
	DocID     = attribute.Key("chunkstream.doc_id")
	Subject   = attribute.Key("messaging.destination.name")
	StreamSeq = attribute.Key("chunkstream.stream_seq")
	IngestSeq = attribute.Key("chunkstream.ingest_seq")
	Delivery  = attribute.Key("chunkstream.delivery")
	Outcome   = attribute.Key("chunkstream.outcome")
	Cause     = attribute.Key("chunkstream.cause")
	Chunker   = attribute.Key("chunkstream.chunker")
	Chunks    = attribute.Key("chunkstream.chunks")
	Bytes     = attribute.Key("chunkstream.bytes")
	Op        = attribute.Key("chunkstream.op")
	Inputs    = attribute.Key("chunkstream.inputs")
)

// Tracer returns tp's tracer for chunkstream, or the no-op tracer when tp
// is nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Scope)
}

// Header adapts a NATS message's headers (nats.Header) to
// propagation.TextMapCarrier. NATS header names are case-sensitive; Get
// also finds a name written in another case ("Traceparent", as an HTTP
// library would write it).
type Header map[string][]string

// Get returns the first value of key.
func (h Header) Get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range h {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set sets key to value, replacing a value under another case of key.
func (h Header) Set(key, value string) {
	for k := range h {
		if k != key && strings.EqualFold(k, key) {
			delete(h, k)
		}
	}
	h[key] = []string{value}
}

// Keys returns the header names.
func (h Header) Keys() []string { return slices.Collect(maps.Keys(h)) }

// Inject writes the trace context of ctx's span into h ("traceparent",
// and "tracestate" when it is not empty). It writes nothing when ctx
// holds no valid span context.
func Inject(ctx context.Context, h map[string][]string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	// A tracestate copied from another message must not outlive its
	// traceparent.
	for k := range h {
		if strings.EqualFold(k, "tracestate") {
			delete(h, k)
		}
	}
	propagation.TraceContext{}.Inject(ctx, Header(h))
}

// Extract returns ctx with the remote span context that h carries, or ctx
// itself when h carries none (or a malformed one).
func Extract(ctx context.Context, h map[string][]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, Header(h))
}

// SpanContext returns the span context h carries (invalid when none).
func SpanContext(h map[string][]string) trace.SpanContext {
	return trace.SpanContextFromContext(Extract(context.Background(), h))
}

// Fail marks span failed with err: the error is recorded as an event and
// the status set to Error. A nil err leaves the span alone.
func Fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
