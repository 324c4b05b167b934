package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// publishWithID publishes data with the given Nats-Msg-Id and returns its
// INGEST sequence, waiting out INGEST's duplicate window when the server
// still drops the id as a duplicate (a user re-sending a request as it
// was, headers and all).
func (e *env) publishWithID(subject string, data []byte, msgID string) uint64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set(messages.HeaderMsgID, msgID)
		m.Header.Set("X-Team", "search")
		ack, err := e.js.PublishMsg(ctx, m)
		if err != nil {
			e.t.Fatal(err)
		}
		if !ack.Duplicate {
			return ack.Sequence
		}
		select {
		case <-ctx.Done():
			e.t.Fatal("INGEST's duplicate window never passed")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deadLetters returns the DLQ's dead letters by the INGEST sequence they
// name.
func (e *env) deadLetters() map[uint64]messages.DeadLetter {
	e.t.Helper()
	out := map[uint64]messages.DeadLetter{}
	for _, m := range e.streamMsgs(e.cfg.DLQStream) {
		dl, err := messages.ParseDeadLetter(m.Header)
		if err != nil {
			e.t.Fatalf("dead letter %d: %v", m.Sequence, err)
		}
		if _, dup := out[dl.StreamSeq]; dup {
			e.t.Errorf("two dead letters of INGEST message %d", dl.StreamSeq)
		}
		out[dl.StreamSeq] = dl
		for k := range m.Header {
			if strings.HasPrefix(k, "Nats-") && k != messages.HeaderMsgID {
				e.t.Errorf("dead letter %d carries the server header %s", m.Sequence, k)
			}
		}
	}
	return out
}

// TestRepublishedRequestIsDeadLetteredAgain: a request sent again as it
// was (same payload, same Nats-Msg-Id, after INGEST's duplicate window)
// that fails again gets a second dead letter, with its cause. Before,
// the dead letter kept the request's Nats-Msg-Id and the DLQ's one-hour
// window dropped the second one while INGEST had let the request go.
func TestRepublishedRequestIsDeadLetteredAgain(t *testing.T) {
	cfg := testConfig()
	cfg.DuplicateWindow = time.Second
	e := newEnv(t, cfg)
	_, res, _ := e.startWorker(worker.Options{})
	data, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: "r/a.md", Options: map[string]any{"bogus": 1}, Content: []byte("x")}, "")
	if err != nil {
		t.Fatal(err)
	}
	first := e.publishWithID("ingest.docs", data, "r/a.md@v@send1")
	testutil.WaitFor(t, 20*time.Second, "first dead letter", func() bool { return res.finals()[first].Outcome == worker.OutcomePermanent })
	second := e.publishWithID("ingest.docs", data, "r/a.md@v@send1")
	if second == first {
		t.Fatal("the re-send was not stored")
	}
	testutil.WaitFor(t, 20*time.Second, "second dead letter", func() bool { return res.finals()[second].Outcome == worker.OutcomePermanent })
	dls := e.deadLetters()
	if len(dls) != 2 {
		t.Fatalf("DLQ holds %d dead letters (%v), want 2: one per failed INGEST message", len(dls), dls)
	}
	for _, m := range e.streamMsgs(cfg.DLQStream) {
		if m.Header.Get("X-Team") != "search" || string(m.Data) != string(data) {
			t.Errorf("dead letter %d lost the request's payload or its header X-Team: %v", m.Sequence, m.Header)
		}
	}
	for _, seq := range []uint64{first, second} {
		if dl := dls[seq]; dl.Cause != fault.CauseUnknownOption || dl.Kind != messages.KindPermanent || !strings.Contains(dl.Reason, "bogus") {
			t.Errorf("dead letter of %d = %+v, want cause %s", seq, dl, fault.CauseUnknownOption)
		}
	}
	if n := e.pendingIngest(); n != 0 {
		t.Errorf("INGEST holds %d requests, want 0", n)
	}
}

