package producer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/messages"
)

// TestAwaitedOutcome: what a document record says of a request of known
// sequence, and of a batched one known by its bounds and version.
func TestAwaitedOutcome(t *testing.T) {
	const v1, v2 = "aaaa", "bbbb"
	exact := Awaited{ID: "a.md", Seq: 10}
	batched := Awaited{ID: "a.md", Batched: true, After: 10, Seq: 20, Version: v1}
	unbounded := Awaited{ID: "a.md", Batched: true, After: 10, Version: v1}
	del := Awaited{ID: "a.md", Batched: true, After: 10, Seq: 20, Version: "delete"}
	rec := func(seq uint64, op messages.Op, version string, state messages.State) messages.DocRecord {
		return messages.DocRecord{IngestSeq: seq, Op: op, DocVersion: version, State: state}
	}
	up, done, dead, pending := messages.OpUpsert, messages.StateDone, messages.StateDeadLettered, messages.StatePending
	tests := []struct {
		name string
		a    Awaited
		rec  messages.DocRecord
		want awaitOutcome
	}{
		{"exact, done at its sequence", exact, rec(10, up, v1, done), awaitDone},
		{"exact, dead-lettered", exact, rec(10, up, v1, dead), awaitFailed},
		{"exact, an earlier version done", exact, rec(9, up, v1, done), awaitPending},
		{"exact, a newer version", exact, rec(11, up, v2, pending), awaitSuperseded},
		{"batched, done within its bounds", batched, rec(15, up, v1, done), awaitDone},
		{"batched, at its upper bound", batched, rec(20, up, v1, done), awaitDone},
		{"batched, dead-lettered", batched, rec(15, up, v1, dead), awaitFailed},
		{"batched, in work", batched, rec(15, up, v1, pending), awaitPending},
		{"batched, the same content done earlier (stale)", batched, rec(10, up, v1, done), awaitPending},
		{"batched, an earlier version replayed", batched, rec(7, up, v2, dead), awaitPending},
		{"batched, another version between the bounds", batched, rec(15, up, v2, done), awaitPending},
		{"batched, a newer version", batched, rec(21, up, v2, pending), awaitSuperseded},
		{"batched, the same content sent again later", batched, rec(21, up, v1, done), awaitSuperseded},
		{"batched, an undecodable request between the bounds", batched, rec(15, "", "", dead), awaitFailed},
		{"no upper bound, done", unbounded, rec(99, up, v1, done), awaitDone},
		{"no upper bound, another version", unbounded, rec(99, up, v2, done), awaitPending},
		{"delete, done", del, rec(15, messages.OpDelete, "", done), awaitDone},
		{"delete, an upsert between the bounds", del, rec(15, up, v1, done), awaitPending},
	}
	for _, tt := range tests {
		if got := tt.a.outcome(tt.rec); got != tt.want {
			t.Errorf("%s: %+v.outcome(%+v) = %d, want %d", tt.name, tt.a, tt.rec, got, tt.want)
		}
	}
}

// TestWaitBatchedForce: a document sent again unchanged (-force) through
// fast-ingest batches, while its record says its earlier send is done
// with the same content, is not done until a worker processed the new
// send; then it is.
func TestWaitBatchedForce(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nsame text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sent []Awaited
	o := BackfillOptions{Paths: []string{dir}, Force: true, OnSent: func(s Sent) { sent = append(sent, s.Awaited()) }}
	if s, err := e.producer(Options{}).Backfill(ctx, o); err != nil || s.Sent != 1 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	e.runWorker(ctx, 1)
	first := sent[0]
	sent = nil
	if s, err := e.producer(Options{}).Backfill(ctx, o); err != nil || s.Sent != 1 {
		t.Fatalf("Backfill again = %+v, %v", s.Stats, err)
	}
	if len(sent) != 1 || !sent[0].Batched || sent[0].Version != first.Version || sent[0].After < first.Seq {
		t.Fatalf("sent %+v after %+v; want one batched request of the same version above it", sent, first)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	res, err := Wait(short, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket})
	cancelShort()
	if !errors.Is(err, ErrWaitTimeout) || res.Pending != 1 || res.Done != 0 {
		t.Fatalf("Wait over the earlier send's record = %+v, %v; want 1 pending", res.WaitStats, err)
	}
	e.runWorker(ctx, 1)
	if res, err = Wait(ctx, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket}); err != nil || res.Done != 1 || !res.OK() {
		t.Errorf("Wait after the worker = %+v, %v; want 1 done", res.WaitStats, err)
	}
}

// TestWaitKeepsTenantsApart: -stdin lines of two tenants and of none
// under one id are waited for each on its own record: all three done,
// none taken for another's (superseded, or pending forever).
func TestWaitKeepsTenantsApart(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lines := `{"v":1,"id":"a.md","tenant":"acme","content":"# acme\n"}` + "\n" +
		`{"v":1,"id":"a.md","tenant":"globex","content":"# globex\n"}` + "\n" +
		`{"v":1,"id":"a.md","content":"# nobody\n"}` + "\n"
	var sent []Awaited
	sum, err := e.producer(Options{}).SendLines(ctx, strings.NewReader(lines), StreamOptions{OnSent: func(s Sent) { sent = append(sent, s.Awaited()) }})
	if err != nil || sum.Sent != 3 || len(sent) != 3 {
		t.Fatalf("SendLines = %+v, %v (%d sent)", sum.Stats, err, len(sent))
	}
	e.runWorker(ctx, 3)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	res, err := Wait(wctx, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket})
	if err != nil || res.Done != 3 || !res.OK() {
		t.Fatalf("Wait = %+v, %v; want the three done", res.WaitStats, err)
	}
	tenants := map[string]bool{}
	for _, a := range sent {
		tenants[a.Tenant] = true
	}
	if len(tenants) != 3 {
		t.Errorf("awaited tenants %v, want acme, globex and none", tenants)
	}
}
