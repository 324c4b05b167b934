package embed

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/internal/tracing"
)

// The names of the client's spans.
const (
	// SpanEmbed is one Embed call, in the trace of its document, linked to
	// the spans of the requests that carried its inputs.
	SpanEmbed = "chunkstream.embed"
	// SpanEmbedRequest is one request shared by the calls batched into it
	// (Run), the root of a trace of its own, linked to each call's span.
	SpanEmbedRequest = "chunkstream.embed_request"
)

// tracer starts the client's spans; on is false without a provider, when
// the links of shared requests are not built.
type tracer struct {
	t  trace.Tracer
	on bool
}

func newTracer(tp trace.TracerProvider) tracer {
	return tracer{t: tracing.Tracer(tp), on: tp != nil}
}

// call starts the span of an Embed call of n inputs.
func (t tracer) call(ctx context.Context, n int) (context.Context, trace.Span) {
	ctx, span := t.t.Start(ctx, SpanEmbed)
	if span.IsRecording() {
		span.SetAttributes(tracing.Inputs.Int(n))
	}
	return ctx, span
}

// request starts the span of a shared request holding the inputs of b,
// linked both ways with the spans of the calls they come from.
func (t tracer) request(ctx context.Context, b *batch.Batch[input]) trace.Span {
	if !t.on {
		return trace.SpanFromContext(context.Background())
	}
	var links []trace.Link
	var calls []trace.Span
	for k, in := range b.Items {
		if k > 0 && b.Call(k) == b.Call(k-1) { // a call's inputs are adjacent
			continue
		}
		if sc := in.span.SpanContext(); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
			calls = append(calls, in.span)
		}
	}
	_, span := t.t.Start(ctx, SpanEmbedRequest, trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(tracing.Inputs.Int(len(b.Items)))
	}
	for _, call := range calls {
		call.AddLink(trace.Link{SpanContext: span.SpanContext()})
	}
	return span
}

// endSpan ends span, failed when err is not nil.
func endSpan(span trace.Span, err error) {
	tracing.Fail(span, err)
	span.End()
}
