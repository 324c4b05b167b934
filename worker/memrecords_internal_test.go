package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
)

// TestMemKVFollowsTheBucket: the records' operations (KVRecords) on the
// records bucket and in memory (memKV, Options.MemoryRecords) find and
// write the same records: versions in and out of order, a redelivery, a
// duplicate, a dead letter and its replay, a finish another version
// overtook, a finish on a stale revision.
func TestMemKVFollowsTheBucket(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, ns.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := DefaultConfig()
	cfg.MetricsAddr = ""
	top, err := Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stores := []*KVRecords{NewKVRecords(top.Docs), {kv: newMemKV()}}
	rec := func(seq uint64) messages.DocRecord {
		return messages.DocRecord{IngestSeq: seq, DocVersion: fmt.Sprintf("v%d", seq), Op: messages.OpUpsert, Subject: "ingest.docs"}
	}
	done := func(seq uint64) messages.DocRecord {
		r := rec(seq)
		r.Chunks, r.Fingerprint = int(seq), "fp"
		return r
	}
	failed := func(seq uint64) messages.DocRecord {
		r := rec(seq)
		r.LastFailure = messages.Failure{Cause: "no_content", Reason: "empty", IngestSeq: seq}
		return r
	}
	// Each step runs on both stores; revisions differ between them, so
	// a finish names the step whose Start revision it uses.
	revs := make([]map[int]uint64, len(stores))
	for i := range revs {
		revs[i] = map[int]uint64{}
	}
	steps := []struct {
		name string
		do   recStep
	}{
		{"a: first version, create first", startStep("a", rec(5), true)},
		{"a: its redelivery", startStep("a", rec(5), false)},
		{"a: an older version", startStep("a", rec(3), true)},
		{"a: finish 5", finishStep("a", 5, 0, done(5))},
		{"a: 5 again, done: a duplicate", startStep("a", rec(5), false)},
		{"a: a newer version, create refused", startStep("a", rec(9), true)},
		{"a: finish 5 once 9 started", finishStep("a", 5, 0, done(5))},
		{"a: 9 dead-lettered", failStep("a", failed(9))},
		{"a: 9 dead-lettered again", failStep("a", failed(9))},
		{"a: 9 replayed", startStep("a", rec(9), false)},
		{"a: an older failure", failStep("a", failed(4))},
		{"a: finish 9 on its replay's revision", finishStep("a", 9, 9, done(9))},
		{"a: finish 9 again on a stale revision", finishStep("a", 9, 9, done(9))},
		{"b: a failure first", failStep("b", failed(2))},
		{"b: the same version started", startStep("b", rec(2), false)},
		{"b: a newer version", startStep("b", rec(7), false)},
		{"b: a failure of it", failStep("b", failed(7))},
		{"b: its finish on the revision before the failure", finishStep("b", 7, 15, done(7))},
		{"b: 7 is done: no failure", failStep("b", failed(7))},
	}
	for n, st := range steps {
		var got [2]recResult
		for i, s := range stores {
			r, err := st.do(s, revs[i], n)
			if err != nil {
				t.Fatalf("%s (store %d): %v", st.name, i, err)
			}
			got[i] = r
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Errorf("%s: the bucket %+v, memory %+v", st.name, got[0], got[1])
		}
		for _, id := range []string{"a", "b"} {
			var recs [2]messages.DocRecord
			var oks [2]bool
			for i, s := range stores {
				rec, _, ok, err := s.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				recs[i], oks[i] = rec, ok
			}
			if oks[0] != oks[1] || fmt.Sprint(recs[0]) != fmt.Sprint(recs[1]) {
				t.Errorf("after %s, record %s: the bucket %v %+v, memory %v %+v", st.name, id, oks[0], recs[0], oks[1], recs[1])
			}
		}
	}
}

// recResult is what a step of TestMemKVFollowsTheBucket returned.
type recResult struct {
	found        messages.DocRecord
	wrote, first bool // start: a revision written, the record created
	ok           bool // Finish, Fail
}

// recStep is a step of TestMemKVFollowsTheBucket, the n-th; revOf
// holds the revisions the starts wrote, by step.
type recStep func(s *KVRecords, revOf map[int]uint64, n int) (recResult, error)

// startStep is step 1 of a version.
func startStep(id string, rec messages.DocRecord, createFirst bool) recStep {
	return func(s *KVRecords, revOf map[int]uint64, n int) (recResult, error) {
		st, err := s.start(context.Background(), id, "", rec, startOpts{createFirst: createFirst, replay: true})
		revOf[n] = st.rev
		return recResult{found: st.found, wrote: st.rev != 0, first: st.first}, err
	}
}

// finishStep is step 5 of version seq, on the revision step startedAt
// wrote.
func finishStep(id string, seq uint64, startedAt int, rec messages.DocRecord) recStep {
	return func(s *KVRecords, revOf map[int]uint64, _ int) (recResult, error) {
		ok, err := s.Finish(context.Background(), id, seq, revOf[startedAt], rec)
		return recResult{ok: ok}, err
	}
}

// failStep records a dead letter.
func failStep(id string, rec messages.DocRecord) recStep {
	return func(s *KVRecords, _ map[int]uint64, _ int) (recResult, error) {
		ok, err := s.Fail(context.Background(), id, "", rec)
		return recResult{ok: ok}, err
	}
}
