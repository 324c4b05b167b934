package producer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
)

// statusRun publishes, with the real producer, two good documents, one
// that is not UTF-8 (dead-lettered) and two versions of one document (the
// first superseded), and returns what the PubAcks said.
func statusRun(t *testing.T, e *env) []Awaited {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok1.md", "# One\n\nfirst\n")
	write("ok2.md", "# Two\n\nsecond\n")
	write("bad.md", "# Bad\n\n\xff\xfe\n")
	write("twice.md", "# Twice, version 1\n")
	var mu sync.Mutex
	var sent []Awaited
	onSent := func(s Sent) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, s.Awaited())
	}
	if s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, OnSent: onSent, SendInvalidText: true}); err != nil || s.Sent != 4 {
		t.Fatalf("Backfill = %+v, %v", s, err)
	}
	write("twice.md", "# Twice, version 2\n")
	if s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{filepath.Join(dir, "twice.md")}, OnSent: onSent}); err != nil || s.Sent != 1 {
		t.Fatalf("Backfill of the second version = %+v, %v", s, err)
	}
	if len(sent) != 5 {
		t.Fatalf("OnSent saw %d requests, want 5", len(sent))
	}
	return sent
}

// sentOf returns the requests sent for id, in order.
func sentOf(sent []Awaited, id string) []Awaited {
	var out []Awaited
	for _, a := range sent {
		if a.ID == id {
			out = append(out, a)
		}
	}
	return out
}

// TestWait: Wait reports each sent request done, failed (with the
// record's cause and reason) or superseded, through the records the real
// worker writes: requests sent in fast-ingest batches, and one at a time
// on an INGEST without allow_batched.
func TestWait(t *testing.T) {
	for _, batched := range []bool{true, false} {
		t.Run(map[bool]string{true: "batched", false: "one at a time"}[batched], func(t *testing.T) { testWait(t, batched) })
	}
}

func testWait(t *testing.T, batched bool) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !batched {
		allowBatches(t, e.js, e.cfg.IngestStream, false)
	}
	sent := statusRun(t, e)
	for _, a := range sent {
		if a.Batched != batched {
			t.Fatalf("sent %+v, want batched %v", a, batched)
		}
	}

	// Nothing processes them yet: a bounded wait lists them all pending.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	res, err := Wait(short, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket})
	cancelShort()
	if !errors.Is(err, ErrWaitTimeout) || res.Pending != 5 || len(res.PendingRequests) != 5 || res.OK() {
		t.Fatalf("Wait without a worker = %+v, %v; want 5 pending and ErrWaitTimeout", res.WaitStats, err)
	}

	// A wait started before the worker follows it to the end.
	type outcome struct {
		res WaitResult
		err error
	}
	done := make(chan outcome, 1)
	var progress []WaitStats
	go func() {
		res, err := Wait(ctx, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket, OnProgress: func(s WaitStats) { progress = append(progress, s) }})
		done <- outcome{res, err}
	}()
	e.runWorker(ctx, 5)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	res = got.res
	// The first version of twice.md finished before the second started
	// (then done, since the wait saw it) or was overtaken: either way not
	// failed, and the second is done.
	if res.Total != 5 || res.Failed != 1 || res.Pending != 0 || res.Done+res.Superseded != 4 || res.Done < 3 || res.OK() {
		t.Errorf("Wait = %+v", res.WaitStats)
	}
	if len(res.Failures) != 1 || res.Failures[0].ID != "bad.md" || res.Failures[0].Failure.Cause != fault.CauseNotUTF8 ||
		res.Failures[0].Failure.Reason == "" || res.Failures[0].Awaited != sentOf(sent, "bad.md")[0] {
		t.Errorf("failures = %+v, want bad.md with cause %s and its reason", res.Failures, fault.CauseNotUTF8)
	}
	if last := progress[len(progress)-1]; last != res.WaitStats || progress[0].Pending != 5 {
		t.Errorf("progress went from %+v to %+v, want from 5 pending to %+v", progress[0], last, res.WaitStats)
	}

	// Once everything is processed, a wait reads the outcome from the
	// records at once: the first version of twice.md is superseded.
	res, err = Wait(ctx, e.js, sent, WaitOptions{Bucket: e.cfg.DocsBucket})
	if err != nil || res.Done != 3 || res.Failed != 1 || res.Superseded != 1 ||
		!slices.Equal(res.SupersededRequests, []Awaited{sentOf(sent, "twice.md")[0]}) {
		t.Errorf("Wait after the work = %+v (%v), superseded %v; want 3 done, 1 failed, the first twice.md superseded", res.WaitStats, err, res.SupersededRequests)
	}
	if res, err := Wait(ctx, e.js, nil, WaitOptions{Bucket: e.cfg.DocsBucket}); err != nil || !res.OK() || res.Total != 0 {
		t.Errorf("Wait for nothing = %+v, %v", res, err)
	}
}

// TestStatus: ReadStatus counts the records by state and reads the
// backlog, the dead letters and the workers' defaults; ReadRecord and
// EachRecord give the records themselves.
func TestStatus(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sent := statusRun(t, e)
	e.runWorker(ctx, 5)
	if _, err := e.producer(Options{}).Delete(ctx, Document{ID: "ok2.md"}); err != nil {
		t.Fatal(err)
	}
	e.runWorker(ctx, 1)
	// One request waits in the backlog.
	if _, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "later.md", Content: []byte("# Later\n")}); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(ctx, e.js, e.cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	want := DocumentCounts{Total: 4, Done: 2, Deleted: 1, DeadLettered: 1}
	if st.Documents != want {
		t.Errorf("documents = %+v, want %+v", st.Documents, want)
	}
	if st.Backlog == nil || st.Backlog.Pending != 1 || st.Backlog.AckPending != 0 || st.Backlog.Consumer != e.cfg.Consumer {
		t.Errorf("backlog = %+v, want 1 pending", st.Backlog)
	}
	if st.DeadLetters != 1 {
		t.Errorf("dead letters = %d, want 1", st.DeadLetters)
	}
	if st.ChunkerDefaults == nil || st.ChunkerDefaults.Chunker != "markdown" {
		t.Errorf("chunker defaults = %+v, want markdown", st.ChunkerDefaults)
	}

	rec, ok, err := ReadRecord(ctx, e.js, e.cfg.DocsBucket, "bad.md")
	if err != nil || !ok || rec.State != messages.StateDeadLettered || rec.LastFailure.Cause != fault.CauseNotUTF8 ||
		sentOf(sent, "bad.md")[0].outcome(rec) != awaitFailed {
		t.Errorf("record of bad.md = %+v, %v, %v", rec, ok, err)
	}
	rec, ok, err = ReadRecord(ctx, e.js, e.cfg.DocsBucket, "twice.md")
	if err != nil || !ok || rec.State != messages.StateDone || sentOf(sent, "twice.md")[1].outcome(rec) != awaitDone || rec.Fingerprint == "" || rec.Chunks != 1 {
		t.Errorf("record of twice.md = %+v, %v, %v", rec, ok, err)
	}
	if _, ok, err := ReadRecord(ctx, e.js, e.cfg.DocsBucket, "never.md"); ok || err != nil {
		t.Errorf("record of never.md: ok %v, %v", ok, err)
	}
	var ids []string
	if err := EachRecord(ctx, e.js, e.cfg.DocsBucket, func(id string, _ messages.DocRecord, _ bool) error {
		ids = append(ids, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"bad.md", "ok1.md", "ok2.md", "twice.md"}) {
		t.Errorf("EachRecord ids = %v (the defaults key is not a record)", ids)
	}
}
