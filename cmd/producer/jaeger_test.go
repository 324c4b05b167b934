package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// TestTracesInJaeger sends documents with the producer through a worker
// process, both exporting their spans over OTLP to a real Jaeger
// (all-in-one, in-memory storage), and reads the traces back through
// Jaeger's query API: one trace per document, rooted at the producer's
// send span with the worker's delivery under it; the failure of a
// document that is not UTF-8 recorded as an error; `producer dlq replay`
// linked to the trace of the failed delivery, and the replayed request
// delivered in the replay's trace.
func TestTracesInJaeger(t *testing.T) {
	testutil.OptIn(t, testutil.Processes, testutil.JaegerBin)
	jaeger := tracingtest.StartJaeger(t)
	natsURL, _ := testServer(t)
	otel := jaeger.Env()
	startTracedWorker(t, natsURL, otel)

	good := map[string]string{"a.md": "# A\n\nOne.\n", "b.md": "# B\n\nTwo.\n", "c.md": "# C\n\nThree.\n"}
	files := map[string]string{"bad.md": "# Bad \xff\xfe\n"}
	for k, v := range good {
		files[k] = v
	}
	dir := writeTree(t, files)
	env := map[string]string{"NATS_URL": natsURL}
	for k, v := range otel {
		env[k] = v
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-progress=false", "-send-invalid-utf8", dir}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("producer = %d, stderr:\n%s", code, stderr.String())
	}

	// Every document's trace, with the worker's delivery and its outcome.
	var traces map[string]tracingtest.Trace // by document id
	testutil.WaitFor(t, 60*time.Second, "a trace per document with its delivery settled in Jaeger", func() (bool, string) {
		traces = map[string]tracingtest.Trace{}
		for _, tr := range jaeger.Traces(t, "chunkstream-producer", producer.SpanSend, 100) {
			if send := tr.Span(producer.SpanSend); send != nil {
				traces[send.Tag("chunkstream.doc_id")] = tr
			}
		}
		settled := 0
		for _, tr := range traces {
			if d := tr.Span(worker.SpanDeliver); d != nil && d.Tag("chunkstream.outcome") != "" {
				settled++
			}
		}
		return len(traces) == len(files) && settled == len(files), fmt.Sprintf("%d traces, %d settled", len(traces), settled)
	})
	for id, tr := range traces {
		send, deliver := tr.Span(producer.SpanSend), tr.Span(worker.SpanDeliver)
		if len(send.References) != 0 {
			t.Errorf("%s: send span has references %v, want the trace's root", id, send.References)
		}
		if !deliver.ChildOf(send) || tr.Service(deliver) != "chunkstream-worker" || tr.Service(send) != "chunkstream-producer" {
			t.Errorf("%s: delivery (%s) references %v, want a child of the send span %s (%s)", id,
				tr.Service(deliver), deliver.References, send.SpanID, tr.Service(send))
		}
		for _, name := range []string{worker.SpanDecode, worker.SpanRecordStart} {
			if s := tr.Span(name); s == nil || !s.ChildOf(deliver) {
				t.Errorf("%s: no %s span under the delivery", id, name)
			}
		}
		if _, ok := good[id]; ok {
			if deliver.Tag("chunkstream.outcome") != "acked" || deliver.Tag("error") != "" {
				t.Errorf("%s: delivery outcome %q, error %q; want acked", id, deliver.Tag("chunkstream.outcome"), deliver.Tag("error"))
			}
			for _, name := range []string{worker.SpanChunk, worker.SpanSinkWrite, worker.SpanRecordFinish} {
				if s := tr.Span(name); s == nil || !s.ChildOf(deliver) {
					t.Errorf("%s: no %s span under the delivery", id, name)
				}
			}
		}
	}
	// The document record names the trace of its last delivery.
	stdout.Reset()
	if code := run(context.Background(), []string{"status", "-id", "a.md"}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("status -id = %d, stderr:\n%s", code, stderr.String())
	}
	if want := "trace_id     " + traces["a.md"].TraceID; !strings.Contains(stdout.String(), want) {
		t.Errorf("status -id a.md:\n%s\nwant the line %q", stdout.String(), want)
	}
	bad, ok := traces["bad.md"]
	if !ok {
		t.Fatalf("no trace of bad.md among %d", len(traces))
	}
	failed := bad.Span(worker.SpanDeliver)
	if failed.Tag("error") != "true" || failed.Tag("chunkstream.cause") != "not_utf8" || !failed.Logged("exception") {
		t.Errorf("bad.md: delivery tags %v, logs %v: want error=true, cause not_utf8 and the exception logged", failed.Tags, failed.Logs)
	}
	dead := bad.Span(worker.SpanDeadLetter)
	if dead == nil || !dead.ChildOf(failed) {
		t.Fatalf("bad.md: no dead letter span under the failed delivery")
	}

	// The replay, linked to the dead letter's span; the worker delivers the
	// replayed request in the replay's trace.
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"dlq", "replay"}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("dlq replay = %d, stderr:\n%s", code, stderr.String())
	}
	var replay tracingtest.Trace
	testutil.WaitFor(t, 60*time.Second, "the replay's trace with its delivery in Jaeger", func() (bool, string) {
		rs := jaeger.Traces(t, "chunkstream-producer", producer.SpanReplay, 100)
		if len(rs) != 1 {
			return false, fmt.Sprintf("%d replay traces", len(rs))
		}
		replay = rs[0]
		return replay.Span(worker.SpanDeadLetter) != nil, "no dead letter of the replayed request yet"
	})
	r := replay.Span(producer.SpanReplay)
	if len(r.References) != 1 || r.References[0].RefType != "FOLLOWS_FROM" ||
		r.References[0].TraceID != dead.TraceID || r.References[0].SpanID != dead.SpanID {
		t.Errorf("replay span references %v, want a link to the dead letter span %s of trace %s", r.References, dead.SpanID, dead.TraceID)
	}
	if d := replay.Span(worker.SpanDeliver); d == nil || !d.ChildOf(r) || d.Tag("chunkstream.doc_id") != "bad.md" {
		t.Errorf("replay trace: no delivery of bad.md under the replay span")
	}
}

// startTracedWorker runs a worker process on natsURL with the otel
// variables until the test ends, then stops it with SIGTERM so that it
// flushes its spans.
func startTracedWorker(t *testing.T, natsURL string, otel map[string]string) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t, "./cmd/worker"))
	cmd.Env = append(os.Environ(), "NATS_URL="+natsURL, "CHUNKSTREAM_METRICS_ADDR=", "CHUNKSTREAM_LOG_LEVEL=warn")
	for k, v := range otel {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("worker's log:\n%s", tracingtest.LastLines(logs.String(), 30))
		}
	})
}
