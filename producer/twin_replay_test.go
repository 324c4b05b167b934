package producer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestTwinReplayWhileOtherVersionPending: the replay of a bulk's
// refused twin, sent as the bulk's ingest_seq (no record when it was
// read), reaches a worker while the other version is started (pending)
// at that sequence. It is refused as the twin it is (dead-lettered again,
// to stand shared), not written at that sequence over the other.
func TestTwinReplayWhileOtherVersionPending(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v1, v2 := []byte("# One\n\nfirst version\n"), []byte("# Two\n\nsecond version\n")
	ack, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "a.md", Content: v1})
	if err != nil {
		t.Fatal(err)
	}
	v1Writing, twinSettled := make(chan struct{}), make(chan struct{})
	var once sync.Once
	settle := func() { once.Do(func() { close(twinSettled) }) }
	inner := subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)
	sink := worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		if doc.Version == messages.ContentVersion(v1) {
			close(v1Writing)
			<-twinSettled // v1 is pending while the twin is delivered
		} else {
			settle()
		}
		return inner.Write(ctx, doc, chunks)
	})
	var mu sync.Mutex
	var results []worker.Result
	done := make(chan struct{})
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{Config: e.cfg, Sink: sink, OnResult: func(r worker.Result) {
		if !r.Final() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		if r.StreamSeq != ack.Sequence {
			settle()
		}
		if len(results) == 2 {
			close(done)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(rctx) }()
	<-v1Writing
	e.publishReplayAs(ctx, "a.md", v2, ack.Sequence)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("fewer than 2 results")
	}
	stop()
	<-errc
	mu.Lock()
	defer mu.Unlock()
	acked := 0
	for _, r := range results {
		t.Logf("stream_seq %d ingest_seq %d: %s %v", r.StreamSeq, r.IngestSeq, r.Outcome, r.Err)
		if r.Outcome == worker.OutcomeAcked {
			acked++
		}
	}
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "a.md")
	t.Logf("record: %s at %d, version %.8s, chunks %d", rec.State, rec.IngestSeq, rec.DocVersion, rec.Chunks)
	t.Logf("chunks of a.md at its newest ingest_seq: %.8v (v1 %.8v, v2 %.8v)", e.view(ctx)["a.md"], chunkHashes(t, "a.md", v1), chunkHashes(t, "a.md", v2))
	if acked != 1 {
		t.Errorf("%d of the two versions at ingest_seq %d acked, want v1 alone", acked, ack.Sequence)
	}
	if rec.State != messages.StateDone || rec.DocVersion != messages.ContentVersion(v1) {
		t.Errorf("record %s at version %.8s, want v1 done", rec.State, rec.DocVersion)
	}
	if got, want := e.view(ctx)["a.md"], chunkHashes(t, "a.md", v1); !slices.Equal(got, want) {
		t.Errorf("chunks of a.md %.8v, want v1's %.8v", got, want)
	}
}

// TestTwinOvertakenElsewhereIsSuperseded: a bulk holds a.md twice (v1 written
// to "chunks" at ingest_seq S, v2 refused as its twin); a newer version
// goes to "other". v2's dead letter is not the version at S, yet it
// stands current (Targets["chunks"] == S is v1's) and its replay is
// processed at S into "chunks", on top of v1.
func TestTwinOvertakenElsewhereIsSuperseded(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	qd := qdranttest.Start(t)
	cfg := qdrantsink.DefaultConfig()
	cfg.Addr = qd.Addr()
	sink, err := qdrantsink.New(ctx, cfg, worker.NewKVRecords(e.top.Docs), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	v1, v2 := mdContent(1, 3000), mdContent(2, 3000)
	e.publishBulk(ctx,
		messages.IngestRequest{V: messages.Version, ID: "a.md", Content: v1},
		messages.IngestRequest{V: messages.Version, ID: "a.md", Content: v2})
	for id, rs := range e.runWorkerWith(ctx, sink, 2) {
		for _, r := range rs {
			t.Logf("bulk %s: %s %v", id, r.Outcome, r.Err)
		}
	}
	if _, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "a.md", Content: mdContent(3, 3000), Collection: "other"}); err != nil {
		t.Fatal(err)
	}
	e.runWorkerWith(ctx, sink, 1)
	dump := func(when string) (seqs map[int64]int) {
		seqs = map[int64]int{}
		for _, p := range qd.Points(cfg.Collection) {
			if p.Payload["doc_id"].GetStringValue() == "a.md" {
				seqs[p.Payload["ingest_seq"].GetIntegerValue()]++
			}
		}
		t.Logf("%s: collection %s holds points of a.md by ingest_seq: %v (v1 makes %d chunks)", when, cfg.Collection, seqs, len(chunkHashes(t, "a.md", v1)))
		return seqs
	}
	dump("before the replay")
	var got []string
	if _, err := NewDLQ(e.js, DLQOptions{}).Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) {
		got = append(got, fmt.Sprintf("%s %s", r.Action, r.Entry.Standing))
	}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("replay: %q", got)
	if len(got) == 1 && got[0] == "process current" {
		for id, rs := range e.runWorkerWith(ctx, sink, 1) {
			t.Logf("replay %s: %s %v ingest_seq %d chunks %d", id, rs[0].Outcome, rs[0].Err, rs[0].IngestSeq, rs[0].Chunks)
		}
	}
	dump("after the replay")
	if len(got) != 1 || got[0] != "remove superseded" {
		t.Errorf("replay of the twin: %q, want it removed as superseded", got)
	}
	if p := points(t, qd, cfg.Collection)["a.md"]; !slices.Equal(p, chunkHashes(t, "a.md", v1)) {
		t.Errorf("collection %s holds %.8v, want v1's chunks", cfg.Collection, p)
	}
	if p := points(t, qd, "other")["a.md"]; !slices.Equal(p, chunkHashes(t, "a.md", mdContent(3, 3000))) {
		t.Errorf("collection other holds %.8v, want the newest version's chunks", p)
	}
}

// TestOvertakenElsewhereIsNotCurrent: docs/cli.md says dlq list's current
// dead letters are exactly the documents status -failed lists (records
// dead_lettered). A version overtaken only in another collection, whose
// record is the newer version's (done), stands overtaken_elsewhere.
func TestOvertakenElsewhereIsNotCurrent(t *testing.T) {
	const s, n = 10, 20
	e := newEnv(t, nil)
	ctx := context.Background()
	d, dl := e.deadLetterOvertaken(ctx, s, n, map[string]uint64{"chunks": s, "other": n})
	if err := d.Standing(ctx, &dl); err != nil {
		t.Fatal(err)
	}
	failed := 0
	if err := EachRecord(ctx, e.js, e.cfg.DocsBucket, func(_ string, rec messages.DocRecord, ok bool) error {
		if ok && rec.State == messages.StateDeadLettered {
			failed++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if (dl.Standing == StandingCurrent) != (failed == 1) || dl.Standing != StandingElsewhere {
		t.Errorf("dlq list: %s; status -failed lists %d documents; want %s", dl.Standing, failed, StandingElsewhere)
	}
}
