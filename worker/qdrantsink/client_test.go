package qdrantsink

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/codes"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestCallsCarryTraceparent: with tracing on, every call of a Write
// carries the delivery's trace as W3C traceparent metadata (Qdrant's audit
// log records it); with tracing off, none does.
func TestCallsCarryTraceparent(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "delivery")
	defer span.End()
	traceID := span.SpanContext().TraceID().String()

	for _, seq := range []uint64{1, 2} { // a first version and a newer one: every kind of call
		doc, chunks := sinktest.Version("t.md", seq, "alpha", "beta")
		records.Begin(doc.ID, doc.Seq)
		srv.ResetCalls()
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatal(err)
		}
		calls := srv.Calls()
		if len(calls) == 0 {
			t.Fatal("no calls recorded")
		}
		for _, c := range calls {
			if !strings.HasPrefix(c.Traceparent, "00-"+traceID+"-") {
				t.Errorf("version %d: %s carried traceparent %q, want the delivery's trace %s", seq, c.Method, c.Traceparent, traceID)
			}
		}
	}
	doc, chunks := sinktest.Version("t.md", 3, "gamma")
	records.Begin(doc.ID, doc.Seq)
	srv.ResetCalls()
	if err := s.Write(context.Background(), doc, chunks); err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.Calls() {
		if c.Traceparent != "" {
			t.Errorf("without tracing %s carried traceparent %q", c.Method, c.Traceparent)
		}
	}
}

// TestClientDoesNotRetry: a call refused as unavailable reaches Qdrant
// once: the go-client's retries are off, and the failure is an outage the
// worker holds and probes (docs/operations.md), not a request tried again within
// the Write.
func TestClientDoesNotRetry(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	doc, chunks := sinktest.Version("r.md", 1, "alpha")
	records.Begin(doc.ID, doc.Seq)
	srv.ResetCalls()
	srv.FailNext(1, codes.Unavailable)
	err := s.Write(context.Background(), doc, chunks)
	if dep, ok := fault.UnavailableDependency(err); !ok || dep != DependencyQdrant {
		t.Fatalf("Write = %v, want an outage of Qdrant", err)
	}
	if calls := srv.Calls(); len(calls) != 1 || calls[0].Err != codes.Unavailable {
		t.Fatalf("calls %+v, want the one refused call and no retry", calls)
	}
}
