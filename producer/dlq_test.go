package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// newerChunkers is the chunker registry of workers of a later release
// that know the markdown option "heading_aware" (the workers of the tests
// otherwise refuse it as unknown, as today's registry does).
func newerChunkers() *registry.Registry { return registrytest.With(registrytest.HeadingAware()) }

// process runs a worker with the given chunkers until want requests have
// reached a final outcome, and returns those results.
func (e *env) process(ctx context.Context, chunkers *registry.Registry, want int) []worker.Result {
	e.t.Helper()
	var mu sync.Mutex
	var results []worker.Result
	done := make(chan struct{})
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{
		Config: e.cfg, Sink: subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), Chunkers: chunkers,
		OnResult: func(r worker.Result) {
			if !r.Final() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			results = append(results, r)
			if len(results) == want {
				close(done)
			}
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(rctx) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		e.t.Fatalf("worker: fewer than %d requests finished", want)
	}
	stop()
	if err := <-errc; err != nil {
		e.t.Fatalf("worker.Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(results)
}

// listDLQ returns every dead letter the DLQ holds.
func listDLQ(t *testing.T, d *DLQ, f DLQFilter) []DeadLetterEntry {
	t.Helper()
	var out []DeadLetterEntry
	if _, err := d.List(context.Background(), f, func(e DeadLetterEntry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// streamCount returns the number of messages a stream holds.
func (e *env) streamCount(name string) uint64 {
	e.t.Helper()
	s, err := e.js.Stream(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

// TestDLQReplayUntilFixed: a request the workers refuse is listed,
// replayed, fails again and is replayed again; the DLQ holds exactly the
// newest dead letter each time and the request is always somewhere. Once
// workers that know the option run, a replay processes it and empties the
// DLQ.
func TestDLQReplayUntilFixed(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	content := []byte("# Title\n\nSome text worth chunking.\n")
	p := e.producer(Options{})
	ack, err := p.Enqueue(ctx, Document{ID: "loop/a.md", Content: content, Options: map[string]any{"heading_aware": true}})
	if err != nil {
		t.Fatal(err)
	}
	ingestSeq, streamSeq := ack.Sequence, ack.Sequence
	d := NewDLQ(e.js, DLQOptions{})
	for round := 1; round <= 3; round++ {
		res := e.process(ctx, nil, 1)
		if res[0].Outcome != worker.OutcomePermanent || res[0].StreamSeq != streamSeq || res[0].IngestSeq != ingestSeq {
			t.Fatalf("round %d: %+v, want the request at %d (version %d) dead-lettered", round, res[0], streamSeq, ingestSeq)
		}
		dls := listDLQ(t, d, DLQFilter{})
		if len(dls) != 1 {
			t.Fatalf("round %d: DLQ holds %d dead letters, want exactly the newest", round, len(dls))
		}
		dl := dls[0]
		if dl.IngestSeq != ingestSeq || dl.StreamSeq != streamSeq || dl.DocID != "loop/a.md" || dl.Cause != fault.CauseUnknownOption ||
			dl.Kind != messages.KindPermanent || dl.Subject != "ingest.docs" || dl.Deliveries != 1 || !strings.Contains(dl.Reason, "heading_aware") {
			t.Fatalf("round %d: dead letter %+v", round, dl)
		}
		var got []Replayed
		sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) { got = append(got, r) }})
		if err != nil || sum.Processed != 1 || !sum.OK() || len(got) != 1 || got[0].Action != ActionProcess {
			t.Fatalf("round %d: Replay = %+v, %v, %+v", round, sum, err, got)
		}
		if got[0].StreamSeq <= streamSeq || !strings.HasPrefix(got[0].MsgID, "loop/a.md@"+messages.ContentVersion(content)+"@") {
			t.Errorf("round %d: replayed as %d with id %s", round, got[0].StreamSeq, got[0].MsgID)
		}
		streamSeq = got[0].StreamSeq
		if n, m := e.streamCount(e.cfg.DLQStream), e.streamCount(e.cfg.IngestStream); n != 0 || m != 1 {
			t.Fatalf("round %d: after the replay DLQ holds %d, INGEST %d; want 0 and 1", round, n, m)
		}
		// The replay carries the request as it was, with its own headers.
		s, _ := e.js.Stream(ctx, e.cfg.IngestStream)
		m, err := s.GetMsg(ctx, streamSeq)
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil || req.ID != "loop/a.md" || string(req.Content) != string(content) || m.Subject != "ingest.docs" {
			t.Fatalf("round %d: replayed request %+v on %s, %v", round, req, m.Subject, err)
		}
		for k := range m.Header {
			if strings.HasPrefix(k, "Chunkstream-") && k != messages.HeaderIngestSeq {
				t.Errorf("round %d: replayed request carries %s", round, k)
			}
		}
		if v := m.Header.Get(messages.HeaderIngestSeq); v != fmt.Sprint(ingestSeq) {
			t.Errorf("round %d: replayed request's %s = %q, want its version %d", round, messages.HeaderIngestSeq, v, ingestSeq)
		}
	}
	// Workers that know the option: the replayed request is processed.
	res := e.process(ctx, newerChunkers(), 1)
	if res[0].Outcome != worker.OutcomeAcked || res[0].StreamSeq != streamSeq || res[0].IngestSeq != ingestSeq || res[0].Chunks == 0 {
		t.Fatalf("fixed workers: %+v, want the replay acked with chunks", res[0])
	}
	if n := e.streamCount(e.cfg.DLQStream); n != 0 {
		t.Errorf("DLQ holds %d dead letters after the fix, want 0", n)
	}
	rec, _, ok, err := worker.NewKVRecords(e.top.Docs).Get(ctx, "loop/a.md")
	if err != nil || !ok || rec.State != messages.StateDone || rec.IngestSeq != ingestSeq || rec.LastFailure != (messages.Failure{}) {
		t.Errorf("record = %+v, %v, %v; want done at %d", rec, ok, err, ingestSeq)
	}
}

// TestDLQReplayCrashDuplicatesNeverLoses: a replay that dies between the
// PubAck and the deletion leaves the request in INGEST and its dead letter
// in the DLQ; the next replay sends it again, and after processing the
// DLQ is empty and the document done.
func TestDLQReplayCrashDuplicatesNeverLoses(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "crash/a.md", Content: []byte("# A\n\ntext\n"), Options: map[string]any{"heading_aware": true}}); err != nil {
		t.Fatal(err)
	}
	e.process(ctx, nil, 1)
	crash := errors.New("killed")
	d := NewDLQ(e.js, DLQOptions{})
	d.afterPublish = func(DeadLetterEntry) error { return crash }
	if _, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{}); !errors.Is(err, crash) {
		t.Fatalf("Replay = %v, want the injected crash", err)
	}
	if n, m := e.streamCount(e.cfg.DLQStream), e.streamCount(e.cfg.IngestStream); n != 1 || m != 1 {
		t.Fatalf("after the crash DLQ holds %d, INGEST %d; want 1 and 1 (a duplicate, not a loss)", n, m)
	}
	// The operator runs the replay again.
	sum, err := NewDLQ(e.js, DLQOptions{}).Replay(ctx, DLQFilter{}, ReplayOptions{})
	if err != nil || sum.Processed != 1 || !sum.OK() {
		t.Fatalf("second Replay = %+v, %v", sum, err)
	}
	if n, m := e.streamCount(e.cfg.DLQStream), e.streamCount(e.cfg.IngestStream); n != 0 || m != 2 {
		t.Fatalf("after the second replay DLQ holds %d, INGEST %d; want 0 and 2", n, m)
	}
	res := e.process(ctx, newerChunkers(), 2)
	outcomes := []worker.Outcome{res[0].Outcome, res[1].Outcome}
	slices.Sort(outcomes)
	// Two copies of one version: the second finds it done (a duplicate),
	// or, when both run at once, writes the same chunks again.
	if outcomes[0] != worker.OutcomeAcked || (outcomes[1] != worker.OutcomeAcked && outcomes[1] != worker.OutcomeDuplicate) {
		t.Errorf("outcomes %v, want one acked and the other acked or a duplicate", outcomes)
	}
	if n := e.streamCount(e.cfg.DLQStream); n != 0 {
		t.Errorf("DLQ holds %d, want 0", n)
	}
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "crash/a.md")
	if rec.State != messages.StateDone {
		t.Errorf("record %+v, want done", rec)
	}
}

