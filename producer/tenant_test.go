package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestSendsKeepTenantsApart: one producer sends the documents of two tenants and of
// none under equal ids and content; each is its own document to every
// operation. All three requests are stored (none is taken for a retry of
// another by INGEST's duplicate window); Delete deletes one tenant's only;
// and a tenant's -delete-missing sends its deletes as that tenant's, in
// the collection it sends to, leaving the untenanted document of the same
// id as it was.
func TestSendsKeepTenantsApart(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := e.producer(Options{})
	content := []byte("# Same\n\nThe same text for everyone.\n")
	for _, tenant := range []string{"t1", "t2", ""} {
		if _, err := p.Enqueue(ctx, Document{ID: "a.md", Tenant: tenant, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.streamCount(e.cfg.IngestStream); n != 3 {
		t.Fatalf("INGEST holds %d requests after three tenants' sends of a.md, want 3", n)
	}
	e.runWorker(ctx, 3)
	if _, err := p.Delete(ctx, Document{ID: "a.md", Tenant: "t2"}); err != nil {
		t.Fatal(err)
	}
	e.runWorker(ctx, 1)

	// kb/x.md and kb/y.md sent for t1 (collection c1) and for no tenant;
	// y.md is removed and t1's backfill deletes what is gone.
	dir := t.TempDir()
	for _, name := range []string{"x.md", "y.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\ntext\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t1 := Document{Tenant: "t1", Collection: "c1"}
	for _, tmpl := range []Document{t1, {}} {
		if s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/", Template: tmpl}); err != nil || s.Sent != 2 {
			t.Fatalf("backfill %+v = %+v, %v", tmpl, s.Stats, err)
		}
	}
	e.runWorker(ctx, 4)
	if err := os.Remove(filepath.Join(dir, "y.md")); err != nil {
		t.Fatal(err)
	}
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/", Template: t1, DeleteMissing: true, ConfirmDeletes: true})
	if err != nil || s.Deleted != 1 {
		t.Fatalf("t1's delete-missing = %+v, %v; want 1 delete", s.Stats, err)
	}
	// The delete names t1's collection, as its sends did.
	ingest, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ingest.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ingest.GetMsg(ctx, info.State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
	if err != nil || !req.IsDelete() || req.ID != "kb/y.md" || req.Tenant != "t1" || req.Collection != "c1" {
		t.Errorf("the delete sent: %+v, %v; want kb/y.md of t1 in c1", req, err)
	}
	e.runWorker(ctx, 1)

	recs := worker.NewKVRecords(e.top.Docs)
	for rid, want := range map[string]messages.Op{
		messages.RecordID("t1", "a.md"):    messages.OpUpsert,
		messages.RecordID("t2", "a.md"):    messages.OpDelete,
		"a.md":                             messages.OpUpsert,
		messages.RecordID("t1", "kb/x.md"): messages.OpUpsert,
		messages.RecordID("t1", "kb/y.md"): messages.OpDelete,
		"kb/y.md":                          messages.OpUpsert,
	} {
		rec, _, ok, err := recs.Get(ctx, rid)
		if err != nil || !ok || rec.State != messages.StateDone || rec.Op != want {
			t.Errorf("record %q = %+v, %v, %v; want %s done", rid, rec, ok, err, want)
		}
	}
}

// TestTenantReadsItsRecordsAlone: a tenant's run reads its own records
// only (what it skips, waits for and deletes are its own): with many
// records of another tenant and of no tenant, loading one tenant's or the
// untenanted records receives those alone.
func TestTenantReadsItsRecordsAlone(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := messages.EncodeDocRecord(messages.DocRecord{IngestSeq: 1, Op: messages.OpUpsert, State: messages.StateDone})
	if err != nil {
		t.Fatal(err)
	}
	put := func(tenant, id string) {
		if _, err := e.top.Docs.Put(ctx, messages.DocRecordKey(messages.RecordID(tenant, id)), rec); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		put("big", fmt.Sprintf("d%05d.md", i))
	}
	put("small", "a.md")
	put("", "plain.md")
	put("", "b.c/d.md")
	nc, err := nats.Connect(e.nc.ConnectedUrl())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tenant string
		want   int
	}{{"small", 1}, {"", 2}} {
		before := nc.Stats().InMsgs
		recs, err := loadRecords(ctx, js, e.cfg.DocsBucket, tt.tenant)
		if err != nil || len(recs) != tt.want {
			t.Fatalf("loadRecords(%q) = %d records, %v; want %d", tt.tenant, len(recs), err, tt.want)
		}
		if got := nc.Stats().InMsgs - before; got > 20 {
			t.Errorf("loading %q's %d records received %d messages: want its own alone", tt.tenant, tt.want, got)
		}
	}
}

// presentWorker writes the presence of a running worker "w1" that says
// it reads reads (nil: a worker of a build before the field).
func (e *env) presentWorker(ctx context.Context, reads []string) {
	e.t.Helper()
	now := time.Now().UTC()
	val, err := messages.EncodeWorkerPresence(messages.WorkerPresence{ID: "w1", Host: "old-host", Started: now, Seen: now, Reads: reads})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.top.Docs.Put(ctx, messages.WorkerKey("w1"), val); err != nil {
		e.t.Fatal(err)
	}
}

// TestReplayRefusedBesideWorkersBehind: a replay that would publish a
// tenant's request, or a whole bulk, is refused like a producer run
// (ErrWorkersBehind, docs/operations.md "Upgrading") while a running
// worker does not read them: nothing is published and every selected
// dead letter stays, the untenanted one beside it too. A dry run still
// reports; once the worker reads them, the replay goes through. A replay
// of untenanted single requests goes through beside the old worker.
func TestReplayRefusedBesideWorkersBehind(t *testing.T) {
	dl := messages.DeadLetter{Reason: "r", Kind: messages.KindPermanent, Cause: "unknown_option", Subject: "ingest.docs", StreamSeq: 1, Deliveries: 1}
	req := func(t *testing.T, tenant string) []byte {
		b, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: "a.md", Tenant: tenant, Content: []byte("# A\n")}, messages.ContentTypeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		tenant  string // of the second dead letter's request
		bulk    bool   // the second dead letter is a whole bulk that did not decode
		refused bool
	}{
		{"tenant", "acme", false, true},
		{"bulk", "", true, true},
		{"neither", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			e.publishDeadLetter(req(t, ""), messages.ContentTypeJSON, dl)
			if tc.bulk {
				e.publishDeadLetter([]byte("not a bulk"), messages.ContentTypeBulk, dl)
			} else {
				e.publishDeadLetter(req(t, tc.tenant), messages.ContentTypeJSON, dl)
			}
			e.presentWorker(ctx, nil)
			d := NewDLQ(e.js, DLQOptions{})
			if !tc.refused {
				// -seq 99 is not found: reported as by any replay.
				sum, err := d.Replay(ctx, DLQFilter{Seqs: []uint64{1, 2, 99}}, ReplayOptions{})
				if err != nil || sum.Processed != 2 || !slices.Equal(sum.NotFound, []uint64{99}) {
					t.Errorf("Replay of untenanted requests beside an old worker = %+v, %v; want 2 replayed, 99 not found", sum, err)
				}
				return
			}
			sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{})
			if !errors.Is(err, ErrWorkersBehind) || sum.Processed != 0 {
				t.Errorf("Replay beside a worker of an earlier build = %+v, %v; want ErrWorkersBehind", sum, err)
			}
			if n, m := e.streamCount(e.cfg.DLQStream), e.streamCount(e.cfg.IngestStream); n != 2 || m != 0 {
				t.Errorf("after the refused replay DLQ holds %d, INGEST %d; want 2 and 0", n, m)
			}
			if sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{DryRun: true}); err != nil || sum.Processed != 2 {
				t.Errorf("dry run = %+v, %v; want 2 to be replayed", sum, err)
			}
			e.presentWorker(ctx, messages.WorkerReads())
			if sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{}); err != nil || sum.Processed != 2 || !sum.OK() {
				t.Errorf("Replay beside an upgraded worker = %+v, %v; want 2 replayed", sum, err)
			}
		})
	}
}

