package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/worker"
)

// traced makes a scenario traced: a real Jaeger runs beside it, every
// worker process exports its spans there (startWorkers), and when the test
// ends, after the workers have stopped and flushed their spans, Jaeger must
// hold a settled delivery of every document (checkTraces).
func traced(sc *scenario) {
	if sc.jaeger != nil {
		return
	}
	sc.jaeger = tracingtest.StartJaeger(sc.t)
	// Registered before newScenario's cleanup that stops the workers, so
	// it runs after it (and before Jaeger's, which stops Jaeger).
	sc.t.Cleanup(sc.checkTraces)
}

// checkTraces requires, unless the test failed already or ran another
// worker binary, that Jaeger holds for every document a delivery by
// chunkstream-worker that settled it (acked, a duplicate or superseded):
// the spans of the worker processes arrived through the fault.
func (sc *scenario) checkTraces() {
	t := sc.t
	if t.Failed() || t.Skipped() || sc.otherBinary || len(sc.workers) == 0 {
		return
	}
	var spans, traces int
	testutil.WaitFor(t, 60*time.Second, "a settled delivery of every document in Jaeger", func() (bool, string) {
		got := sc.jaeger.Traces(t, "chunkstream-worker", worker.SpanDeliver, 100000)
		settled := map[string]bool{}
		spans, traces = 0, len(got)
		for _, tr := range got {
			spans += len(tr.Spans)
			for i := range tr.Spans {
				s := &tr.Spans[i]
				if s.OperationName != worker.SpanDeliver || tr.Service(s) != "chunkstream-worker" {
					continue
				}
				switch worker.Outcome(s.Tag("chunkstream.outcome")) {
				case worker.OutcomeAcked, worker.OutcomeDuplicate, worker.OutcomeSuperseded:
					settled[s.Tag("chunkstream.doc_id")] = true
				}
			}
		}
		missing, example := 0, ""
		for _, d := range sc.docs {
			if !settled[d.id] {
				missing++
				example = d.id
			}
		}
		return missing == 0, fmt.Sprintf("%d traces; %d of %d documents without a settled delivery (%s); worker log lines 'traces not flushed' %d, 'export' %d",
			traces, missing, len(sc.docs), example, sc.logCount("traces not flushed"), sc.logCount("export"))
	})
	t.Logf("Jaeger holds %d delivery traces (%d spans) of the %d documents", traces, spans, len(sc.docs))
}

// TestServerRestartTraced is the server restart of TestServerRestartProcesses
// at CI size, traced: 300 documents, two worker processes exporting their
// spans to a real Jaeger; the nats-server process is killed (SIGKILL) once
// a tenth of the requests are done and restarted on its store at once (an
// ack wait of 5 s brings back the deliveries it forgot).
// Every chunk record must be stored once, nothing dead-lettered, and
// Jaeger must hold a settled delivery of every document (traced).
func TestServerRestartTraced(t *testing.T) {
	testutil.OptIn(t, testutil.Processes, testutil.JaegerBin)
	// Deliveries the restarted server forgot come back after the ack wait.
	const ackWait = 5 * time.Second
	sc := newScenario(t, traced, func(sc *scenario) { sc.nDocs, sc.nWorkers, sc.cfg.AckWait = 300, 2, ackWait })
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.docs {
		d := &sc.docs[i]
		if d.want, _, err = ch.Chunk(chunking.Document{Path: d.id, Format: "markdown", Content: d.content}); err != nil {
			t.Fatal(err)
		}
	}
	sc.publish()
	sc.startWorkers(map[string]string{"CHUNKSTREAM_ACK_WAIT": ackWait.String()})
	sc.waitDone(len(sc.docs) / 10)
	sc.killServer()
	sc.restartServer()
	sc.waitDone(len(sc.docs))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	checkChunks(ctx, t, sc.js, sc.cfg, sc.docs)
	if n := sc.deadLetters(); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	t.Logf("killed with %d of %d requests left; worker log lines 'ack not confirmed' %d", sc.leftAtStop, len(sc.docs), sc.logCount("ack not confirmed"))
}