// TestDLQReplayExpiredObject: a dead letter whose content_ref object is
// gone is reported and kept, nothing is published; once the object is
// there again (the document put back), the replay goes through.
func TestDLQReplayExpiredObject(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	content := mdContent(1, 6000)
	p := e.producer(Options{MaxInline: 4096})
	if _, err := p.Enqueue(ctx, Document{ID: "obj/a.md", Content: content, Options: map[string]any{"heading_aware": true}}); err != nil {
		t.Fatal(err)
	}
	e.process(ctx, nil, 1)
	objects, err := e.js.ObjectStore(ctx, e.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	name := messages.ContentVersion(content)
	if err := objects.Delete(ctx, name); err != nil { // as the bucket's TTL would
		t.Fatal(err)
	}
	d := NewDLQ(e.js, DLQOptions{})
	for _, dry := range []bool{true, false} {
		var got []Replayed
		sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{DryRun: dry, OnResult: func(r Replayed) { got = append(got, r) }})
		if err != nil || sum.Processed != 0 || sum.Kept[KeepObjectExpired] != 1 || sum.OK() {
			t.Fatalf("dry run %v: Replay = %+v, %v; want kept as expired", dry, sum, err)
		}
		if len(got) != 1 || got[0].Action != ActionKeep || !strings.Contains(got[0].Err.Error(), name) {
			t.Errorf("dry run %v: results %+v", dry, got)
		}
	}
	if n, m := e.streamCount(e.cfg.DLQStream), e.streamCount(e.cfg.IngestStream); n != 1 || m != 0 {
		t.Fatalf("DLQ holds %d, INGEST %d; want the dead letter kept and nothing sent", n, m)
	}
	if _, err := objects.PutBytes(ctx, name, content); err != nil {
		t.Fatal(err)
	}
	sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{})
	if err != nil || sum.Processed != 1 || !sum.OK() {
		t.Fatalf("Replay after the object is back = %+v, %v", sum, err)
	}
	if res := e.process(ctx, newerChunkers(), 1); res[0].Outcome != worker.OutcomeAcked {
		t.Errorf("replayed object request: %+v", res[0])
	}
}

