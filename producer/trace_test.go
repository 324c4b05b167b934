package producer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestTraceAcrossNATS sends a document with the producer and a request of
// another client carrying its own trace context through the real worker,
// all traced into the SDK's in-memory exporter, and replays the dead
// letter. The trace context crosses every NATS hop: producer → worker →
// chunk records; the other client's trace → worker → dead letter →
// replay (a link) → the replayed request.
func TestTraceAcrossNATS(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	records, err := e.nc.SubscribeSync(e.cfg.ChunksPrefix + ".>")
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := e.nc.SubscribeSync(e.cfg.DLQSubject)
	if err != nil {
		t.Fatal(err)
	}

	p := e.producer(Options{TracerProvider: tp})
	content := "# Title\n\nFirst paragraph.\n\n## Part\n\nSecond paragraph.\n"
	if _, err := p.Enqueue(ctx, Document{ID: "docs/good.md", Content: []byte(content)}); err != nil {
		t.Fatal(err)
	}
	// Another client's request, in a trace of its own, that the worker
	// dead-letters (its chunker does not exist).
	const otherTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	other := nats.NewMsg("ingest.docs")
	other.Header.Set("traceparent", "00-"+otherTrace+"-00f067aa0ba902b7-01")
	other.Header.Set(messages.HeaderMsgID, "other-client-1")
	if other.Data, err = messages.EncodeIngest(&messages.IngestRequest{V: messages.Version, ID: "docs/odd.md",
		Chunker: "no-such-chunker", Content: []byte("# Odd\n")}, messages.ContentTypeMsgpack); err != nil {
		t.Fatal(err)
	}
	if _, err := e.js.PublishMsg(ctx, other); err != nil {
		t.Fatal(err)
	}
	runTracedWorker(t, e, tp, 2)

	spans := func() tracetest.SpanStubs { return exp.GetSpans() }
	// The ack span ends when the server confirms the ack, after the result.
	testutil.WaitFor(t, 10*time.Second, "the ack span", func() bool { return len(named(spans(), worker.SpanAck)) == 1 })
	all := spans()

	// The producer's document: one trace rooted at its send span.
	send := one(t, all, SpanSend, "docs/good.md")
	if send.Parent.IsValid() {
		t.Errorf("send span has parent %v, want a root", send.Parent)
	}
	if got := attr(send, tracing.Op); got.AsString() != "upsert" {
		t.Errorf("send span op = %v, want upsert", got.AsString())
	}
	deliver := one(t, all, worker.SpanDeliver, "docs/good.md")
	if deliver.Parent.SpanID() != send.SpanContext.SpanID() || deliver.SpanContext.TraceID() != send.SpanContext.TraceID() {
		t.Errorf("deliver span's parent = %v, want the send span %v", deliver.Parent, send.SpanContext)
	}
	for key, want := range map[attribute.Key]string{tracing.Outcome: "acked", tracing.Subject: "ingest.docs"} {
		if got := attr(deliver, key).AsString(); got != want {
			t.Errorf("deliver span %s = %q, want %q", key, got, want)
		}
	}
	if attr(deliver, tracing.Chunks).AsInt64() < 1 || attr(deliver, tracing.Bytes).AsInt64() != int64(len(content)) ||
		attr(deliver, tracing.Delivery).AsInt64() != 1 {
		t.Errorf("deliver span attributes = %v, want 1+ chunks, %d bytes, delivery 1", deliver.Attributes, len(content))
	}
	steps := map[string]tracetest.SpanStub{}
	for _, s := range all {
		if s.Parent.SpanID() == deliver.SpanContext.SpanID() {
			steps[s.Name] = s
		}
	}
	for _, name := range []string{worker.SpanFetchWait, worker.SpanDecode, worker.SpanRecordStart, worker.SpanChunk, worker.SpanSinkWrite,
		worker.SpanRecordFinish, worker.SpanAck} {
		if _, ok := steps[name]; !ok {
			t.Errorf("no %s span under the delivery; have %v", name, keys(steps))
		}
	}
	if got := attr(steps[worker.SpanChunk], tracing.Chunker).AsString(); got != "markdown" {
		t.Errorf("chunk span chunker = %q, want markdown", got)
	}
	// The document records name the traces of their last deliveries.
	recs := worker.NewKVRecords(e.top.Docs)
	for id, want := range map[string]string{"docs/good.md": send.SpanContext.TraceID().String(), "docs/odd.md": otherTrace} {
		if rec, _, _, err := recs.Get(ctx, id); err != nil || rec.TraceID != want {
			t.Errorf("record of %s: trace id %q (%v), want %s", id, rec.TraceID, err, want)
		}
	}
	// Every chunk record carries the sink write's span context.
	n := 0
	for {
		m, err := records.NextMsg(100 * time.Millisecond)
		if err != nil {
			break
		}
		n++
		if sc := tracing.SpanContext(m.Header); sc.TraceID() != send.SpanContext.TraceID() || sc.SpanID() != steps[worker.SpanSinkWrite].SpanContext.SpanID() {
			t.Errorf("chunk record %s carries %v, want the sink write span %v", m.Subject, sc, steps[worker.SpanSinkWrite].SpanContext)
		}
	}
	if n == 0 {
		t.Error("no chunk record received")
	}

	// The other client's request joined its trace; its failure is recorded.
	failed := one(t, all, worker.SpanDeliver, "docs/odd.md")
	if got := failed.SpanContext.TraceID().String(); got != otherTrace {
		t.Errorf("failed delivery's trace = %s, want the request's %s", got, otherTrace)
	}
	if failed.Status.Code != codes.Error || len(failed.Events) == 0 || failed.Events[0].Name != "exception" {
		t.Errorf("failed delivery status %v, events %v: want Error with the exception recorded", failed.Status, failed.Events)
	}
	if got := attr(failed, tracing.Cause).AsString(); got != string(fault.CauseUnknownChunker) {
		t.Errorf("failed delivery cause = %q, want %s", got, fault.CauseUnknownChunker)
	}
	if got := attr(failed, tracing.Outcome).AsString(); got != string(worker.OutcomePermanent) {
		t.Errorf("failed delivery outcome = %q, want %s", got, worker.OutcomePermanent)
	}
	dead := named(all, worker.SpanDeadLetter)
	if len(dead) != 1 || dead[0].Parent.SpanID() != failed.SpanContext.SpanID() {
		t.Fatalf("dead letter spans %v, want one under the failed delivery", dead)
	}
	dl, err := dlq.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	dlSC := tracing.SpanContext(dl.Header)
	if dlSC.TraceID().String() != otherTrace || dlSC.SpanID() != dead[0].SpanContext.SpanID() {
		t.Errorf("dead letter carries %v, want the dead letter span %v", dlSC, dead[0].SpanContext)
	}

	// The replay links to the dead letter's trace, and the replayed
	// request carries the replay's.
	exp.Reset()
	var replayed []Replayed
	d := NewDLQ(e.js, DLQOptions{TracerProvider: tp})
	if _, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) { replayed = append(replayed, r) }}); err != nil {
		t.Fatal(err)
	}
	if len(replayed) != 1 || replayed[0].Action != ActionProcess {
		t.Fatalf("replayed %+v, want one processed", replayed)
	}
	replay := one(t, exp.GetSpans(), SpanReplay, "docs/odd.md")
	if len(replay.Links) != 1 || replay.Links[0].SpanContext.SpanID() != dlSC.SpanID() || replay.Links[0].SpanContext.TraceID() != dlSC.TraceID() {
		t.Errorf("replay span links %v, want one to the dead letter's %v", replay.Links, dlSC)
	}
	if replay.SpanContext.TraceID() == dlSC.TraceID() {
		t.Error("replay span is in the dead letter's trace, want a trace of its own linked to it")
	}
	raw, err := e.top.Ingest.GetMsg(ctx, replayed[0].StreamSeq)
	if err != nil {
		t.Fatal(err)
	}
	if sc := tracing.SpanContext(raw.Header); sc.SpanID() != replay.SpanContext.SpanID() {
		t.Errorf("replayed request carries %v, want the replay span %v", sc, replay.SpanContext)
	}
}

// runTracedWorker runs the worker (subject sink) traced by tp until want
// deliveries reached a final outcome.
func runTracedWorker(t *testing.T, e *env, tp trace.TracerProvider, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	final := 0
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{
		Config: e.cfg, Sink: subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), TracerProvider: tp,
		OnResult: func(r worker.Result) {
			mu.Lock()
			defer mu.Unlock()
			if r.Final() {
				if final++; final == want {
					cancel()
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if final < want {
		t.Fatalf("%d deliveries final, want %d", final, want)
	}
}

// named returns the spans called name.
func named(spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the span called name of document id, failing unless there
// is exactly one.
func one(t *testing.T, spans tracetest.SpanStubs, name, id string) tracetest.SpanStub {
	t.Helper()
	var out []tracetest.SpanStub
	for _, s := range named(spans, name) {
		if attr(s, tracing.DocID).AsString() == id {
			out = append(out, s)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d %s spans of %s, want 1", len(out), name, id)
	}
	return out[0]
}

// attr returns the value of span's attribute key (empty when absent).
func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func keys(m map[string]tracetest.SpanStub) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}
