package producer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestBackfillBulk: with Bulk, small documents go in bulk requests within
// their bounds, a large one alone; every document is reported sent with
// the sequence of the message that carries it, and the worker chunks each
// as if it had come alone.
func TestBackfillBulk(t *testing.T) {
	for _, fast := range []bool{true, false} {
		name := "fast-ingest batches"
		if !fast {
			name = "single publishes"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			subject := ""
			if !fast {
				if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "OLD", Subjects: []string{"old.>"},
					Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
					t.Fatal(err)
				}
				subject = "old.docs"
			}
			dir := t.TempDir()
			n := 600
			writeFiles(t, dir, n, 1000)
			big := strings.Repeat("# Big\n\n"+strings.Repeat("word ", 40)+"\n\n", 500) // over maxBulkMember
			if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
			n++
			seqs := map[string]uint64{}
			p := e.producer(Options{Subject: subject})
			s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true,
				OnSent: func(s Sent) { seqs[s.ID] = s.Seq }})
			if err != nil || s.Sent != n || s.Failed != 0 {
				t.Fatalf("Backfill = %+v, %v (%v); want %d sent", s.Stats, err, s.Failures, n)
			}
			if len(seqs) != n {
				t.Fatalf("OnSent reported %d documents, want %d", len(seqs), n)
			}
			stream := e.cfg.IngestStream
			if !fast {
				stream = "OLD"
			}
			st, err := e.js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
				m, err := st.GetMsg(ctx, seq)
				if err != nil {
					t.Fatal(err)
				}
				if !messages.IsBulk(m.Header.Get(messages.HeaderContentType)) {
					req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
					if err != nil {
						t.Fatal(err)
					}
					if req.ID != "big.md" {
						t.Errorf("%s went alone; only big.md should", req.ID)
					}
					seen[req.ID] = true
					continue
				}
				if len(m.Data) > messages.MaxBulkBytes {
					t.Errorf("bulk %d is %d bytes, over %d", seq, len(m.Data), messages.MaxBulkBytes)
				}
				entries, err := messages.DecodeBulk(m.Data)
				if err != nil {
					t.Fatal(err)
				}
				for _, en := range entries {
					req, err := messages.DecodeIngest(en.ContentType, en.Data)
					if err != nil {
						t.Fatal(err)
					}
					if seen[req.ID] {
						t.Errorf("%s sent twice", req.ID)
					}
					seen[req.ID] = true
					if seqs[req.ID] != seq && !fast {
						t.Errorf("%s reported at %d, stored in the bulk at %d", req.ID, seqs[req.ID], seq)
					}
					if en.MsgID != messages.IngestMsgID(req.Tenant, req.ID, messages.ContentVersion(req.Content), p.SendID()) {
						t.Errorf("%s: msg_id %q", req.ID, en.MsgID)
					}
				}
			}
			if len(seen) != n || info.State.Msgs >= uint64(n)/4 {
				t.Errorf("INGEST holds %d messages for %d documents, want every document in a few bulks", info.State.Msgs, len(seen))
			}
			if fast {
				e.runWorker(ctx, n)
				compareViews(t, e.view(ctx), expected(t, dir, ""))
			}
		})
	}
}

// publishBulk publishes reqs (msgpack, inline content) as one bulk request
// on ingest.docs, as a publisher other than the producer would, and
// returns its PubAck.
func (e *env) publishBulk(ctx context.Context, reqs ...messages.IngestRequest) *jetstream.PubAck {
	e.t.Helper()
	var entries []messages.BulkEntry
	for _, req := range reqs {
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			e.t.Fatal(err)
		}
		entries = append(entries, messages.BulkEntry{MsgID: messages.IngestMsgID(req.Tenant, req.ID, messages.ContentVersion(req.Content), "bulk"),
			ContentType: messages.ContentTypeMsgpack, Data: data})
	}
	data, err := messages.EncodeBulk(entries)
	if err != nil {
		e.t.Fatal(err)
	}
	m := nats.NewMsg("ingest.docs")
	m.Data = data
	m.Header.Set(messages.HeaderContentType, messages.ContentTypeBulk)
	ack, err := e.js.PublishMsg(ctx, m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack
}