// TestWorkersBehindRefused: while a running worker of an earlier build
// (its presence says nothing of what it reads) is there, a backfill of a
// tenant's documents or in bulks, and a stream line with a tenant, are
// refused before anything is sent; untenanted single requests go, and so
// does everything once the worker says it reads them.
func TestWorkersBehindRefused(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeFiles(t, dir, 3, 500)
	present := func(reads []string) { e.presentWorker(ctx, reads) }
	p := e.producer(Options{})
	present(nil)
	for name, o := range map[string]BackfillOptions{
		"tenant": {Paths: []string{dir}, Template: Document{Tenant: "acme"}},
		"bulk":   {Paths: []string{dir}, Bulk: true},
	} {
		if s, err := p.Backfill(ctx, o); !errors.Is(err, ErrWorkersBehind) || s.Sent != 0 {
			t.Errorf("%s backfill beside an old worker = sent %d, %v; want ErrWorkersBehind, nothing sent", name, s.Sent, err)
		}
	}
	line := `{"v":1,"id":"x.md","tenant":"acme","content":"# X\n"}` + "\n"
	if s, err := p.SendLines(ctx, strings.NewReader(line), StreamOptions{}); !errors.Is(err, ErrWorkersBehind) || s.Sent != 0 {
		t.Errorf("a tenant's line beside an old worker = sent %d, %v; want ErrWorkersBehind", s.Sent, err)
	}
	if s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}}); err != nil || s.Sent != 3 {
		t.Errorf("untenanted backfill beside an old worker = sent %d, %v; want 3", s.Sent, err)
	}
	present(messages.WorkerReads())
	if s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Template: Document{Tenant: "acme"}, Bulk: true}); err != nil || s.Sent != 3 {
		t.Errorf("a tenant's backfill in bulks beside an upgraded worker = sent %d, %v; want 3", s.Sent, err)
	}
}