// TestDeadLetterRecordsFailure: a dead-lettered request with a readable
// document id leaves its record dead_lettered with the failure, whether
// it failed before step 1 (too large, missing object, undecodable) or
// after (an unknown option); a newer version clears it.
func TestDeadLetterRecordsFailure(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDocBytes = 100
	e := newEnv(t, cfg)
	_, res, _ := e.startWorker(worker.Options{})
	recs := worker.NewKVRecords(e.top.Docs)
	ctx := context.Background()
	enc := func(r messages.IngestRequest) []byte {
		b, err := messages.EncodeIngest(&r, "")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	big := []byte(strings.Repeat("x", 200))
	cases := []struct {
		name, id string
		data     []byte
		ct       string
		cause    fault.Cause
		op       messages.Op
		version  string
	}{
		{"too large", "f/big.md", enc(messages.IngestRequest{V: 1, ID: "f/big.md", Content: big}), "", fault.CauseTooLarge, messages.OpUpsert, messages.ContentVersion(big)},
		{"missing object", "f/obj.md", enc(messages.IngestRequest{V: 1, ID: "f/obj.md", ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: "gone"}}), "", fault.CauseMissingObject, messages.OpUpsert, "gone"},
		{"unknown option", "f/opt.md", enc(messages.IngestRequest{V: 1, ID: "f/opt.md", Options: map[string]any{"bogus": 1}, Content: []byte("x")}), "", fault.CauseUnknownOption, messages.OpUpsert, messages.ContentVersion([]byte("x"))},
		{"undecodable with an id", "f/utf.md", []byte(`{"v":1,"id":"f/utf.md","metadata":{"t":"\ud800"},"content":"x"}`), messages.ContentTypeJSON, fault.CauseUndecodable, "", ""},
	}
	seqs := map[string]uint64{}
	for _, c := range cases {
		seqs[c.id] = e.publishRaw("ingest.docs", c.data, c.ct)
	}
	noID := e.publishRaw("ingest.docs", []byte{0xc1}, "")
	testutil.WaitFor(t, 30*time.Second, "every request dead-lettered", func() bool { return len(res.finals()) == len(cases)+1 })
	for _, c := range cases {
		rec, _, ok, err := recs.Get(ctx, c.id)
		if err != nil || !ok {
			t.Fatalf("%s: no record: %v", c.name, err)
		}
		f := rec.LastFailure
		if rec.State != messages.StateDeadLettered || rec.IngestSeq != seqs[c.id] || rec.Op != c.op || rec.DocVersion != c.version ||
			f.Cause != c.cause || f.IngestSeq != seqs[c.id] || f.Reason == "" || f.Time.IsZero() {
			t.Errorf("%s: record %+v, want dead_lettered at %d, op %q, version %q, cause %s", c.name, rec, seqs[c.id], c.op, c.version, c.cause)
		}
		if dl := e.deadLetters()[seqs[c.id]]; dl.Cause != c.cause || dl.Reason != f.Reason {
			t.Errorf("%s: dead letter %+v, record's failure %+v: want the same cause and reason", c.name, dl, f)
		}
	}
	if res.finals()[noID].Outcome != worker.OutcomePermanent {
		t.Errorf("undecodable request without an id: %+v", res.finals()[noID])
	}
	// A newer, good version overwrites the record and clears the failure.
	newer := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "f/opt.md", Content: []byte("# fixed\n")}, "")
	testutil.WaitFor(t, 20*time.Second, "newer version", func() bool { return res.finals()[newer].Outcome == worker.OutcomeAcked })
	rec, _, _, _ := recs.Get(ctx, "f/opt.md")
	if rec.State != messages.StateDone || rec.IngestSeq != newer || rec.LastFailure != (messages.Failure{}) {
		t.Errorf("record after a newer version = %+v, want done at %d without a failure", rec, newer)
	}
}

