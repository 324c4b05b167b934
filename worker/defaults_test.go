package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
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

// fleetDefaults reads the fleet's chunker defaults from the bucket.
func (e *env) fleetDefaults() messages.ChunkerDefaults {
	e.t.Helper()
	en, err := e.top.Docs.Get(context.Background(), messages.ChunkerDefaultsKey)
	if err != nil {
		e.t.Fatalf("fleet chunker defaults: %v", err)
	}
	d, err := messages.DecodeChunkerDefaults(en.Value())
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// setFleetDefaults writes the fleet's chunker defaults as an operator
// does (producer defaults set), keeping the encoding.
func (e *env) setFleetDefaults(chunker string, opts map[string]any) {
	e.t.Helper()
	rs, err := registry.Default().Resolver(registry.Defaults{Chunker: chunker, Options: opts})
	if err != nil {
		e.t.Fatal(err)
	}
	val, _ := messages.EncodeChunkerDefaults(messages.ChunkerDefaults{Chunker: chunker, Options: rs.Defaults().Options})
	if _, err := e.top.Docs.Put(context.Background(), messages.ChunkerDefaultsKey, val); err != nil {
		e.t.Fatal(err)
	}
}

// resolution is how a request was resolved: its outcome and cause, and
// for a written one the settings fingerprint and chunk count its record
// holds.
type resolution struct {
	outcome     worker.Outcome
	cause       string
	fingerprint string
	chunks      int
}

// fleetRequests are requests that leave the chunker or options out, the
// ones the fleet's defaults decide; max_char without a chunker is
// markdown's option, refused by a twostep default.
var fleetRequests = []messages.IngestRequest{
	{ID: "plain.md"},
	{ID: "max-char.md", Options: map[string]any{"max_char": 400}},
	{ID: "named.md", Chunker: "twostep"},
	{ID: "named-options.md", Chunker: "markdown", Options: map[string]any{"min_char": 10}},
	{ID: "budget.md", Options: map[string]any{"max_chunk_size": 50}},
	{ID: "text.txt"},
}

// resolveAll publishes fleetRequests under the id prefix and waits until
// the workers whose results are rs finished them; it returns each
// request's resolution by id (without the prefix).
func (e *env) resolveAll(prefix string, rs ...*results) map[string]resolution {
	e.t.Helper()
	content := []byte(strings.Repeat("# Title\n\nSome words of a sentence here. ", 60))
	seqs := map[uint64]string{}
	for _, r := range fleetRequests {
		r.V, r.ID, r.Content = messages.Version, prefix+r.ID, content
		seqs[e.publish("ingest.docs", r, "")] = r.ID
	}
	finals := map[uint64]worker.Result{}
	testutil.WaitFor(e.t, time.Minute, "every request final", func() bool {
		for _, r := range rs {
			for seq, res := range r.finals() {
				if _, ok := seqs[seq]; ok {
					finals[seq] = res
				}
			}
		}
		return len(finals) == len(seqs)
	})
	out := map[string]resolution{}
	for seq, id := range seqs {
		res := finals[seq]
		rec := e.docRecord(id)
		out[strings.TrimPrefix(id, prefix)] = resolution{outcome: res.Outcome, cause: string(res.Cause), fingerprint: rec.Fingerprint, chunks: rec.Chunks}
	}
	return out
}

// TestFleetDefaults: the first worker sets the fleet's chunker defaults;
// a worker started with other defaults follows them (saying so, in its
// log and its presence) and never replaces them; two workers with
// different own defaults resolve every request alike, alone or together;
// when an operator changes the fleet's defaults both follow; defaults a
// worker cannot resolve hold its requests until they resolve.
func TestFleetDefaults(t *testing.T) {
	cfg := testConfig()
	cfg.Concurrency = 1
	cfg.Chunker, cfg.ChunkerOptions = "markdown", worker.ChunkerOptions{"max_char": 1000, "min_char": 200}
	e := newEnv(t, cfg)
	w1, res1, stop1 := e.startWorker(worker.Options{Chunkers: registry.Default()})
	testutil.WaitFor(t, time.Minute, "the first worker to set the fleet's defaults", func() bool {
		_, err := e.top.Docs.Get(context.Background(), messages.ChunkerDefaultsKey)
		return err == nil
	})
	first := e.fleetDefaults()
	if !first.Equal(w1.OwnChunkerDefaults()) || fmt.Sprint(first.Options["max_char"]) != "1000" || len(first.Options) != 3 {
		t.Fatalf("fleet defaults %+v, want the first worker's, resolved: %+v", first, w1.OwnChunkerDefaults())
	}
	alone1 := e.resolveAll("w1/", res1)
	stop1()

	// The second worker's own defaults are twostep's: it follows the
	// fleet's all the same.
	e.cfg.Chunker, e.cfg.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
	var logs strings.Builder
	var logMu sync.Mutex
	w2, res2, _ := e.startWorker(worker.Options{Chunkers: registry.Default(),
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	alone2 := e.resolveAll("w2/", res2)
	if !e.fleetDefaults().Equal(first) {
		t.Errorf("fleet defaults after the second worker: %+v, want %+v unchanged", e.fleetDefaults(), first)
	}
	if d := w2.ChunkerDefaults(); !d.Equal(first) {
		t.Errorf("the second worker applies %+v, want the fleet's %+v", d, first)
	}
	logMu.Lock()
	if !strings.Contains(logs.String(), "own chunker defaults differ from the fleet's: following the fleet's") {
		t.Errorf("the second worker's log does not say it follows the fleet's defaults:\n%s", logs.String())
	}
	logMu.Unlock()
	testutil.WaitFor(t, 20*time.Second, "the second worker's presence to name its own defaults", func() bool {
		for _, p := range e.presences() {
			if p.OwnDefaults != nil && p.OwnDefaults.Chunker == "twostep" {
				return true
			}
		}
		return false
	})
	for id, r := range alone1 {
		if alone2[id] != r {
			t.Errorf("%s: resolved as %+v by the first worker, %+v by the second", id, r, alone2[id])
		}
		if r.outcome != worker.OutcomeAcked && id != "budget.md" {
			t.Errorf("%s: %+v, want it written", id, r)
		}
	}
	if r := alone1["budget.md"]; r.outcome != worker.OutcomePermanent || r.cause != "unknown_option" {
		t.Errorf("max_chunk_size without a chunker under markdown defaults: %+v, want an unknown_option dead letter", r)
	}

	// Both at once: every request resolved as before, whichever took it.
	e.cfg.Chunker, e.cfg.ChunkerOptions = cfg.Chunker, cfg.ChunkerOptions
	w1, res1, _ = e.startWorker(worker.Options{Chunkers: registry.Default()})
	for round := range 3 {
		both := e.resolveAll(fmt.Sprintf("both%d/", round), res1, res2)
		for id, r := range alone1 {
			if both[id] != r {
				t.Errorf("round %d, %s: resolved as %+v with both workers running, %+v alone", round, id, both[id], r)
			}
		}
	}

	// The operator sets other defaults: both workers follow at once, and
	// resolve alike again (now max_char without a chunker is refused).
	e.setFleetDefaults("twostep", map[string]any{"max_chunk_size": 50})
	testutil.WaitFor(t, 20*time.Second, "both workers to follow the new defaults", func() bool {
		return w1.ChunkerDefaults().Chunker == "twostep" && w2.ChunkerDefaults().Chunker == "twostep"
	})
	var after map[string]resolution
	for round := range 2 {
		got := e.resolveAll(fmt.Sprintf("after%d/", round), res1, res2)
		if after == nil {
			after = got
		}
		for id, r := range after {
			if got[id] != r {
				t.Errorf("round %d, %s: %+v, then %+v", round, id, r, got[id])
			}
		}
	}
	if r := after["max-char.md"]; r.outcome != worker.OutcomePermanent || r.cause != "unknown_option" {
		t.Errorf("max_char without a chunker under twostep defaults: %+v, want an unknown_option dead letter", r)
	}
	if r := after["budget.md"]; r.outcome != worker.OutcomeAcked || r.fingerprint == alone1["plain.md"].fingerprint {
		t.Errorf("max_chunk_size without a chunker under twostep defaults: %+v, want it written", r)
	}

	// Defaults no worker can resolve hold the requests, which go once the
	// defaults resolve again.
	val := []byte(`{"chunker":"nope","options":{"x":1}}`)
	if _, err := e.top.Docs.Put(context.Background(), messages.ChunkerDefaultsKey, val); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "both workers to stop being ready", func() bool { return !w1.Ready() && !w2.Ready() })
	seq := e.publish("ingest.docs", messages.IngestRequest{V: messages.Version, ID: "held.md", Content: []byte("# Held\n")}, "")
	e.setFleetDefaults("markdown", nil)
	testutil.WaitFor(t, time.Minute, "the held request to be processed", func() bool {
		r1, ok1 := res1.finals()[seq]
		r2, ok2 := res2.finals()[seq]
		return (ok1 && r1.Outcome == worker.OutcomeAcked) || (ok2 && r2.Outcome == worker.OutcomeAcked)
	})
	// It was resolved with the defaults set last, never before.
	md, _ := registry.Default().Resolve("markdown")
	want, _ := messages.Settings{Chunker: "markdown", Options: md, Subject: "ingest.docs"}.Fingerprint()
	if rec := e.docRecord("held.md"); rec.Fingerprint != want {
		t.Errorf("held request's record %+v, want the fingerprint of markdown's own defaults %s", rec, want)
	}
}

// presences returns the workers' presences in the bucket.
func (e *env) presences() []messages.WorkerPresence {
	e.t.Helper()
	ctx := context.Background()
	keys, err := e.top.Docs.ListKeysFiltered(ctx, messages.WorkerKeyPrefix+">")
	if err != nil {
		return nil
	}
	var out []messages.WorkerPresence
	for k := range keys.Keys() {
		en, err := e.top.Docs.Get(ctx, k)
		if err != nil {
			continue
		}
		if p, err := messages.DecodeWorkerPresence(en.Value()); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// lockedWriter is a writer shared by a logger and a test.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestFleetDefaultsAfterDeletion: a worker starting after someone deleted
// the fleet's defaults (a deletion marker on the key) sets its own.
func TestFleetDefaultsAfterDeletion(t *testing.T) {
	cfg := testConfig()
	cfg.Chunker, cfg.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
	e := newEnv(t, cfg)
	ctx := context.Background()
	if _, err := e.top.Docs.Put(ctx, messages.ChunkerDefaultsKey, []byte(`{"chunker":"markdown"}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.top.Docs.Delete(ctx, messages.ChunkerDefaultsKey); err != nil {
		t.Fatal(err)
	}
	w, _, _ := e.startWorker(worker.Options{Chunkers: registry.Default()})
	testutil.WaitFor(t, 20*time.Second, "the worker to set the fleet's defaults", func() bool {
		en, err := e.top.Docs.Get(ctx, messages.ChunkerDefaultsKey)
		if err != nil {
			return false
		}
		d, err := messages.DecodeChunkerDefaults(en.Value())
		return err == nil && d.Equal(w.OwnChunkerDefaults())
	})
}
