package worker_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// publishBulk publishes reqs as one bulk request and returns its stream
// sequence.
func (e *env) publishBulk(subject string, reqs ...messages.IngestRequest) uint64 {
	e.t.Helper()
	var entries []messages.BulkEntry
	for i, req := range reqs {
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			e.t.Fatal(err)
		}
		entries = append(entries, messages.BulkEntry{MsgID: fmt.Sprintf("%s@%d@bulk-test", req.ID, i),
			ContentType: messages.ContentTypeMsgpack, Data: data})
	}
	data, err := messages.EncodeBulk(entries)
	if err != nil {
		e.t.Fatal(err)
	}
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set(messages.HeaderContentType, messages.ContentTypeBulk)
	m.Header.Set(messages.HeaderMsgID, fmt.Sprintf("bulk-%d", time.Now().UnixNano()))
	m.Header.Set("X-Team", "search")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := e.js.PublishMsg(ctx, m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// waitEmpty waits until INGEST holds nothing.
func (e *env) waitEmpty() {
	e.t.Helper()
	testutil.WaitFor(e.t, 60*time.Second, "INGEST empty", func() (bool, string) {
		n := e.pendingIngest()
		return n == 0, fmt.Sprintf("%d requests left", n)
	})
}

// TestBulkRequest: every document of a bulk request gets its own outcome
// and record at the bulk's ingest_seq; the bad one is dead-lettered alone,
// as a single-document request a replay can send again, and so is a
// document the bulk holds twice; the bulk leaves INGEST once all settled.
func TestBulkRequest(t *testing.T) {
	e := newEnv(t, testConfig())
	_, res, _ := e.startWorker(worker.Options{})
	docs := markdownDocs(6)
	var reqs []messages.IngestRequest
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		reqs = append(reqs, messages.IngestRequest{V: 1, ID: id, Content: docs[id]})
	}
	bad := messages.IngestRequest{V: 1, ID: "r/bad.md", Options: map[string]any{"bogus": 1}, Content: []byte("x")}
	twice := messages.IngestRequest{V: 1, ID: ids[0], Content: []byte("# another version\n")}
	seq := e.publishBulk("ingest.r", append(reqs, bad, twice)...)
	e.waitEmpty()

	checkComplete(t, e.records(), docs)
	byID := map[string]worker.Result{}
	for _, r := range res.snapshot() {
		if r.Final() {
			if r.StreamSeq != seq || r.IngestSeq != seq {
				t.Errorf("%s: stream_seq %d, ingest_seq %d, want both %d", r.DocID, r.StreamSeq, r.IngestSeq, seq)
			}
			if prev, ok := byID[r.DocID]; ok && prev.Outcome == worker.OutcomeAcked {
				continue // ids[0]'s second entry
			}
			byID[r.DocID] = r
		}
	}
	for _, id := range ids {
		if byID[id].Outcome != worker.OutcomeAcked {
			t.Errorf("%s: outcome %q, want acked", id, byID[id].Outcome)
		}
	}
	if got := byID[bad.ID]; got.Outcome != worker.OutcomePermanent || got.Cause != fault.CauseUnknownOption {
		t.Errorf("bad document: outcome %q, cause %q, want a permanent dead letter for its option", got.Outcome, got.Cause)
	}

	msgs := e.streamMsgs(e.cfg.DLQStream)
	if len(msgs) != 2 {
		t.Fatalf("%d dead letters, want 2 (the bad document, the document twice)", len(msgs))
	}
	causes := map[string]fault.Cause{}
	for _, m := range msgs {
		dl, err := messages.ParseDeadLetter(m.Header)
		if err != nil {
			t.Fatal(err)
		}
		if dl.StreamSeq != seq || dl.IngestSeq != seq {
			t.Errorf("dead letter names stream_seq %d, ingest_seq %d, want %d", dl.StreamSeq, dl.IngestSeq, seq)
		}
		if ct := m.Header.Get(messages.HeaderContentType); messages.IsBulk(ct) {
			t.Errorf("dead letter has Content-Type %q, want the single request's", ct)
		}
		if m.Header.Get("X-Team") != "search" {
			t.Errorf("dead letter lost the bulk's user header: %v", m.Header)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatalf("dead letter does not decode as a single request: %v", err)
		}
		causes[req.ID] = dl.Cause
	}
	if causes[bad.ID] != fault.CauseUnknownOption || causes[ids[0]] != fault.CauseInvalidRequest {
		t.Errorf("dead letters by document: %v, want %s: %s and %s: %s", causes, bad.ID, fault.CauseUnknownOption, ids[0], fault.CauseInvalidRequest)
	}
	recs := worker.NewKVRecords(e.top.Docs)
	for _, id := range ids {
		rec, _, ok, err := recs.Get(context.Background(), id)
		if err != nil || !ok || rec.IngestSeq != seq || rec.State != messages.StateDone {
			t.Errorf("record of %s: %+v, %v, %v; want done at %d", id, rec, ok, err, seq)
		}
	}
}