// TestRecordsKeepPlaces: each step of the record keeps, per place the sink
// writes (TargetSink), the newest version started there, so that step 4
// at one place is not misled by a newer version at another.
func TestRecordsKeepPlaces(t *testing.T) {
	e := newEnv(t, testConfig())
	recs := worker.NewKVRecords(e.top.Docs)
	ctx := context.Background()
	newest := func(target string) uint64 {
		t.Helper()
		n, err := recs.NewestSeq(ctx, "d", target)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, _, err := recs.Start(ctx, "d", "a", messages.DocRecord{IngestSeq: 5, Op: messages.OpUpsert}); err != nil {
		t.Fatal(err)
	}
	rec := messages.DocRecord{IngestSeq: 7, Op: messages.OpUpsert, Fingerprint: "f"}
	_, rev, err := recs.Start(ctx, "d", "b", rec)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := recs.Finish(ctx, "d", 7, rev, rec); !ok || err != nil {
		t.Fatalf("Finish = %v, %v", ok, err)
	}
	if a, b := newest("a"), newest("b"); a != 5 || b != 7 {
		t.Errorf("after 5 at a and 7 at b: newest at a %d, at b %d", a, b)
	}
	if ok, err := recs.Fail(ctx, "d", "a", messages.DocRecord{IngestSeq: 9, Op: messages.OpUpsert}); !ok || err != nil {
		t.Fatalf("Fail(9) = %v, %v", ok, err)
	}
	if a, b := newest("a"), newest("b"); a != 9 || b != 7 {
		t.Errorf("after 9 dead-lettered at a: newest at a %d, at b %d", a, b)
	}
	// A request that did not decode names no place: it counts at every one.
	if _, err := recs.Fail(ctx, "d", "", messages.DocRecord{IngestSeq: 11}); err != nil {
		t.Fatal(err)
	}
	if a, b := newest("a"), newest("b"); a != 11 || b != 11 {
		t.Errorf("after 11 dead-lettered without a place: newest at a %d, at b %d", a, b)
	}
}

// TestRecordsFail: KVRecords.Fail moves the record only forward and
// fits the five steps: an older version is still superseded, a newer one
// still overwrites, a redelivery of the failed version can finish it.
func TestRecordsFail(t *testing.T) {
	e := newEnv(t, testConfig())
	recs := worker.NewKVRecords(e.top.Docs)
	ctx := context.Background()
	failure := func(seq uint64, cause fault.Cause) messages.DocRecord {
		return messages.DocRecord{IngestSeq: seq, Op: messages.OpUpsert, DocVersion: "v" + string(cause),
			LastFailure: messages.Failure{Cause: cause, Reason: "r " + string(cause), Time: time.Now().UTC(), IngestSeq: seq}}
	}
	get := func() messages.DocRecord {
		t.Helper()
		rec, _, ok, err := recs.Get(ctx, "d")
		if err != nil || !ok {
			t.Fatalf("Get: %+v, %v, %v", rec, ok, err)
		}
		return rec
	}
	// Failed after step 1: the record at 5 keeps its version and op.
	if _, _, err := recs.Start(ctx, "d", "", messages.DocRecord{IngestSeq: 5, DocVersion: "v5", Op: messages.OpUpsert}); err != nil {
		t.Fatal(err)
	}
	if ok, err := recs.Fail(ctx, "d", "", failure(5, "sink")); !ok || err != nil {
		t.Fatalf("Fail(5) = %v, %v", ok, err)
	}
	if r := get(); r.State != messages.StateDeadLettered || r.DocVersion != "v5" || r.LastFailure.Cause != "sink" {
		t.Errorf("after Fail(5): %+v", r)
	}
	// The first failure recorded stays (the DLQ keeps the first dead letter).
	if ok, _ := recs.Fail(ctx, "d", "", failure(5, "max_deliveries")); ok {
		t.Error("Fail(5) again replaced the first failure")
	}
	// An older version's failure, or start, changes nothing.
	if ok, _ := recs.Fail(ctx, "d", "", failure(3, "old")); ok || get().IngestSeq != 5 {
		t.Errorf("Fail(3) over 5 wrote: %+v", get())
	}
	if found, _, _ := recs.Start(ctx, "d", "", messages.DocRecord{IngestSeq: 4}); found.IngestSeq != 5 || get().IngestSeq != 5 {
		t.Errorf("Start(4) over a dead-lettered 5: found %+v, record %+v; want superseded", found, get())
	}
	// Failed before step 1: the record moves to 7, as step 1 would.
	if ok, err := recs.Fail(ctx, "d", "", failure(7, "too_large")); !ok || err != nil {
		t.Fatalf("Fail(7) = %v, %v", ok, err)
	}
	if r := get(); r.IngestSeq != 7 || r.State != messages.StateDeadLettered || r.DocVersion != "vtoo_large" || r.LastFailure.IngestSeq != 7 {
		t.Errorf("after Fail(7): %+v", r)
	}
	if n, _ := recs.NewestSeq(ctx, "d", ""); n != 7 {
		t.Errorf("NewestSeq = %d, want 7 (a sink's step 4 must see it)", n)
	}
	// A redelivery of 7 (a lost Term) runs and finishes; the failure goes.
	found, rev, _ := recs.Start(ctx, "d", "", messages.DocRecord{IngestSeq: 7})
	if found.IngestSeq != 7 || found.State == messages.StateDone {
		t.Errorf("Start(7) found %+v", found)
	}
	if ok, _ := recs.Finish(ctx, "d", 7, rev, messages.DocRecord{IngestSeq: 7}); !ok {
		t.Error("Finish(7) failed")
	}
	if r := get(); r.State != messages.StateDone || r.LastFailure != (messages.Failure{}) {
		t.Errorf("after Finish(7): %+v, want done without a failure", r)
	}
	if ok, _ := recs.Fail(ctx, "d", "", failure(7, "late")); ok {
		t.Error("Fail(7) over done(7) wrote")
	}
	// A newer version overwrites a dead-lettered record and clears it.
	if _, err := recs.Fail(ctx, "d", "", failure(9, "unknown_option")); err != nil {
		t.Fatal(err)
	}
	if found, rev, _ := recs.Start(ctx, "d", "", messages.DocRecord{IngestSeq: 10, Op: messages.OpUpsert}); found.IngestSeq != 9 || rev == 0 {
		t.Errorf("Start(10) over dead-lettered 9: found %+v, rev %d", found, rev)
	}
	if r := get(); r.IngestSeq != 10 || r.State != messages.StatePending || r.LastFailure != (messages.Failure{}) {
		t.Errorf("after Start(10): %+v", r)
	}
	// No record at all: Fail creates one.
	if ok, err := recs.Fail(ctx, "new", "", failure(2, "missing_object")); !ok || err != nil {
		t.Errorf("Fail on a new document = %v, %v", ok, err)
	}
}
