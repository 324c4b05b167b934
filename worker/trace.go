package worker

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/tracing"
)

// The names of the worker's spans (docs/operations.md#tracing).
const (
	SpanDeliver      = "chunkstream.deliver"       // one delivery, from its fetch to its settlement
	SpanFetchWait    = "chunkstream.fetch_wait"    // from the fetch to a processor taking the delivery
	SpanDecode       = "chunkstream.decode"        // the request decoded and validated
	SpanContentLoad  = "chunkstream.content_load"  // the document read from the Object Store
	SpanRecordStart  = "chunkstream.record_start"  // step 1: the document record moved to this version
	SpanChunk        = "chunkstream.chunk"         // the chunker run
	SpanSinkWrite    = "chunkstream.sink_write"    // steps 2–4: the sink's write
	SpanRecordFinish = "chunkstream.record_finish" // step 5: the record marked done
	SpanAck          = "chunkstream.ack"           // the ack, until the server confirmed it
	SpanDeadLetter   = "chunkstream.dead_letter"   // the dead letter stored and the failure recorded
)

// startDelivery starts the span of one delivery of t, a child of the
// trace context its request carries, dated from the fetch.
func (p *processor) startDelivery(ctx context.Context, t *task, streamSeq, delivery uint64) (context.Context, trace.Span) {
	ctx = tracing.Extract(ctx, t.msg.Headers())
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	if !t.fetchedAt.IsZero() {
		opts = append(opts, trace.WithTimestamp(t.fetchedAt))
	}
	ctx, span := p.tracer.Start(ctx, SpanDeliver, opts...)
	if span.IsRecording() {
		span.SetAttributes(tracing.Subject.String(t.msg.Subject()), tracing.StreamSeq.Int64(int64(streamSeq)),
			tracing.Delivery.Int64(int64(delivery)))
		if !t.fetchedAt.IsZero() {
			_, wait := p.tracer.Start(ctx, SpanFetchWait, trace.WithTimestamp(t.fetchedAt))
			wait.End()
		}
	}
	return ctx, span
}

// endDelivery records the delivery's result on its span and ends it.
func endDelivery(span trace.Span, res Result) {
	if span.IsRecording() {
		span.SetAttributes(tracing.DocID.String(res.DocID), tracing.IngestSeq.Int64(int64(res.IngestSeq)),
			tracing.Outcome.String(string(res.Outcome)), tracing.Chunks.Int(res.Chunks), tracing.Bytes.Int(res.Bytes))
		if res.Cause != "" {
			span.SetAttributes(tracing.Cause.String(string(res.Cause)))
		}
		tracing.Fail(span, res.Err)
	}
	span.End()
}

// step starts the span of one step of a delivery.
func (p *processor) step(ctx context.Context, name string) (context.Context, trace.Span) {
	return p.tracer.Start(ctx, name)
}

// endStep ends a step's span, failed when err is not nil.
func endStep(span trace.Span, err error) {
	tracing.Fail(span, err)
	span.End()
}

// traceID returns the trace id of ctx's span, for the document record
// (messages.DocRecord.TraceID); "" when ctx holds none.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
