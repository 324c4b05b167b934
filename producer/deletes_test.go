package producer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestDeleteMissingRules: -delete-missing needs a scope, says what it
// deletes before sending anything, needs ConfirmDeletes above the
// threshold, and, scoped, deletes exactly the gone documents of its scope,
// each on the subject its record names; the refusals send nothing.
func TestDeleteMissingRules(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// kb/ holds 20 documents sent from two folders on two subjects, wiki/
	// 10 more; a worker processes them all, so every record names its
	// subject.
	docs, kbOther, wiki := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\ntext\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		write(docs, fmt.Sprintf("d%02d.md", i))
		write(kbOther, fmt.Sprintf("o%02d.md", i))
		write(wiki, fmt.Sprintf("w%02d.md", i))
	}
	for _, run := range []struct{ subject, prefix, dir string }{
		{"ingest.docs", "kb/", docs}, {"ingest.kb", "kb/", kbOther}, {"ingest.wiki", "wiki/", wiki},
	} {
		if s, err := e.producer(Options{Subject: run.subject}).Backfill(ctx, BackfillOptions{Paths: []string{run.dir}, IDPrefix: run.prefix}); err != nil || s.Sent != 10 {
			t.Fatalf("backfill of %s on %s = %+v, %v", run.dir, run.subject, s.Stats, err)
		}
	}
	e.runWorker(ctx, 30)

	ingest, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	lastSeq := func() uint64 {
		t.Helper()
		info, err := ingest.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	// One file of each kb/ folder and one of wiki/ are removed.
	for _, p := range []string{filepath.Join(docs, "d03.md"), filepath.Join(kbOther, "o07.md"), filepath.Join(wiki, "w01.md")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	both := []string{docs, kbOther}
	type outcome struct {
		plan DeletePlan
		sum  Summary
		err  error
	}
	backfill := func(o BackfillOptions) outcome {
		t.Helper()
		var got outcome
		reported := false
		o.DeleteMissing = true
		o.OnDeletes = func(d DeletePlan) { got.plan, reported = d, true }
		got.sum, got.err = e.producer(Options{Subject: "ingest.docs"}).Backfill(ctx, o)
		if !reported && got.err == nil {
			t.Errorf("%+v: OnDeletes not called", o)
		}
		return got
	}

	// Refusals: no scope (even with a dry run's knowledge that only 3
	// would go), and the whole pipeline's documents without ConfirmDeletes
	// when they are over the threshold; nothing is sent.
	before := lastSeq()
	unscoped := backfill(BackfillOptions{Paths: both})
	var refused *DeleteRefusedError
	if !errors.Is(unscoped.err, ErrDeleteUnscoped) || !errors.As(unscoped.err, &refused) {
		t.Fatalf("no scope: %v, want ErrDeleteUnscoped", unscoped.err)
	}
	// Without a prefix the walk's ids are "d03.md", so every recorded
	// document is gone: all 30, on their three subjects.
	if p := refused.Plan; !p.Unscoped || len(p.IDs) != 30 || p.Recorded != 30 ||
		!maps.Equal(p.Subjects, map[string]int{"ingest.docs": 10, "ingest.kb": 10, "ingest.wiki": 10}) {
		t.Errorf("unscoped plan = %+v", p)
	}
	want := `producer: deletes without a scope: DeleteMissing would delete 30 of the 30 documents recorded (100%), on ingest.docs (10), ingest.kb (10), ingest.wiki (10); set IDPrefix, or DeleteAll; nothing was sent`
	if unscoped.err.Error() != want {
		t.Errorf("no scope:\n%v\nwant\n%s", unscoped.err, want)
	}
	// A prefix that is not a folder ("kb" holds "kb2/…" and "kbase/…" too)
	// is no scope for deletes.
	if nf := backfill(BackfillOptions{Paths: both, IDPrefix: "kb", ConfirmDeletes: true}); !errors.Is(nf.err, ErrDeletePrefix) || !errors.As(nf.err, &refused) {
		t.Errorf("-id-prefix kb: %v, want ErrDeletePrefix", nf.err)
	}
	all := backfill(BackfillOptions{Paths: both, DeleteAll: true})
	if !errors.Is(all.err, ErrDeleteUnconfirmed) || len(all.plan.IDs) != 30 {
		t.Errorf("DeleteAll without ConfirmDeletes: %v (%d ids), want ErrDeleteUnconfirmed", all.err, len(all.plan.IDs))
	}
	if _, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: both, DeleteMissing: true, DeleteAll: true, IDPrefix: "kb/"}); err == nil {
		t.Error("DeleteAll with IDPrefix: no error")
	}
	if got := lastSeq(); got != before {
		t.Fatalf("the refused runs published: INGEST's last sequence %d, was %d", got, before)
	}

	// A dry run is never refused and lists the deletes.
	var dry []string
	d := backfill(BackfillOptions{Paths: both, DryRun: true, OnDryRun: func(p Planned) {
		if p.Op == messages.OpDelete {
			dry = append(dry, p.ID)
		}
	}})
	if d.err != nil || len(dry) != 30 || !d.plan.Unscoped {
		t.Errorf("unscoped dry run: %v, %d deletes listed", d.err, len(dry))
	}

	// Over the threshold: 3 of the 20 kb/ documents gone after two more
	// removals is 15%.
	write(docs, "d03.md")
	for _, p := range []string{filepath.Join(docs, "d05.md"), filepath.Join(docs, "d06.md")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	over := backfill(BackfillOptions{Paths: both, IDPrefix: "kb/"})
	if !errors.Is(over.err, ErrDeleteUnconfirmed) || !over.plan.OverThreshold || len(over.plan.IDs) != 3 || over.plan.Recorded != 20 {
		t.Fatalf("3 of 20: %v, plan %+v; want ErrDeleteUnconfirmed", over.err, over.plan)
	}
	want = `producer: deletes over the threshold: DeleteMissing would delete 3 of the 20 documents recorded under "kb/" (15%), on ingest.docs (2), ingest.kb (1), more than 10%; set ConfirmDeletes; nothing was sent`
	if over.err.Error() != want {
		t.Errorf("over the threshold:\n%v\nwant\n%s", over.err, want)
	}
	if got := lastSeq(); got != before {
		t.Fatalf("the refused run published: INGEST's last sequence %d, was %d", got, before)
	}

	// Under the threshold (2 of 20 once d05.md is back) it needs no
	// confirmation: exactly kb/'s two gone documents are deleted, each on
	// its own subject. (The nine o*.md left, sent on ingest.kb before, are
	// stale for this run on ingest.docs, a subject being a setting, and
	// go again.)
	write(docs, "d05.md")
	under := backfill(BackfillOptions{Paths: both, IDPrefix: "kb/"})
	if under.err != nil || under.plan.OverThreshold || under.sum.Deleted != 2 || under.sum.Sent != 11 || under.sum.Stale != 9 {
		t.Fatalf("2 of 20: %v, %+v, plan %+v; want 2 deletes and 9 stale upserts", under.err, under.sum.Stats, under.plan)
	}
	if !slices.Equal(under.plan.IDs, []string{"kb/d06.md", "kb/o07.md"}) {
		t.Errorf("deletes %v, want kb/d06.md and kb/o07.md", under.plan.IDs)
	}
	results := e.runWorker(ctx, 11)
	for id, subject := range map[string]string{"kb/d06.md": "ingest.docs", "kb/o07.md": "ingest.kb"} {
		rs := results[id]
		if len(rs) != 1 || rs[0].Subject != subject || rs[0].Outcome != worker.OutcomeAcked {
			t.Errorf("%s: %+v, want its delete acked from %s", id, rs, subject)
		}
		rec, _, _, err := worker.NewKVRecords(e.top.Docs).Get(ctx, id)
		if err != nil || rec.Op != messages.OpDelete || rec.State != messages.StateDone || rec.Subject != subject {
			t.Errorf("record of %s = %+v, %v; want a done delete on %s", id, rec, err, subject)
		}
	}
	if rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "wiki/w01.md"); rec.Op != messages.OpUpsert {
		t.Errorf("wiki/w01.md, outside the scope, is %+v", rec)
	}

	// ConfirmDeletes lets a run over the threshold go.
	for _, name := range []string{"d00.md", "d01.md", "d02.md"} {
		if err := os.Remove(filepath.Join(docs, name)); err != nil {
			t.Fatal(err)
		}
	}
	if r := backfill(BackfillOptions{Paths: both, IDPrefix: "kb/"}); !errors.Is(r.err, ErrDeleteUnconfirmed) {
		t.Errorf("3 of 18: %v, want ErrDeleteUnconfirmed", r.err)
	}
	if r := backfill(BackfillOptions{Paths: both, IDPrefix: "kb/", ConfirmDeletes: true}); r.err != nil || r.sum.Deleted != 3 {
		t.Errorf("3 of 18 with ConfirmDeletes: %v, %+v", r.err, r.sum.Stats)
	}
	e.runWorker(ctx, 3)

	// A record naming a subject no stream stores refuses the run.
	kv, err := e.js.KeyValue(ctx, e.cfg.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, messages.DocRecordKey("kb/moved.md"), []byte(`{"ingest_seq":1,"op":"upsert","subject":"archive.kb","state":"done"}`)); err != nil {
		t.Fatal(err)
	}
	before = lastSeq()
	r := backfill(BackfillOptions{Paths: both, IDPrefix: "kb/"})
	if !errors.Is(r.err, ErrDeleteSubject) || !errors.As(r.err, &refused) || refused.Subject != "archive.kb" || refused.ID != "kb/moved.md" {
		t.Errorf("a subject no stream stores: %v", r.err)
	}
	if got := lastSeq(); got != before {
		t.Errorf("the refused run published: INGEST's last sequence %d, was %d", got, before)
	}
}

