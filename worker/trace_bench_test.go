package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// BenchmarkTracing sends the same Markdown documents through two whole
// pipelines in one process (an in-process JetStream server, the worker,
// the subject sink), one without a tracer provider (tracing off, the
// default) and one with the SDK's default sampler (parentbased_always_on)
// and batch span processor exporting to a sink that drops the spans, in
// turns, and reports the process's CPU time per document of each and
// their ratio (on/off). Every request carries a traceparent, as one from
// a traced producer does, so the worker continues a trace in both.
//
//	go test -run '^$' -bench Tracing -benchtime 5x ./worker
func BenchmarkTracing(b *testing.B) {
	const docs = 300
	contents := make([][]byte, docs)
	size := 0
	for i := range contents {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Document %d\n\n", i)
		for s := range 8 {
			fmt.Fprintf(&sb, "## Section %d\n\nA paragraph of document %d, section %d, long enough to be a chunk's worth of words once repeated. ", s, i, s)
			sb.WriteString(strings.Repeat("Some more words in the paragraph. ", 12))
			sb.WriteString("\n\n")
		}
		contents[i] = []byte(sb.String())
		size += len(contents[i])
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	off, on := newTracePipeline(b, nil), newTracePipeline(b, tp)
	off.ingest(b, contents) // warm up
	on.ingest(b, contents)
	var cpuOff, cpuOn time.Duration
	b.SetBytes(int64(2 * size))
	for b.Loop() {
		c0 := testutil.ProcessCPU()
		off.ingest(b, contents)
		c1 := testutil.ProcessCPU()
		on.ingest(b, contents)
		c2 := testutil.ProcessCPU()
		cpuOff += c1 - c0
		cpuOn += c2 - c1
	}
	if cpuOff == 0 {
		return // no CPU times off Linux
	}
	n := float64(docs * b.N)
	b.ReportMetric(float64(cpuOff.Microseconds())/n, "cpu-µs/doc-off")
	b.ReportMetric(float64(cpuOn.Microseconds())/n, "cpu-µs/doc-on")
	b.ReportMetric(float64(cpuOn)/float64(cpuOff), "on/off")
}

// tracePipeline is a JetStream server and a worker writing to the subject
// sink, traced by tp (nil: not traced).
type tracePipeline struct {
	js   jetstream.JetStream
	mu   sync.Mutex
	cond *sync.Cond
	done map[uint64]worker.Outcome
	sent int
}

func newTracePipeline(b *testing.B, tp trace.TracerProvider) *tracePipeline {
	b.Helper()
	ns := jstest.Start(b, b.TempDir(), -1)
	nc, js := jstest.Connect(b, ns.ClientURL())
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	top, err := worker.Setup(context.Background(), js, cfg)
	if err != nil {
		b.Fatal(err)
	}
	p := &tracePipeline{js: js, done: map[uint64]worker.Outcome{}}
	p.cond = sync.NewCond(&p.mu)
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg, Sink: subjectsink.New(js, cfg.ChunksPrefix, cfg.MaxPendingPublishes), TracerProvider: tp,
		OnResult: func(r worker.Result) {
			if r.Final() {
				p.mu.Lock()
				p.done[r.StreamSeq] = r.Outcome
				p.cond.Broadcast()
				p.mu.Unlock()
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := w.Run(ctx); err != nil {
			b.Errorf("worker: %v", err)
		}
	}()
	b.Cleanup(func() { stop(); <-stopped })
	return p
}

// ingest publishes every document as a new version and waits until the
// worker has acked them all.
func (p *tracePipeline) ingest(b *testing.B, contents [][]byte) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seqs := make([]uint64, len(contents))
	for i, c := range contents {
		id := fmt.Sprintf("docs/%d.md", i)
		data, err := messages.EncodeIngest(&messages.IngestRequest{V: messages.Version, ID: id, Content: c}, messages.ContentTypeMsgpack)
		if err != nil {
			b.Fatal(err)
		}
		p.sent++
		m := nats.NewMsg("ingest.bench")
		m.Data = data
		m.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		m.Header.Set(messages.HeaderMsgID, fmt.Sprintf("%s@%d", id, p.sent))
		m.Header.Set("traceparent", fmt.Sprintf("00-%032x-%016x-01", p.sent, p.sent))
		ack, err := p.js.PublishMsg(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		seqs[i] = ack.Sequence
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range seqs {
		for p.done[s] == "" {
			p.cond.Wait()
		}
		if o := p.done[s]; o != worker.OutcomeAcked {
			b.Fatalf("sequence %d: %s", s, o)
		}
	}
}
