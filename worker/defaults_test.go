package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestChunkerCacheKeysOnResolvedOptions: requests that spell one
// configuration differently (an option left out, given its default, as
// the worker's default, as a float from JSON) share one chunker; another
// value builds another.
func TestChunkerCacheKeysOnResolvedOptions(t *testing.T) {
	cfg := testConfig()
	cfg.Chunker, cfg.ChunkerOptions = "markdown", worker.ChunkerOptions{"max_char": 2048}
	e := newEnv(t, cfg)
	var mu sync.Mutex
	built := map[string]int{}
	md, _ := registry.Default().Lookup("markdown")
	counting := md.Wrap(func(resolved map[string]any, c chunking.Chunker) chunking.Chunker {
		mu.Lock()
		built[fmt.Sprint(resolved["max_char"])]++
		mu.Unlock()
		return c
	})
	_, res, _ := e.startWorker(worker.Options{Chunkers: registrytest.With(counting)})
	reqs := []messages.IngestRequest{
		{ID: "a.md"},
		{ID: "b.md", Chunker: "markdown"},
		{ID: "c.md", Options: map[string]any{"max_char": 2048}},
		{ID: "d.md", Options: map[string]any{"max_char": 2048.0, "min_char": 1024}},
		{ID: "e.md", Options: map[string]any{"max_char": 300}},
	}
	for i, r := range reqs {
		r.V, r.Content = messages.Version, []byte("# Doc\n\ntext\n")
		ct := ""
		if i == 3 {
			ct = messages.ContentTypeJSON
		}
		e.publish("ingest.docs", r, ct)
	}
	testutil.WaitFor(t, 20*time.Second, "every request processed", func() bool { return len(res.finals()) == len(reqs) })
	for _, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked {
			t.Errorf("%s: %s (%v)", r.DocID, r.Outcome, r.Err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if built["2048"] != 1 || built["300"] != 1 || len(built) != 2 {
		t.Errorf("chunkers built by max_char: %v, want one for 2048 and one for 300", built)
	}
}

// TestAdvertiseDefaults: a worker advertises its resolved defaults at
// start; a worker with other defaults replaces them.
func TestAdvertiseDefaults(t *testing.T) {
	e := newEnv(t, testConfig())
	ctx := context.Background()
	advertised := func() messages.ChunkerDefaults {
		t.Helper()
		var d messages.ChunkerDefaults
		testutil.WaitFor(t, time.Minute, "advertisement", func() bool {
			en, err := e.top.Docs.Get(ctx, messages.ChunkerDefaultsKey)
			if err != nil {
				return false
			}
			d, err = messages.DecodeChunkerDefaults(en.Value())
			return err == nil && d.Chunker == e.cfg.Chunker
		})
		return d
	}
	w, _, stop := e.startWorker(worker.Options{})
	if d := advertised(); !d.Equal(w.ChunkerDefaults()) || len(d.Options) != 3 {
		t.Errorf("advertised %+v, want %+v with every option", d, w.ChunkerDefaults())
	}
	stop()
	e.cfg.Chunker, e.cfg.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
	w, _, stop = e.startWorker(worker.Options{})
	defer stop()
	if d := advertised(); !d.Equal(w.ChunkerDefaults()) || fmt.Sprint(d.Options["max_chunk_size"]) != "300" {
		t.Errorf("advertised %+v, want %+v", d, w.ChunkerDefaults())
	}
}
