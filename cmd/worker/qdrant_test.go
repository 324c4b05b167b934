package main

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// serveQdrant runs the service with CHUNKSTREAM_SINK=qdrant (against the
// in-process Qdrant double) and the extra variables env until every
// chunk of docs is a point, then stops it; it returns the double and the
// chunks.
func serveQdrant(t *testing.T, env map[string]string, docs map[string][]byte) (*qdranttest.Server, []chunking.Chunk) {
	t.Helper()
	ns := jstest.Start(t, t.TempDir(), -1)
	qd := qdranttest.Start(t)
	vars := map[string]string{
		"NATS_URL":                 ns.ClientURL(),
		"CHUNKSTREAM_SINK":         "qdrant",
		"CHUNKSTREAM_QDRANT_ADDR":  qd.Addr(),
		"CHUNKSTREAM_METRICS_ADDR": "127.0.0.1:0",
		"CHUNKSTREAM_LOG_LEVEL":    "error",
	}
	maps.Copy(vars, env)
	lookup := tracingtest.Lookup(func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	if _, err := worker.Setup(context.Background(), js, worker.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	publishDocs(t, js, docs)
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []chunking.Chunk
	for id, c := range docs {
		out, _, err := ch.Chunk(chunking.Document{Path: id, Content: c})
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, out...)
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
		return len(qd.Points("chunks")) == len(chunks) && streamState(t, js, "INGEST").Msgs == 0
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit = %d\n%s", code, stderr.String())
	}
	return qd, chunks
}

// TestServiceQdrantSink: with CHUNKSTREAM_SINK=qdrant the service writes
// every chunk as a point (against the in-process Qdrant double).
func TestServiceQdrantSink(t *testing.T) {
	serveQdrant(t, nil, markdownDocs(6))
}

// TestServiceQdrantSinkWithEmbedder: with an embeddings endpoint the
// service gathers the chunks of all its documents into shared requests
// (the only request is cut when it holds every chunk, CHUNKSTREAM_EMBED_BATCH)
// and every point carries the vector of its own text.
func TestServiceQdrantSinkWithEmbedder(t *testing.T) {
	docs := markdownDocs(6)
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for id, c := range docs {
		out, _, _ := ch.Chunk(chunking.Document{Path: id, Content: c})
		total += len(out)
	}
	api := embedtest.Start(t, embedtest.Config{Dims: 8})
	qd, _ := serveQdrant(t, map[string]string{
		"CHUNKSTREAM_EMBED_URL":    api.URL(),
		"CHUNKSTREAM_EMBED_MODEL":  "m",
		"CHUNKSTREAM_EMBED_BATCH":  strconv.Itoa(total),
		"CHUNKSTREAM_EMBED_LINGER": "10s",
	}, docs)
	for _, p := range qd.Points("chunks") {
		content := p.GetPayload()[qdrantsink.FieldContent].GetStringValue()
		got := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorDense].GetDense().GetData()
		if !slices.Equal(got, embedtest.Vector("m", content, 8)) {
			t.Fatalf("point %s: dense vector is not the vector of its content", p.GetId().GetUuid())
		}
	}
	reqs := api.Requests()
	if len(reqs) != 2 || len(reqs[1]) != total {
		t.Fatalf("%d requests (sizes %v), want the probe and one of all %d chunks", len(reqs), sizesOf(reqs), total)
	}
}

func sizesOf(reqs [][]string) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, len(r))
	}
	return out
}
