package embed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

// TestTraceSharedRequest embeds the inputs of two documents, each in its
// own trace, in one shared request, and checks the links: the request's
// span (a trace of its own) links to both calls' spans, and each call's
// span links back to it.
func TestTraceSharedRequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	srv := embedtest.Start(t, embedtest.Config{})
	cfg := DefaultConfig()
	cfg.URL, cfg.Model = srv.URL(), testModel
	cfg.Batch, cfg.Linger = 4, 10*time.Second // the request leaves when both calls' 4 inputs are in
	c, err := New(cfg, Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	testutil.WaitFor(t, time.Minute, "Run to start", func() bool { return c.running() != nil })

	tracer := tp.Tracer("test")
	var wg sync.WaitGroup
	docs := make([]trace.SpanContext, 2)
	for i := range docs {
		dctx, doc := tracer.Start(context.Background(), fmt.Sprintf("document %d", i))
		docs[i] = doc.SpanContext()
		wg.Go(func() {
			defer doc.End()
			if _, err := c.Embed(dctx, []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var calls, requests []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		switch s.Name {
		case SpanEmbed:
			calls = append(calls, s)
		case SpanEmbedRequest:
			requests = append(requests, s)
		}
	}
	if len(calls) != 2 || len(requests) != 1 {
		t.Fatalf("%d call spans and %d request spans, want 2 and 1", len(calls), len(requests))
	}
	req := requests[0]
	if req.Parent.IsValid() || len(req.Links) != 2 {
		t.Fatalf("request span: parent %v, links %v; want a root linked to both calls", req.Parent, req.Links)
	}
	for _, call := range calls {
		if call.SpanContext.TraceID() != call.Parent.TraceID() || (call.Parent.SpanID() != docs[0].SpanID() && call.Parent.SpanID() != docs[1].SpanID()) {
			t.Errorf("call span's parent %v, want a document span", call.Parent)
		}
		if len(call.Links) != 1 || call.Links[0].SpanContext.SpanID() != req.SpanContext.SpanID() {
			t.Errorf("call span links %v, want the request span %v", call.Links, req.SpanContext)
		}
		linked := false
		for _, l := range req.Links {
			linked = linked || l.SpanContext.SpanID() == call.SpanContext.SpanID()
		}
		if !linked {
			t.Errorf("request span does not link to the call span %v", call.SpanContext)
		}
	}
}
