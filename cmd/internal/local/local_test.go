package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"go.opentelemetry.io/otel/attribute"

	"github.com/chunkstream/chunkstream/chunking"
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

// TestRunStorage: without a store folder a small input goes through
// memory storage, with one through the folder's file store, and the two
// write the same chunks.
func TestRunStorage(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "sub/c.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\nSome text.\n\n## More\n\nMore text.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		t.Fatal(err)
	}
	var outs [2][]byte
	for i, store := range []string{"", t.TempDir()} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		sum, err := Run(context.Background(), Options{Dir: dir, Out: out, Store: store,
			Worker: worker.DefaultConfig(), Chunkers: registry.Default(), Chunker: md})
		if err != nil {
			t.Fatal(err)
		}
		if want := store == ""; sum.Memory != want || sum.Documents != 3 || len(sum.DeadLetters) != 0 {
			t.Errorf("store %q: Memory %v, %d documents, %d dead letters; want Memory %v, 3 documents, none", store, sum.Memory,
				sum.Documents, len(sum.DeadLetters), want)
		}
		if store != "" {
			if _, err := os.Stat(filepath.Join(store, "jetstream")); err != nil {
				t.Errorf("store folder: %v", err)
			}
		}
		if outs[i], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
	}
	if string(outs[0]) != string(outs[1]) || len(outs[0]) == 0 {
		t.Errorf("memory storage wrote\n%s\nthe store folder\n%s", outs[0], outs[1])
	}
}

// TestRunRefusesAStoreInUse: a store folder whose INGEST still holds a
// request of an earlier run that did not finish is refused before
// anything is sent (this run's worker would write the old text among the
// new); a finished run's store is used again.
func TestRunRefusesAStoreInUse(t *testing.T) {
	dir, store := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# a\n\nThe current text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		t.Fatal(err)
	}
	run := func() error {
		_, err := Run(context.Background(), Options{Dir: dir, Out: filepath.Join(t.TempDir(), "out.jsonl"), Store: store,
			Worker: worker.DefaultConfig(), Chunkers: registry.Default(), Chunker: md})
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatalf("a finished run's store: %v", err)
	}
	// An interrupted run: a request left in the store's INGEST.
	ns, err := startEmbedded(store)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(context.Background(), Subject, []byte(`{"v":1,"id":"a.md","content":"# a\n\nOld text.\n"}`)); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()
	if err := run(); !errors.Is(err, ErrStoreInUse) || !strings.Contains(err.Error(), "1 requests") {
		t.Errorf("a store holding an earlier run's request: %v, want ErrStoreInUse saying how many", err)
	}
}

// TestRunKeepsChunkerWarnings: the chunker's warnings of a local run are
// in its summary, as chunk split prints them and service mode records
// them (a code fence never closed), each once: a mailbox's duplicate
// Message-ID is reported where the mailbox has it, not again where the
// worker re-reads the thread the producer rendered.
func TestRunKeepsChunkerWarnings(t *testing.T) {
	const mail = "From: Ann <ann@example.com>\nSubject: Hello\nDate: Mon, 7 Dec 2026 10:00:00 +0000\nMessage-ID: <1@example.com>\n\n"
	for _, tc := range []struct {
		chunker string
		files   map[string]string
		file    string // the one warning's file, relative to the folder
		line    int
		kind    chunking.WarningKind
	}{
		{"markdown", map[string]string{"a.md": "# T\n\n```\ncode never closed\n", "b.md": "# B\n\nFine.\n"}, "a.md", 3, chunking.WarnUnclosed},
		{"email", map[string]string{"a.eml": mail + "Hi Bob.\n", "sub/x.mbox": "From ann@example.com Mon Dec  7 10:00:00 2026\n" + mail + "Another body.\n\n"},
			"sub/x.mbox", 1, chunking.WarnThreading},
	} {
		t.Run(tc.chunker, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			entry, err := registry.Default().Lookup(tc.chunker)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := Run(context.Background(), Options{Dir: dir, Out: filepath.Join(t.TempDir(), "out.jsonl"),
				Worker: worker.DefaultConfig(), Chunkers: registry.Default(), Chunker: entry})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Warnings) != 1 || !strings.HasSuffix(sum.Warnings[0].File, tc.file) || sum.Warnings[0].Line != tc.line || sum.Warnings[0].Kind != tc.kind {
				t.Errorf("warnings %v, want one %s at %s:%d", sum.Warnings, tc.kind, tc.file, tc.line)
			}
		})
	}
}

