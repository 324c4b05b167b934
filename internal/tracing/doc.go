// Package tracing carries OpenTelemetry trace context across NATS
// messages and gives the worker and the producer their tracers and the
// attribute keys an operator filters on.
//
// The wire format is fixed: W3C Trace Context, the "traceparent" and
// "tracestate" headers of a NATS message (docs/wire.md). It is part of the
// message contract, read by consumers written in any language, so it does
// not follow OTEL_PROPAGATORS. Inject and Extract use
// propagation.TraceContext, which holds no state: nothing here is global.
//
// A nil trace.TracerProvider means tracing is off: Tracer returns the
// OpenTelemetry no-op tracer, whose spans record nothing but still carry
// the span context they were started under, so a request's trace context
// passes through a worker that does not trace to its chunk records and
// dead letters. The provider itself is set up by the commands, from the
// OTEL_* environment variables (cmd/internal/otelenv).
//
// Log lines written with a context (slog's …Context methods) through a
// handler wrapped by LogHandler carry the trace_id and span_id of the
// span in that context.
package tracing