// TestBulkDeadLetterReplay: a document of a bulk the workers refuse is
// dead-lettered alone, while the others of its bulk are written; `dlq
// replay` sends it again on its own, as the version it was, and workers
// that know its option process it.
func TestBulkDeadLetterReplay(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, 5, 800)
	p := e.producer(Options{})
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true, Force: true})
	if err != nil || s.Sent != 5 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	// The same files again with an option today's workers refuse, but one
	// document only: a bulk of four good ones and one bad.
	ids := []string{"d00/f00000.md", "d01/f00001.md", "d02/f00002.md", "d03/f00003.md", "d04/f00004.md"}
	var reqs []messages.IngestRequest
	for i, id := range ids {
		req := messages.IngestRequest{V: messages.Version, ID: id, Content: mdContent(i+10, 800)}
		if i == 2 {
			req.Options = map[string]any{"heading_aware": true}
		}
		reqs = append(reqs, req)
	}
	ack := e.publishBulk(ctx, reqs...)
	res := e.process(ctx, nil, 10)
	bad := 0
	for _, r := range res {
		if r.Outcome == worker.OutcomePermanent {
			bad++
			if r.DocID != ids[2] || r.IngestSeq != ack.Sequence {
				t.Errorf("dead-lettered %s at %d, want %s at %d", r.DocID, r.IngestSeq, ids[2], ack.Sequence)
			}
		}
	}
	if bad != 1 {
		t.Fatalf("%d dead letters, want 1: %+v", bad, res)
	}
	d := NewDLQ(e.js, DLQOptions{})
	dls := listDLQ(t, d, DLQFilter{})
	if len(dls) != 1 || dls[0].DocID != ids[2] || dls[0].IngestSeq != ack.Sequence {
		t.Fatalf("DLQ holds %+v, want %s's dead letter at %d", dls, ids[2], ack.Sequence)
	}
	var got []Replayed
	sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) { got = append(got, r) }})
	if err != nil || sum.Processed != 1 || len(got) != 1 || got[0].Action != ActionProcess {
		t.Fatalf("Replay = %+v, %v, %+v", sum, err, got)
	}
	st, _ := e.js.Stream(ctx, e.cfg.IngestStream)
	rm, err := st.GetMsg(ctx, got[0].StreamSeq)
	if err != nil {
		t.Fatal(err)
	}
	if messages.IsBulk(rm.Header.Get(messages.HeaderContentType)) || rm.Header.Get(messages.HeaderIngestSeq) != strconv.FormatUint(ack.Sequence, 10) {
		t.Errorf("replayed request: headers %v, want a single request of version %d", rm.Header, ack.Sequence)
	}
	fixed := e.process(ctx, newerChunkers(), 1)
	if fixed[0].Outcome != worker.OutcomeAcked || fixed[0].DocID != ids[2] || fixed[0].IngestSeq != ack.Sequence {
		t.Errorf("replay: %+v, want %s acked as version %d", fixed[0], ids[2], ack.Sequence)
	}
	rec, _, ok, err := worker.NewKVRecords(e.top.Docs).Get(ctx, ids[2])
	if err != nil || !ok || rec.State != messages.StateDone || rec.IngestSeq != ack.Sequence {
		t.Errorf("record of %s = %+v, %v, %v; want done at %d", ids[2], rec, ok, err, ack.Sequence)
	}
}

// TestPacerCountsBulkDocuments: a bulk request of n documents takes n
// turns of the pacer, so Rate stays documents per second.
func TestPacerCountsBulkDocuments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPacer(100) // 10 ms a document
		start := time.Now()
		for range 3 { // 3 bulks of 10: the third waits for the 20 before it
			if err := p.wait(context.Background(), 10); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 200*time.Millisecond {
			t.Errorf("3 bulks of 10 documents at 100/s took %v, want 200ms", d)
		}
	})
}

// TestBulkOfChangedDocumentIsStored: one Producer backfills a folder in
// bulks twice within the server's duplicate window, a document other than
// the first changed in between: the second bulk is not taken for the
// first (its id names every version it carries), and the worker stores
// the new version.
func TestBulkOfChangedDocumentIsStored(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeFiles(t, dir, 3, 800)
	p := e.producer(Options{})
	if s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true}); err != nil || s.Sent != 3 {
		t.Fatalf("first Backfill = %+v, %v", s.Stats, err)
	}
	e.runWorker(ctx, 3)
	changed := []byte("# Changed\n\nA new version of the second file.\n")
	if err := os.WriteFile(filepath.Join(dir, "d01", "f00001.md"), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true, Force: true})
	if err != nil || s.Sent != 3 || s.Duplicates != 0 {
		t.Fatalf("second Backfill = %+v, %v; want 3 sent, no duplicates", s.Stats, err)
	}
	e.runWorker(ctx, 3)
	en, err := e.top.Docs.Get(ctx, messages.DocRecordKey("d01/f00001.md"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := messages.DecodeDocRecord(en.Value())
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != messages.StateDone || rec.DocVersion != messages.ContentVersion(changed) {
		t.Errorf("record of the changed document = %s %s, want done at its new version", rec.State, rec.DocVersion)
	}
}

// TestBulkWithinMaxPayload: on a server whose maximum payload is below a
// full bulk, bulks stay under it: every document that fits alone is sent.
func TestBulkWithinMaxPayload(t *testing.T) {
	e := newEnv(t, func(o *server.Options) { o.MaxPayload = 128 << 10 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeFiles(t, dir, 60, 10_000)
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true})
	if err != nil || s.Sent != 60 || s.Failed != 0 {
		t.Fatalf("Backfill = %+v, %v (%v); want 60 sent", s.Stats, err, s.Failures)
	}
}

// TestBulkTwiceReplay: a bulk holding two versions of one document
// dead-letters the second (their versions would share one ingest_seq);
// its standing is shared, not written, and its replay sends it as a new
// version, which the worker then writes.
func TestBulkTwiceReplay(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v1, v2 := []byte("# One\n\nfirst version\n"), []byte("# Two\n\nsecond version\n")
	e.publishBulk(ctx, messages.IngestRequest{V: messages.Version, ID: "a.md", Content: v1},
		messages.IngestRequest{V: messages.Version, ID: "a.md", Content: v2})
	e.process(ctx, nil, 2)
	d := NewDLQ(e.js, DLQOptions{})
	var got []Replayed
	sum, err := d.Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) { got = append(got, r) }})
	if err != nil || len(got) != 1 {
		t.Fatalf("Replay = %+v, %v, %+v", sum, err, got)
	}
	if got[0].Action != ActionProcess || got[0].Entry.Standing != StandingShared {
		t.Fatalf("replay of the refused version: action %q, standing %q; want process, shared", got[0].Action, got[0].Entry.Standing)
	}
	if res := e.process(ctx, nil, 1); res[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("the replayed version: %+v, want acked", res[0])
	}
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "a.md")
	if rec.State != messages.StateDone || rec.DocVersion != messages.ContentVersion(v2) {
		t.Errorf("record = %s at %.8s, want done at the replayed version", rec.State, rec.DocVersion)
	}
}