// TestUnreported: the worker's warnings about a message the producer's
// report already (same kind, Message-ID and text) are left out; others,
// and any without a Message-ID, stay.
func TestUnreported(t *testing.T) {
	dup := chunking.Warning{Kind: chunking.WarnThreading, File: "box.mbox", Line: 1, MessageID: "1@x", Text: "duplicate Message-ID with another body: kept as a separate message"}
	again := dup
	again.File, again.Line = "box.mbox#1@x", 10
	other := chunking.Warning{Kind: chunking.WarnOversize, File: "box.mbox#1@x", MessageID: "1@x", Text: "message over max_chars"}
	noID := chunking.Warning{Kind: chunking.WarnMalformed, File: "t", Text: "bad header"}
	for _, tc := range []struct {
		name             string
		producer, worker []chunking.Warning
		want             []chunking.Warning
	}{
		{"repeated", []chunking.Warning{dup}, []chunking.Warning{again}, nil},
		{"new to the worker", []chunking.Warning{dup}, []chunking.Warning{again, other}, []chunking.Warning{other}},
		{"no message id", []chunking.Warning{noID}, []chunking.Warning{noID}, []chunking.Warning{noID}},
		{"no producer warnings", nil, []chunking.Warning{again}, []chunking.Warning{again}},
	} {
		if got := unreported(tc.producer, tc.worker); !slices.Equal(got, tc.want) {
			t.Errorf("%s: unreported = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPace: the producer's Pace lets documents through while fewer than
// windowDocs and windowBytes of them are sent and not finished, waits
// otherwise (a cancelled context shows it would, without timing), and
// lets the next through once one finishes: a final result or a failure
// to send. A document larger than the window goes alone.
func TestPace(t *testing.T) {
	tr := &tracker{final: map[finalKey]bool{}, warnings: map[string][]chunking.Warning{}, coll: newCollector(nil),
		ahead: map[string]int{}, wake: make(chan struct{}, 1)}
	ctx := context.Background()
	waits, cancel := context.WithCancel(ctx)
	cancel()
	for i := range windowDocs {
		if err := tr.pace(ctx, fmt.Sprintf("d%d", i), 10); err != nil {
			t.Fatalf("document %d of the window: %v", i, err)
		}
	}
	if err := tr.pace(waits, "next", 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("a full window let a document through: %v", err)
	}
	tr.onResult(worker.Result{StreamSeq: 1, DocID: "d0", Outcome: worker.OutcomeAcked})
	tr.onResult(worker.Result{StreamSeq: 1, DocID: "d1", Outcome: worker.OutcomeRetried}) // not final
	if err := tr.pace(waits, "next", 10); err != nil {
		t.Fatalf("after a document finished: %v", err)
	}
	if err := tr.pace(waits, "after", 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("a retried document counted as finished: %v", err)
	}
	tr.unsent("d2")
	if err := tr.pace(waits, "after", 10); err != nil {
		t.Fatalf("after a document failed to send: %v", err)
	}
	// By bytes: the window's bytes in flight, then a document over them
	// waits until everything finished, and goes alone.
	tr = &tracker{final: map[finalKey]bool{}, coll: newCollector(nil), ahead: map[string]int{}, wake: make(chan struct{}, 1)}
	if err := tr.pace(ctx, "half", windowBytes/2); err != nil {
		t.Fatal(err)
	}
	if err := tr.pace(waits, "big", windowBytes+1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a document over the bytes left went: %v", err)
	}
	tr.onResult(worker.Result{StreamSeq: 1, DocID: "half", Outcome: worker.OutcomePermanent})
	if err := tr.pace(waits, "big", windowBytes+1); err != nil {
		t.Fatalf("a document over the window, alone: %v", err)
	}
	if err := tr.pace(waits, "small", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a document beside one over the window: %v", err)
	}
}

// TestSuperviseWorkerEnded: a worker that ends before it is stopped ends
// the producer's wait for room and the wait for the queue to empty, with
// its error; both would otherwise wait for it for ever.
func TestSuperviseWorkerEnded(t *testing.T) {
	failed := errors.New("the fleet's defaults: bucket gone")
	waitForever := func(ctx context.Context) error { <-ctx.Done(); return context.Cause(ctx) }
	for _, tc := range []struct {
		name       string
		run        func(context.Context) error
		send, wait func(context.Context) error
		want       []error
	}{
		{"error while sending", func(context.Context) error { return failed }, waitForever, nil, []error{ErrWorkerEnded, failed}},
		{"nil while sending", func(context.Context) error { return nil }, waitForever, nil, []error{ErrWorkerEnded}},
		{"error while waiting", func(context.Context) error { return failed }, func(context.Context) error { return nil }, waitForever, []error{ErrWorkerEnded, failed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := supervise(t.Context(), tc.run, tc.send, tc.wait)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("supervise = %v, want %v in it", err, want)
				}
			}
		})
	}
	// A worker that runs until stopped: the send's error is the result,
	// and the worker is stopped either way.
	stopped := make(chan struct{})
	run := func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil }
	sendFailed := errors.New("walk: permission denied")
	if err := supervise(t.Context(), run, func(context.Context) error { return sendFailed }, waitForever); !errors.Is(err, sendFailed) || errors.Is(err, ErrWorkerEnded) {
		t.Errorf("supervise = %v, want the send's error", err)
	}
	<-stopped
	stopped = make(chan struct{})
	if err := supervise(t.Context(), run, func(context.Context) error { return nil }, func(context.Context) error { return nil }); err != nil {
		t.Errorf("supervise = %v after a run that settled", err)
	}
	<-stopped
	// A worker that ends on its own once every request settled: the
	// run's output is whole.
	settledFirst := make(chan struct{})
	early := func(context.Context) error { <-settledFirst; return nil }
	if err := supervise(t.Context(), early, func(context.Context) error { return nil }, func(ctx context.Context) error {
		close(settledFirst)
		<-ctx.Done() // the worker's end cancels the wait; it had settled
		return nil
	}); err != nil {
		t.Errorf("supervise = %v after every request settled", err)
	}
}