// TestBulkRedelivered: a bulk one of whose documents fails for a while is
// delivered again whole; the documents done the first time are acked as
// duplicates (their records say done), so each is written once.
func TestBulkRedelivered(t *testing.T) {
	e := newEnv(t, testConfig())
	real := subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)
	var mu sync.Mutex
	writes := map[string]int{}
	failing := "docs/d001.md"
	sink := worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		mu.Lock()
		writes[doc.ID]++
		n := writes[doc.ID]
		mu.Unlock()
		if doc.ID == failing && n == 1 {
			return errors.New("sink hiccup")
		}
		return real.Write(ctx, doc, chunks)
	})
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	docs := markdownDocs(4)
	var reqs []messages.IngestRequest
	for id, content := range docs {
		reqs = append(reqs, messages.IngestRequest{V: 1, ID: id, Content: content})
	}
	e.publishBulk("ingest.r", reqs...)
	e.waitEmpty()

	checkComplete(t, e.records(), docs)
	mu.Lock()
	defer mu.Unlock()
	for id := range docs {
		want := 1
		if id == failing {
			want = 2
		}
		if writes[id] != want {
			t.Errorf("%s written %d times, want %d", id, writes[id], want)
		}
	}
	dups := 0
	for _, r := range res.snapshot() {
		if r.Delivery == 2 && r.Outcome == worker.OutcomeDuplicate {
			dups++
		}
	}
	if dups != len(docs)-1 {
		t.Errorf("%d duplicates on the second delivery, want %d", dups, len(docs)-1)
	}
}

// TestBulkUndecodable: a bulk that does not decode is dead-lettered whole,
// saying why.
func TestBulkUndecodable(t *testing.T) {
	e := newEnv(t, testConfig())
	_, res, _ := e.startWorker(worker.Options{})
	seq := e.publishRaw("ingest.r", []byte{0x81, 0xa1, 'v', 0x01}, messages.ContentTypeBulk)
	e.waitEmpty()
	dls := e.deadLetters()
	if dl, ok := dls[seq]; !ok || dl.Cause != fault.CauseUndecodable {
		t.Errorf("dead letters %+v, want one for %d with cause %s", dls, seq, fault.CauseUndecodable)
	}
	if f := res.finals()[seq]; f.Outcome != worker.OutcomePermanent {
		t.Errorf("outcome %q, want %q", f.Outcome, worker.OutcomePermanent)
	}
}

// TestObjectDocumentsBounded: with many processors (the subject sink's
// default), at most max(GOMAXPROCS, Concurrency/4) documents read from
// the Object Store are in hand at once, as each may be as large as
// CHUNKSTREAM_MAX_DOC_BYTES; small documents are not held back.
func TestObjectDocumentsBounded(t *testing.T) {
	cfg := testConfig()
	bound := 2 * runtime.GOMAXPROCS(0)
	cfg.Concurrency = 4 * bound
	e := newEnv(t, cfg)
	var mu sync.Mutex
	inHand, most := 0, 0
	real := subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)
	sink := worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		mu.Lock()
		inHand++
		most = max(most, inHand)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // long enough for the others to pile up
		mu.Lock()
		inHand--
		mu.Unlock()
		return real.Write(ctx, doc, chunks)
	})
	objs, err := e.js.ObjectStore(context.Background(), cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	docs := markdownDocs(3 * bound)
	for id, content := range docs {
		if _, err := objs.PutBytes(context.Background(), messages.ContentVersion(content), content); err != nil {
			t.Fatal(err)
		}
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id,
			ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: messages.ContentVersion(content)}}, "")
	}
	e.startWorker(worker.Options{Sink: sink})
	e.waitEmpty()
	checkComplete(t, e.records(), docs)
	if most > bound {
		t.Errorf("%d documents from the Object Store in hand at once, want at most %d", most, bound)
	}
}

