package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// TestRunTraced: with a tracer provider, every document of a local run has
// one trace: the producer's send span and, under it, the worker's delivery
// that acked it.
func TestRunTraced(t *testing.T) {
	dir := t.TempDir()
	docs := []string{"a.md", "b.md", "c.md"}
	for _, name := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\nSome text.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		t.Fatal(err)
	}
	tp, exp := tracingtest.NewProvider(t)
	sum, err := Run(context.Background(), Options{Dir: dir, Out: filepath.Join(t.TempDir(), "out.jsonl"),
		Worker: worker.DefaultConfig(), Chunkers: registry.Default(), Chunker: md, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Documents != len(docs) {
		t.Fatalf("Run sent %d documents, want %d", sum.Documents, len(docs))
	}
	attr := func(kvs []attribute.KeyValue, k attribute.Key) string {
		for _, kv := range kvs {
			if kv.Key == k {
				return kv.Value.Emit()
			}
		}
		return ""
	}
	sends := map[string]string{} // doc id → span id of its send
	for _, s := range exp.GetSpans() {
		if s.Name == producer.SpanSend {
			sends[attr(s.Attributes, tracing.DocID)] = s.SpanContext.SpanID().String()
		}
	}
	acked := map[string]bool{}
	for _, s := range exp.GetSpans() {
		id := attr(s.Attributes, tracing.DocID)
		if s.Name == worker.SpanDeliver && attr(s.Attributes, tracing.Outcome) == string(worker.OutcomeAcked) &&
			s.Parent.SpanID().String() == sends[id] {
			acked[id] = true
		}
	}
	for _, id := range docs {
		if !acked[id] {
			t.Errorf("%s: no acked delivery under its send span (sends %v)", id, sends)
		}
	}
}
