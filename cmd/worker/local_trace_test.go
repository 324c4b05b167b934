package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// TestLocalTracesInJaeger: `worker -local` honours the OTEL_* variables as
// the service does: each document's trace reaches a real Jaeger, the send
// span with the delivery under it, as service chunkstream-worker.
func TestLocalTracesInJaeger(t *testing.T) {
	testutil.OptIn(t, testutil.JaegerBin)
	jaeger := tracingtest.StartJaeger(t)
	env := jaeger.Env()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	docs := markdownDocs(3)
	dir := writeTree(t, docs)
	var stderr bytes.Buffer
	args := []string{"-local", dir, "-out", filepath.Join(t.TempDir(), "out.jsonl"), "-no-progress"}
	if code := run(context.Background(), args, &bytes.Buffer{}, &stderr, lookup); code != 0 {
		t.Fatalf("worker -local = %d\n%s", code, stderr.String())
	}
	// run flushed the spans before returning; Jaeger stores them soon after.
	testutil.WaitFor(t, 30*time.Second, "a trace per document with its acked delivery", func() (bool, string) {
		acked := 0
		for _, tr := range jaeger.Traces(t, "chunkstream-worker", producer.SpanSend, 100) {
			send, deliver := tr.Span(producer.SpanSend), tr.Span(worker.SpanDeliver)
			if deliver != nil && deliver.ChildOf(send) && deliver.Tag("chunkstream.outcome") == string(worker.OutcomeAcked) {
				acked++
			}
		}
		return acked == len(docs), fmt.Sprintf("%d of %d", acked, len(docs))
	})
}