// TestBulkDeletesOfTwoTenants: one bulk deletes the document x.md of two
// tenants (two documents, one ingest_seq): each gets its delete record on
// CHUNKS, as when sent alone.
func TestBulkDeletesOfTwoTenants(t *testing.T) {
	e := newEnv(t, testConfig())
	_, _, _ = e.startWorker(worker.Options{})
	for _, tenant := range []string{"acme", "globex"} {
		e.publish("ingest.r", messages.IngestRequest{V: 1, ID: "x.md", Tenant: tenant, Content: []byte("# X\n\nsome text\n")}, "")
	}
	e.waitEmpty()
	seq := e.publishBulk("ingest.r",
		messages.IngestRequest{V: 1, ID: "x.md", Tenant: "acme", Op: messages.OpDelete},
		messages.IngestRequest{V: 1, ID: "x.md", Tenant: "globex", Op: messages.OpDelete})
	e.waitEmpty()
	deleted := map[string]bool{}
	for _, r := range e.records() {
		if r.Op == messages.OpDelete && r.IngestSeq == seq {
			deleted[r.Tenant] = true
		}
	}
	if !deleted["acme"] || !deleted["globex"] || len(deleted) != 2 {
		t.Errorf("delete records on CHUNKS at %d by tenant: %v, want acme and globex", seq, deleted)
	}
}

// hiccupOnce is sink but for id's first write, which waits for release
// and fails (a transient error: the bulk holding id comes back).
func hiccupOnce(sink worker.Sink, id string, release <-chan struct{}) worker.Sink {
	var once sync.Once
	return worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		if doc.ID == id {
			first := false
			once.Do(func() { first = true })
			if first {
				<-release
				return errors.New("sink hiccup")
			}
		}
		return sink.Write(ctx, doc, chunks)
	})
}

// TestBulkDeadLetterSettled: a request of a bulk dead-lettered on one
// delivery is not processed again when the bulk is delivered again for
// another of its requests: alone it would have been terminated. Its dead
// letter, purged meanwhile, stays purged and its record dismissed.
func TestBulkDeadLetterSettled(t *testing.T) {
	e := newEnv(t, testConfig())
	release := make(chan struct{})
	sink := hiccupOnce(subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), "c.md", release)
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	e.publishBulk("ingest.r",
		messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# A\n\ntext\n")},
		messages.IngestRequest{V: 1, ID: "b.md", Options: map[string]any{"bogus": 1}, Content: []byte("# B\n")},
		messages.IngestRequest{V: 1, ID: "c.md", Content: []byte("# C\n\ntext\n")})
	outcomes := func(id string) map[worker.Outcome]int {
		n := map[worker.Outcome]int{}
		for _, r := range res.snapshot() {
			if r.DocID == id {
				n[r.Outcome]++
			}
		}
		return n
	}
	testutil.WaitFor(t, 30*time.Second, "b.md dead-lettered", func() bool { return outcomes("b.md")[worker.OutcomePermanent] == 1 })
	ctx := context.Background()
	d := producer.NewDLQ(e.js, producer.DLQOptions{})
	if sum, err := d.Purge(ctx, producer.DLQFilter{IDPrefix: "b.md"}, producer.PurgeOptions{}); err != nil || sum.Deleted != 1 {
		t.Fatalf("Purge = %+v, %v", sum, err)
	}
	close(release)
	e.waitEmpty()
	if n := outcomes("c.md")[worker.OutcomeAcked]; n != 1 {
		t.Fatalf("c.md acked %d times, want once (after the bulk's redelivery)", n)
	}
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "b.md")
	if n := outcomes("b.md"); n[worker.OutcomePermanent] != 1 || n[worker.OutcomeDuplicate] != 1 || rec.State != messages.StateDismissed {
		t.Errorf("b.md: outcomes %v, record %s; want dead-lettered once, then settled as a duplicate, record dismissed", n, rec.State)
	}
}