// TestBulkSentBeforePacing: a document that does not join the bulk being
// filled is paced only once that bulk is published, so a pacer waiting
// for the documents ahead of it to be processed (local mode's) never
// waits on documents still packed.
func TestBulkSentBeforePacing(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nsmall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("# Big\n\n"+strings.Repeat("word ", 40)+"\n\n", 500) // over a bulk's member size
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	ingest, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Bulk: true,
		Pace: func(ctx context.Context, id string, _ int) error {
			if id != "b.md" {
				return nil
			}
			for { // b.md waits until a.md, ahead of it, is in INGEST for a worker
				info, err := ingest.Info(ctx)
				if err != nil {
					return err
				}
				if info.State.Msgs > 0 {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
		}})
	if err != nil || s.Sent != 2 {
		t.Fatalf("Backfill = %+v, %v; want both sent", s.Stats, err)
	}
}

// publishReplayAs publishes content as document id's version at ingest_seq
// seq, as a replay of its dead letter does (a bulk's twin replayed before
// the other version's record existed stands current at that sequence).
func (e *env) publishReplayAs(ctx context.Context, id string, content []byte, seq uint64) {
	e.t.Helper()
	data, err := messages.EncodeIngest(&messages.IngestRequest{V: messages.Version, ID: id, Content: content}, messages.ContentTypeJSON)
	if err != nil {
		e.t.Fatal(err)
	}
	m := nats.NewMsg("ingest.docs")
	m.Data = data
	m.Header.Set(messages.HeaderContentType, messages.ContentTypeJSON)
	m.Header.Set(messages.HeaderIngestSeq, strconv.FormatUint(seq, 10))
	if _, err := e.js.PublishMsg(ctx, m); err != nil {
		e.t.Fatal(err)
	}
}

// TestBulkTwinReplayedBeforeItsRecord: the replay of a bulk's refused
// twin read no record (the bulk's other version had not started yet), so
// it went as the bulk's ingest_seq; the worker finds the other version
// done at that sequence. It is not a duplicate (its dead letter is gone,
// the version would be lost): it is dead-lettered again as the twin it is,
// and the next replay sends it as a new version, which is written.
func TestBulkTwinReplayedBeforeItsRecord(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v1, v2 := []byte("# One\n\nfirst version\n"), []byte("# Two\n\nsecond version\n")
	ack, err := e.producer(Options{}).Enqueue(ctx, Document{ID: "a.md", Content: v1})
	if err != nil {
		t.Fatal(err)
	}
	// The twin's replay as the bulk's version, published before v1 started.
	e.publishReplayAs(ctx, "a.md", v2, ack.Sequence)
	e.cfg.Concurrency = 1 // v1 first
	res := e.process(ctx, nil, 2)
	if res[0].Outcome != worker.OutcomeAcked || res[1].Outcome != worker.OutcomePermanent {
		t.Fatalf("outcomes %s, %s; want v1 acked, the twin dead-lettered", res[0].Outcome, res[1].Outcome)
	}
	var got []Replayed
	sum, err := NewDLQ(e.js, DLQOptions{}).Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) { got = append(got, r) }})
	if err != nil || len(got) != 1 || got[0].Action != ActionProcess || got[0].Entry.Standing != StandingShared {
		t.Fatalf("Replay = %+v, %v; want the twin processed as shared", sum, err)
	}
	if res := e.process(ctx, nil, 1); res[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("the twin sent as a new version: %+v, want acked", res[0])
	}
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "a.md")
	if rec.State != messages.StateDone || rec.DocVersion != messages.ContentVersion(v2) || rec.IngestSeq <= ack.Sequence {
		t.Errorf("record = %s at %d, %.8s; want done at a new version of the twin's content", rec.State, rec.IngestSeq, rec.DocVersion)
	}
}
