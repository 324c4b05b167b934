package producer

import (
	"cmp"
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
)

// The names of the producer's spans (docs/operations.md#tracing).
const (
	// SpanSend is one request sent, from its message to its PubAck: the
	// root of the document's trace, which the workers continue.
	SpanSend = "chunkstream.send"
	// SpanReplay is one dead letter replayed, linked to the trace of the
	// delivery that failed; the replayed request continues its trace.
	SpanReplay = "chunkstream.replay"
)

// tracedMessage is message, traced by a send span the caller ends.
func (p *Producer) tracedMessage(ctx context.Context, req *messages.IngestRequest, msgID, subject string) (*nats.Msg, trace.Span, error) {
	m, err := p.message(req, msgID, subject)
	if err != nil {
		return nil, nil, err
	}
	return m, p.startSend(ctx, req, m), nil
}

// startSend starts req's send span and writes its context into m's headers.
func (p *Producer) startSend(ctx context.Context, req *messages.IngestRequest, m *nats.Msg) trace.Span {
	ctx, span := p.tracer.Start(ctx, SpanSend, trace.WithSpanKind(trace.SpanKindProducer))
	if span.IsRecording() {
		op := cmp.Or(req.Op, messages.OpUpsert) // upsert or delete
		span.SetAttributes(tracing.DocID.String(req.ID), tracing.Subject.String(m.Subject),
			tracing.Op.String(string(op)), tracing.Bytes.Int(len(req.Content)))
	}
	tracing.Inject(ctx, m.Header)
	return span
}

// endSend ends a send span (nil: none) with the PubAck's sequence or err.
func endSend(span trace.Span, ack *jetstream.PubAck, err error) {
	if span == nil {
		return
	}
	if ack != nil && span.IsRecording() {
		span.SetAttributes(tracing.StreamSeq.Int64(int64(ack.Sequence)))
	}
	tracing.Fail(span, err)
	span.End()
}

// startReplay starts the span of the replay of e, linked to the span
// context e carries, and writes its trace context into out's headers in
// place of the one copied from e.
func (d *DLQ) startReplay(ctx context.Context, e DeadLetterEntry, id string, out *nats.Msg) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	if sc := tracing.SpanContext(e.header); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx, span := d.tracer.Start(ctx, SpanReplay, opts...)
	if span.IsRecording() {
		span.SetAttributes(tracing.DocID.String(id), tracing.Subject.String(out.Subject),
			attribute.Int64("chunkstream.dead_letter_seq", int64(e.Seq)))
	}
	tracing.Inject(ctx, out.Header)
	return ctx, span
}