// TestBulkTwinLeavesTheRecord: a bulk holds x.md twice; the second is
// refused while the first, the accepted one, meets a sink failure. The
// refusal's dead letter leaves the record (the accepted one's) alone, so
// the bulk's redelivery writes the accepted version.
func TestBulkTwinLeavesTheRecord(t *testing.T) {
	e := newEnv(t, testConfig())
	real := subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)
	var (
		once    sync.Once
		mu      sync.Mutex
		written []string
	)
	sink := worker.SinkFunc(func(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
		first := false
		once.Do(func() { first = true })
		if first {
			return errors.New("sink hiccup")
		}
		if err := real.Write(ctx, doc, chunks); err != nil {
			return err
		}
		mu.Lock()
		written = append(written, doc.Version)
		mu.Unlock()
		return nil
	})
	_, _, _ = e.startWorker(worker.Options{Sink: sink})
	accepted, refused := []byte("# X\n\nthe accepted version\n"), []byte("# X\n\nthe refused one\n")
	seq := e.publishBulk("ingest.r",
		messages.IngestRequest{V: 1, ID: "x.md", Content: accepted},
		messages.IngestRequest{V: 1, ID: "x.md", Content: refused})
	e.waitEmpty()
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(context.Background(), "x.md")
	mu.Lock()
	defer mu.Unlock()
	if len(written) != 1 || written[0] != messages.ContentVersion(accepted) {
		t.Errorf("written %d versions %v, want the accepted one once", len(written), written)
	}
	if rec.State != messages.StateDone || rec.IngestSeq != seq || rec.DocVersion != messages.ContentVersion(accepted) {
		t.Errorf("record = %s at %d, %.12s; want done at %d with the accepted version", rec.State, rec.IngestSeq, rec.DocVersion, seq)
	}
	if n := len(e.deadLetters()); n != 1 {
		t.Errorf("%d dead letters, want the refused twin's", n)
	}
}

// TestBulkInvalidRequestStaysDismissed: a bulk's request refused before
// step 1 (no content) is dead-lettered, then purged; the bulk comes back
// for another request: the purged version's record stays dismissed and
// the DLQ stays empty of it.
func TestBulkInvalidRequestStaysDismissed(t *testing.T) {
	e := newEnv(t, testConfig())
	release := make(chan struct{})
	sink := hiccupOnce(subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), "c.md", release)
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	e.publishBulk("ingest.r",
		messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# A\n\ntext\n")},
		messages.IngestRequest{V: 1, ID: "b.md"},
		messages.IngestRequest{V: 1, ID: "c.md", Content: []byte("# C\n\ntext\n")})
	testutil.WaitFor(t, 30*time.Second, "b.md dead-lettered", func() bool {
		for _, r := range res.snapshot() {
			if r.DocID == "b.md" && r.Outcome == worker.OutcomePermanent {
				return true
			}
		}
		return false
	})
	ctx := context.Background()
	d := producer.NewDLQ(e.js, producer.DLQOptions{})
	if sum, err := d.Purge(ctx, producer.DLQFilter{IDPrefix: "b.md"}, producer.PurgeOptions{}); err != nil || sum.Deleted != 1 {
		t.Fatalf("Purge = %+v, %v", sum, err)
	}
	close(release)
	e.waitEmpty()
	testutil.WaitFor(t, 30*time.Second, "c.md acked", func() bool {
		for _, r := range res.snapshot() {
			if r.DocID == "c.md" && r.Outcome == worker.OutcomeAcked {
				return true
			}
		}
		return false
	})
	rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, "b.md")
	if rec.State != messages.StateDismissed {
		t.Errorf("b.md's record = %s after the bulk came back, want dismissed (its dead letter was purged)", rec.State)
	}
	if n := len(e.deadLetters()); n != 0 {
		t.Errorf("%d dead letters after the purge, want 0", n)
	}
}