// refuseDeletes is a sink that fails every delete permanently (one that
// could not apply it).
type refuseDeletes struct{ worker.Sink }

func (r refuseDeletes) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if doc.Op == worker.OpDelete {
		return fault.Permanent(errors.New("sink refused the delete"))
	}
	return r.Sink.Write(ctx, doc, chunks)
}

// TestDeleteMissingResendsDeleteNotDone: a backfill skips only done
// records (docs/operations.md's runbook: once the cause is fixed, a later
// backfill re-sends every dead-lettered document), deletes included: the
// delete of a removed file whose delete was dead-lettered is sent again by
// the next -delete-missing, and so is it after its dead letter was purged
// (record dismissed). Once a delete is done, it is not sent again.
func TestDeleteMissingResendsDeleteNotDone(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeFiles(t, dir, 12, 300)
	const gone = "kb/d00/f00000.md"
	run := func() Summary {
		t.Helper()
		s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/", DeleteMissing: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run()
	e.runWorker(ctx, 12)
	if err := os.Remove(filepath.Join(dir, "d00", "f00000.md")); err != nil {
		t.Fatal(err)
	}
	refusing := refuseDeletes{subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)}
	recs := worker.NewKVRecords(e.top.Docs)
	for _, step := range []struct {
		name   string
		before func()
		state  messages.State // the delete's record when the backfill runs
	}{
		{"dead-lettered", func() {}, messages.StateDeadLettered},
		{"dismissed", func() {
			// The dead letters of both deletes sent: the runbook's purge.
			if sum, err := NewDLQ(e.js, DLQOptions{}).Purge(ctx, DLQFilter{IDPrefix: "kb/"}, PurgeOptions{}); err != nil || sum.Deleted != 2 {
				t.Fatalf("Purge = %+v, %v", sum, err)
			}
		}, messages.StateDismissed},
	} {
		if s := run(); s.Deleted != 1 {
			t.Fatalf("before %s: -delete-missing sent %d deletes, want 1", step.name, s.Deleted)
		}
		e.runWorkerWith(ctx, refusing, 1) // the delete is dead-lettered
		step.before()
		if rec, _, _, err := recs.Get(ctx, gone); err != nil || rec.Op != messages.OpDelete || rec.State != step.state {
			t.Fatalf("%s: record %+v, %v; want a %s delete", step.name, rec, err, step.state)
		}
	}
	if s := run(); s.Deleted != 1 {
		t.Fatalf("after the purge: -delete-missing sent %d deletes, want 1", s.Deleted)
	}
	e.runWorker(ctx, 1) // the cause is fixed: the delete is done
	if v := e.view(ctx); len(v[gone]) > 0 {
		t.Errorf("the removed file's %d chunks are still on CHUNKS", len(v[gone]))
	}
	if s := run(); s.Deleted != 0 || s.Sent != 0 {
		t.Errorf("after the delete was done: %+v; want nothing sent", s.Stats)
	}
}