// publishDeadLetter stores a dead letter as a worker would (or, with no
// kind, a message that is not one) and returns its DLQ sequence.
func (e *env) publishDeadLetter(payload []byte, ct string, dl messages.DeadLetter) uint64 {
	e.t.Helper()
	m := nats.NewMsg(e.cfg.DLQSubject)
	m.Data = payload
	if ct != "" {
		m.Header.Set(messages.HeaderContentType, ct)
	}
	if dl.Kind != "" {
		dl.Apply(m.Header)
	}
	ack, err := e.js.PublishMsg(context.Background(), m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// TestDLQFilters: each filter selects exactly what it says, for list,
// replay (dry run) and purge; purge without confirmation deletes nothing.
func TestDLQFilters(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	req := func(id string) []byte {
		b, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: id, Content: []byte("x")}, messages.ContentTypeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	perm := func(cause fault.Cause, subject string) messages.DeadLetter {
		return messages.DeadLetter{Reason: "r", Kind: messages.KindPermanent, Cause: cause, Subject: subject, StreamSeq: 1, Deliveries: 1}
	}
	a := e.publishDeadLetter(req("kb/a.md"), messages.ContentTypeJSON, perm("unknown_option", "ingest.docs"))
	b := e.publishDeadLetter(req("kb/b.md"), messages.ContentTypeJSON, perm("too_large", "ingest.docs.eu"))
	c := e.publishDeadLetter(req("wiki/c.md"), messages.ContentTypeJSON, messages.DeadLetter{Reason: "r", Kind: messages.KindExhausted,
		Cause: "max_deliveries", Subject: "ingest.mail", StreamSeq: 2, Deliveries: 8})
	undecodable := e.publishDeadLetter([]byte{0xc1}, "", perm("undecodable", "ingest.docs"))
	// Written before the cause header existed.
	old := e.publishDeadLetter(req("kb/old.md"), messages.ContentTypeJSON, messages.DeadLetter{Reason: "r", Kind: messages.KindPermanent, Subject: "ingest.docs", StreamSeq: 3, Deliveries: 1})
	stray := e.publishDeadLetter(req("kb/stray.md"), messages.ContentTypeJSON, messages.DeadLetter{})
	d := NewDLQ(e.js, DLQOptions{})
	seqs := func(es []DeadLetterEntry) []uint64 {
		var out []uint64
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return out
	}
	all := listDLQ(t, d, DLQFilter{})
	if got := seqs(all); !slices.Equal(got, []uint64{a, b, c, undecodable, old, stray}) {
		t.Fatalf("List(all) = %v", got)
	}
	if all[3].DocID != "" || all[4].Cause != "" || all[4].DocID != "kb/old.md" || all[5].Problem == "" || all[0].Problem != "" {
		t.Errorf("entries: %+v", all)
	}
	tests := []struct {
		name string
		f    DLQFilter
		want []uint64
	}{
		{"kind", DLQFilter{Kind: messages.KindExhausted}, []uint64{c}},
		{"cause", DLQFilter{Cause: "too_large"}, []uint64{b}},
		{"subject exact", DLQFilter{Subject: "ingest.docs"}, []uint64{a, undecodable, old}},
		{"subject wildcard >", DLQFilter{Subject: "ingest.docs.>"}, []uint64{b}},
		{"subject wildcard *", DLQFilter{Subject: "ingest.*"}, []uint64{a, c, undecodable, old}},
		{"id prefix", DLQFilter{IDPrefix: "kb/"}, []uint64{a, b, old, stray}},
		{"combined", DLQFilter{IDPrefix: "kb/", Kind: messages.KindPermanent, Subject: "ingest.docs"}, []uint64{a, old}},
		{"seqs", DLQFilter{Seqs: []uint64{c, a, c}}, []uint64{a, c}},
		{"seqs and cause", DLQFilter{Seqs: []uint64{a, b}, Cause: "too_large"}, []uint64{b}},
		{"nothing", DLQFilter{Cause: "sink"}, nil},
	}
	for _, tt := range tests {
		if got := seqs(listDLQ(t, d, tt.f)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: List(%s) = %v, want %v", tt.name, tt.f, got, tt.want)
		}
		var replayed []uint64
		if _, err := d.Replay(ctx, tt.f, ReplayOptions{DryRun: true, OnResult: func(r Replayed) { replayed = append(replayed, r.Entry.Seq) }}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(replayed, tt.want) {
			t.Errorf("%s: Replay(%s, dry run) saw %v, want %v", tt.name, tt.f, replayed, tt.want)
		}
	}
	if nf, _ := d.List(ctx, DLQFilter{Seqs: []uint64{a, 999}}, func(DeadLetterEntry) error { return nil }); !slices.Equal(nf, []uint64{999}) {
		t.Errorf("List(-seq %d,999) not found = %v, want [999]", a, nf)
	}
	// The stray message is never replayed; the dry run says so.
	sum, err := d.Replay(ctx, DLQFilter{Seqs: []uint64{stray}}, ReplayOptions{DryRun: true})
	if err != nil || sum.Kept[KeepNotDeadLetter] != 1 {
		t.Errorf("Replay(stray) = %+v, %v", sum, err)
	}

	// Purge: a dry run deletes nothing; then exactly the selection goes.
	ps, err := d.Purge(ctx, DLQFilter{IDPrefix: "kb/"}, PurgeOptions{DryRun: true})
	if err != nil || ps.Deleted != 4 || e.streamCount(e.cfg.DLQStream) != 6 {
		t.Fatalf("Purge(dry run) = %+v, %v; DLQ holds %d, want 6", ps, err, e.streamCount(e.cfg.DLQStream))
	}
	// Without a filter and without All it counts and deletes nothing.
	selected := -1
	ps, err = d.Purge(ctx, DLQFilter{}, PurgeOptions{OnSelected: func(n int) error { selected = n; return nil }})
	if !errors.Is(err, ErrPurgeUnscoped) || selected != 6 || ps.Deleted != 0 || e.streamCount(e.cfg.DLQStream) != 6 {
		t.Fatalf("Purge(no filter) = %+v, %v, %d selected; DLQ holds %d, want ErrPurgeUnscoped, 6 selected, 6 kept", ps, err, selected, e.streamCount(e.cfg.DLQStream))
	}
	// A subject filter that matches every subject is no filter either.
	if ps, err = d.Purge(ctx, DLQFilter{Subject: ">"}, PurgeOptions{}); !errors.Is(err, ErrPurgeUnscoped) || ps.Deleted != 0 || e.streamCount(e.cfg.DLQStream) != 6 {
		t.Fatalf("Purge(-subject >) = %+v, %v; DLQ holds %d, want ErrPurgeUnscoped, 6 kept", ps, err, e.streamCount(e.cfg.DLQStream))
	}
	var purged []uint64
	ps, err = d.Purge(ctx, DLQFilter{IDPrefix: "kb/", Kind: messages.KindPermanent}, PurgeOptions{OnEntry: func(e DeadLetterEntry) { purged = append(purged, e.Seq) }})
	if err != nil || ps.Deleted != 3 || !slices.Equal(purged, []uint64{a, b, old}) {
		t.Fatalf("Purge = %+v, %v, deleted %v; want %v", ps, err, purged, []uint64{a, b, old})
	}
	if got := seqs(listDLQ(t, d, DLQFilter{})); !slices.Equal(got, []uint64{c, undecodable, stray}) {
		t.Errorf("after the purge the DLQ holds %v", got)
	}
}

// TestDLQListSnapshot: a listing covers what the stream held when it
// started, in order, and ends even when the last dead letters were
// deleted meanwhile.
func TestDLQListSnapshot(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dl := messages.DeadLetter{Reason: "r", Kind: messages.KindPermanent, Cause: "x", Subject: "ingest.docs", StreamSeq: 1, Deliveries: 1}
	var seqs []uint64
	for range 600 {
		seqs = append(seqs, e.publishDeadLetter([]byte(`{"v":1,"id":"a"}`), messages.ContentTypeJSON, dl))
	}
	d := NewDLQ(e.js, DLQOptions{})
	s, _ := e.js.Stream(ctx, e.cfg.DLQStream)
	var got []uint64
	_, err := d.List(ctx, DLQFilter{}, func(en DeadLetterEntry) error {
		got = append(got, en.Seq)
		if len(got) == 1 {
			// Meanwhile: a new dead letter arrives and the tail is deleted.
			e.publishDeadLetter([]byte(`{"v":1,"id":"new"}`), messages.ContentTypeJSON, dl)
			for _, seq := range seqs[500:] {
				if err := s.DeleteMsg(ctx, seq); err != nil {
					t.Fatal(err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Up to 256 dead letters may already wait in the client when the tail
	// is deleted; the listing shows those, and never the new one.
	if len(got) < 500 || len(got) > 600 || !slices.Equal(got, seqs[:len(got)]) {
		t.Errorf("listed %d dead letters (%v…), want the first 500 to 600 in order", len(got), got[:min(5, len(got))])
	}
	// Everything after the first dead letter is deleted while the listing
	// runs, nothing new arrives: the listing still ends, with what the
	// client had received. The server delivers while the deletes run, one
	// request at a time, so a delivery may pass the deleter: the listing is
	// the first dead letter and then any of the others, in order.
	all := listDLQ(t, d, DLQFilter{})
	got = nil
	_, err = d.List(ctx, DLQFilter{}, func(en DeadLetterEntry) error {
		got = append(got, en.Seq)
		if len(got) == 1 {
			for _, x := range all[1:] {
				if err := s.DeleteMsg(ctx, x.Seq); err != nil {
					t.Fatal(err)
				}
			}
		}
		return nil
	})
	if err != nil || len(got) == 0 || got[0] != seqs[0] || !isSubsequence(got, seqs) {
		t.Errorf("listing while the rest is deleted = %d dead letters (%v…%v), %v; want %d, then others of %v… in order", len(got), got[:min(3, len(got))], got[max(0, len(got)-3):], err, seqs[0], seqs[:3])
	}
	// The listings left no consumer behind.
	if info, err := s.Info(ctx); err != nil || info.State.Consumers != 0 {
		t.Errorf("%s has %d consumers after the listings (%v), want 0", e.cfg.DLQStream, info.State.Consumers, err)
	}
}

// TestBackfillResendsDeadLettered: the producer's skip treats a
// dead-lettered record as not done, even when it holds the file's
// version.
func TestBackfillResendsDeadLettered(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	content := []byte("# A\n")
	if err := os.WriteFile(filepath.Join(dir, "a.md"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	recs := worker.NewKVRecords(e.top.Docs)
	rec := messages.DocRecord{IngestSeq: 1, DocVersion: messages.ContentVersion(content), Op: messages.OpUpsert,
		LastFailure: messages.Failure{Cause: "sink", Reason: "r", Time: time.Now().UTC(), IngestSeq: 1}}
	if _, err := recs.Fail(ctx, "a.md", "", rec); err != nil {
		t.Fatal(err)
	}
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DryRun: true})
	if err != nil || s.Sent != 1 || s.Skipped != 0 {
		t.Errorf("Backfill over a dead-lettered record = %+v, %v; want it sent", s.Stats, err)
	}
	// The same record done (with the settings fingerprint of the request
	// the backfill would send) is skipped: the test can tell the two
	// apart.
	kv := e.top.Docs
	opts, err := registry.Default().Resolve("markdown")
	if err != nil {
		t.Fatal(err)
	}
	settings := messages.Settings{Chunker: "markdown", Options: opts, Subject: "ingest.docs"}
	rec.State, rec.LastFailure = messages.StateDone, messages.Failure{}
	if rec.Fingerprint, err = settings.Fingerprint(); err != nil {
		t.Fatal(err)
	}
	val, _ := messages.EncodeDocRecord(rec)
	if _, err := kv.Put(ctx, messages.DocRecordKey("a.md"), val); err != nil {
		t.Fatal(err)
	}
	if s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DryRun: true}); err != nil || s.Skipped != 1 {
		t.Errorf("Backfill over a done record = %+v, %v; want it skipped", s.Stats, err)
	}
}

// TestDLQBeforeAnyWorker: before a worker set up the topology there is
// no dead letter stream: every verb finds no dead letters, none fails.
func TestDLQBeforeAnyWorker(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, ns.ClientURL())
	ctx := context.Background()
	d := NewDLQ(js, DLQOptions{})
	if got := listDLQ(t, d, DLQFilter{}); len(got) != 0 {
		t.Errorf("List = %v, want none", got)
	}
	if sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{}); err != nil || sum.Processed+sum.Removed+sum.KeptTotal() != 0 {
		t.Errorf("Replay = %+v, %v", sum, err)
	}
	if sum, err := d.Purge(ctx, DLQFilter{Seqs: []uint64{3}}, PurgeOptions{}); err != nil || sum.Deleted != 0 || !slices.Equal(sum.NotFound, []uint64{3}) {
		t.Errorf("Purge -seq 3 = %+v, %v; want 3 not found", sum, err)
	}
}

// isSubsequence reports whether sub is in seq, in seq's order.
func isSubsequence(sub, seq []uint64) bool {
	i := 0
	for _, x := range seq {
		if i < len(sub) && sub[i] == x {
			i++
		}
	}
	return i == len(sub)
}

// TestDLQTenantsApart: two tenants' documents of one id are two documents
// to the DLQ too. A tenant's dead letter is read against its own record,
// not against the record of the untenanted document of the same id, which
// is newer and done: the dead letter stays current and a replay processes
// it. -tenant selects one tenant's dead letters, and purging them
// dismisses that tenant's record only.
func TestDLQTenantsApart(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	p := e.producer(Options{})
	refused := map[string]any{"heading_aware": true}
	content := []byte("# Title\n\nSome text worth chunking.\n")
	send := func(doc Document) uint64 {
		t.Helper()
		ack, err := p.Enqueue(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	v1 := send(Document{ID: "same.md", Tenant: "t1", Content: content, Options: refused})
	send(Document{ID: "other.md", Tenant: "t1", Content: content, Options: refused})
	send(Document{ID: "other.md", Content: content, Options: refused})
	if res := e.process(ctx, nil, 3); len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	send(Document{ID: "same.md", Content: content}) // the untenanted same.md: newer, done
	if res := e.process(ctx, nil, 1); res[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("untenanted same.md: %+v", res[0])
	}

	d := NewDLQ(e.js, DLQOptions{})
	got := map[string]DeadLetterEntry{}
	for _, dl := range listDLQ(t, d, DLQFilter{}) {
		if err := d.Standing(ctx, &dl); err != nil {
			t.Fatal(err)
		}
		got[dl.Tenant+"/"+dl.DocID] = dl
	}
	if dl := got["t1/same.md"]; len(got) != 3 || dl.Standing != StandingCurrent || dl.RecordSeq != v1 {
		t.Fatalf("dead letters %+v; want t1's same.md current against its own record (version %d)", got, v1)
	}
	if n := len(listDLQ(t, d, DLQFilter{Tenant: "t2"})); n != 0 {
		t.Errorf("-tenant t2 selects %d dead letters, want 0", n)
	}
	if n := len(listDLQ(t, d, DLQFilter{Tenant: "t1"})); n != 2 {
		t.Errorf("-tenant t1 selects %d dead letters, want 2", n)
	}

	// Purging t1's other.md dismisses t1's record, not the untenanted one.
	sum, err := d.Purge(ctx, DLQFilter{Tenant: "t1", IDPrefix: "other"}, PurgeOptions{})
	if err != nil || sum.Deleted != 1 {
		t.Fatalf("Purge = %+v, %v; want 1 deleted", sum, err)
	}
	recs := worker.NewKVRecords(e.top.Docs)
	for rid, want := range map[string]messages.State{
		messages.RecordID("t1", "other.md"): messages.StateDismissed,
		"other.md":                          messages.StateDeadLettered,
	} {
		rec, _, ok, err := recs.Get(ctx, rid)
		if err != nil || !ok || rec.State != want {
			t.Errorf("record %q = %+v, %v, %v; want %s", rid, rec, ok, err, want)
		}
	}

	// The replay of t1's same.md processes it; it is not removed as
	// superseded by the other document.
	var replayed []Replayed
	rs, err := d.Replay(ctx, DLQFilter{Tenant: "t1"}, ReplayOptions{OnResult: func(r Replayed) { replayed = append(replayed, r) }})
	if err != nil || rs.Processed != 1 || len(replayed) != 1 || replayed[0].Action != ActionProcess {
		t.Fatalf("Replay = %+v, %v, %+v; want t1's same.md processed", rs, err, replayed)
	}
	if res := e.process(ctx, newerChunkers(), 1); res[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("replayed: %+v", res[0])
	}
	rec, _, ok, err := recs.Get(ctx, messages.RecordID("t1", "same.md"))
	if err != nil || !ok || rec.State != messages.StateDone || rec.IngestSeq != v1 {
		t.Errorf("t1's same.md record = %+v, %v, %v; want done at version %d", rec, ok, err, v1)
	}
}

// TestObjectRenewedPastHalfItsTTL: a document stored in the Object Store
// and sent again while its object is younger than half the bucket's TTL
// reuses it; once older, it is stored again, so that the new request does
// not name an object about to expire (the clock is moved, not waited on).
func TestObjectRenewedPastHalfItsTTL(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	content := mdContent(1, 6000)
	p := e.producer(Options{MaxInline: 4096})
	objects, err := e.js.ObjectStore(ctx, e.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	name := messages.ContentVersion(content)
	stored := func() time.Time {
		t.Helper()
		info, err := objects.GetInfo(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return info.ModTime
	}
	send := func(id string) {
		t.Helper()
		if _, err := p.Enqueue(ctx, Document{ID: id, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	send("a.md")
	first := stored()
	p.now = func() time.Time { return first.Add(e.cfg.ObjectsTTL/2 - time.Minute) }
	send("copy-of-a.md")
	if got := stored(); !got.Equal(first) {
		t.Errorf("object stored again at %v while younger than half its TTL", got)
	}
	p.now = func() time.Time { return first.Add(e.cfg.ObjectsTTL/2 + time.Minute) }
	send("another-copy.md")
	if got := stored(); !got.After(first) {
		t.Errorf("object of %v kept past half its TTL, want it stored again", first)
	}
}

// TestPurgeDismissesOnlyItsFailure: purging a dead letter dismisses the
// record's failure only when that failure is the dead letter's (rule
// "Purge dismisses", docs/design.md). Purging the dead letter of a bulk's
// refused twin (same ingest_seq, another version), or the dead letter a
// crashed replay left behind once that replay failed again (same version,
// a later failure with a dead letter of its own), leaves the record
// dead-lettered; purging the record's own dead letter then dismisses it.
func TestPurgeDismissesOnlyItsFailure(t *testing.T) {
	refused := map[string]any{"heading_aware": true}
	for _, tc := range []struct {
		name string
		// setup leaves two dead letters of a.md; it returns the sequence
		// of the one whose failure the record does not hold, then the
		// record's own.
		setup func(t *testing.T, e *env, ctx context.Context) (other, own uint64)
	}{
		{"bulk twin", func(t *testing.T, e *env, ctx context.Context) (uint64, uint64) {
			e.publishBulk(ctx,
				messages.IngestRequest{V: messages.Version, ID: "a.md", Content: []byte("# One\n\nfirst version\n"), Options: refused},
				messages.IngestRequest{V: messages.Version, ID: "a.md", Content: []byte("# Two\n\nsecond version\n")})
			e.process(ctx, nil, 2)
			d := NewDLQ(e.js, DLQOptions{})
			var other, own uint64
			for _, dl := range listDLQ(t, d, DLQFilter{}) {
				if err := d.Standing(ctx, &dl); err != nil {
					t.Fatal(err)
				}
				if dl.Standing == StandingShared {
					other = dl.Seq
				} else {
					own = dl.Seq
				}
			}
			return other, own
		}},
		{"replay failed again", func(t *testing.T, e *env, ctx context.Context) (uint64, uint64) {
			if _, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "a.md", Content: []byte("# A\n\ntext\n"), Options: refused}); err != nil {
				t.Fatal(err)
			}
			e.process(ctx, nil, 1)
			d := NewDLQ(e.js, DLQOptions{})
			first := listDLQ(t, d, DLQFilter{})[0].Seq
			crash := errors.New("killed")
			d.afterPublish = func(DeadLetterEntry) error { return crash } // published, its dead letter kept
			if _, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{}); !errors.Is(err, crash) {
				t.Fatalf("Replay = %v, want the injected crash", err)
			}
			e.process(ctx, nil, 1) // the replay fails again: a second dead letter
			all := listDLQ(t, d, DLQFilter{})
			return first, all[len(all)-1].Seq
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			other, own := tc.setup(t, e, ctx)
			if n := e.streamCount(e.cfg.DLQStream); n != 2 || other == 0 || own == 0 || other == own {
				t.Fatalf("DLQ holds %d, dead letters %d and %d; want two", n, other, own)
			}
			d := NewDLQ(e.js, DLQOptions{})
			recs := worker.NewKVRecords(e.top.Docs)
			for _, step := range []struct {
				seq  uint64
				want messages.State
			}{{other, messages.StateDeadLettered}, {own, messages.StateDismissed}} {
				if sum, err := d.Purge(ctx, DLQFilter{Seqs: []uint64{step.seq}}, PurgeOptions{}); err != nil || sum.Deleted != 1 {
					t.Fatalf("Purge -seq %d = %+v, %v", step.seq, sum, err)
				}
				if rec, _, _, err := recs.Get(ctx, "a.md"); err != nil || rec.State != step.want {
					t.Errorf("after purging dead letter %d the record is %s (%v), want %s", step.seq, rec.State, err, step.want)
				}
			}
		})
	}
}

// TestDeadLetterWithoutContentHoldsItsVersion: a request refused for
// having no content records its failure with no doc_version; its dead
// letter is of the version the record holds (standing current, not
// shared with a bulk twin), and purging it dismisses the failure.
func TestDeadLetterWithoutContentHoldsItsVersion(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	const seq = 5
	val, err := messages.EncodeDocRecord(messages.DocRecord{IngestSeq: seq, Op: messages.OpUpsert, State: messages.StateDeadLettered,
		LastFailure: messages.Failure{Cause: "no_content", IngestSeq: seq, StreamSeq: seq}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.top.Docs.Put(ctx, messages.DocRecordKey("a.md"), val); err != nil {
		t.Fatal(err)
	}
	req, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: "a.md"}, messages.ContentTypeJSON)
	if err != nil {
		t.Fatal(err)
	}
	e.publishDeadLetter(req, messages.ContentTypeJSON, messages.DeadLetter{Reason: "no content", Kind: messages.KindPermanent,
		Cause: "no_content", Subject: "ingest.docs", StreamSeq: seq, IngestSeq: seq, Deliveries: 1})
	d := NewDLQ(e.js, DLQOptions{})
	dl := listDLQ(t, d, DLQFilter{})[0]
	if err := d.Standing(ctx, &dl); err != nil || dl.Standing != StandingCurrent {
		t.Errorf("standing %q (%v), want current", dl.Standing, err)
	}
	if sum, err := d.Purge(ctx, DLQFilter{IDPrefix: "a.md"}, PurgeOptions{}); err != nil || sum.Deleted != 1 {
		t.Fatalf("Purge = %+v, %v", sum, err)
	}
	if rec, _, _, err := worker.NewKVRecords(e.top.Docs).Get(ctx, "a.md"); err != nil || rec.State != messages.StateDismissed {
		t.Errorf("record %s (%v) after the purge, want dismissed", rec.State, err)
	}
}
