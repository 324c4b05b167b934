package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// TestServiceQdrantSink: with CHUNKSTREAM_SINK=qdrant the service writes
// every chunk as a point (against the in-process Qdrant double).
func TestServiceQdrantSink(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	qd := qdranttest.Start(t)
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{
			"NATS_URL":                 ns.ClientURL(),
			"CHUNKSTREAM_SINK":         "qdrant",
			"CHUNKSTREAM_QDRANT_ADDR":  qd.Addr(),
			"CHUNKSTREAM_METRICS_ADDR": "127.0.0.1:0",
			"CHUNKSTREAM_LOG_LEVEL":    "error",
		}[k]
		return v, ok
	}
	_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	if _, err := worker.Setup(context.Background(), js, worker.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	docs := markdownDocs(6)
	publishDocs(t, js, docs)
	ch, err := registry.NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for id, c := range docs {
		out, _, err := ch.Chunk(chunking.Document{Path: id, Content: c})
		if err != nil {
			t.Fatal(err)
		}
		want += len(out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var stderr bytes.Buffer
	go func() { done <- run(ctx, nil, &bytes.Buffer{}, &stderr, lookup) }()
	testutil.WaitFor(t, 30*time.Second, "points in Qdrant", func() bool {
		select {
		case code := <-done:
			t.Fatalf("worker exited with %d:\n%s", code, stderr.String())
		default:
		}
		return len(qd.Points("chunks")) == want && streamState(t, js, "INGEST").Msgs == 0
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit = %d\n%s", code, stderr.String())
	}
}
