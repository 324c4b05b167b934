package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
)

// writtenSink records the documents written.
type writtenSink struct {
	mu   sync.Mutex
	docs map[string]uint64 // id → ingest_seq written
}

func (s *writtenSink) Write(_ context.Context, doc Doc, _ []Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[doc.ID] = doc.Seq
	return nil
}

func (s *writtenSink) seq(id string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[id]
}

// floorConsumer is a consumer whose state has its ack floor at least at
// floor, as a server restarted on a store it could not write in full can
// leave it.
type floorConsumer struct {
	jetstream.Consumer
	floor uint64
}

func (c floorConsumer) Info(ctx context.Context) (*jetstream.ConsumerInfo, error) {
	info, err := c.Consumer.Info(ctx)
	if err != nil {
		return nil, err
	}
	cp := *info
	cp.AckFloor.Stream = max(cp.AckFloor.Stream, c.floor)
	return &cp, nil
}

// TestRequeueBelowAckFloor: requests INGEST holds at or below the
// consumer's ack floor, which the consumer does not deliver again (their
// deliveries lost, the floor past them), are put back by a running worker and processed as
// the versions they were: the written document and its record carry the
// original ingest_seq, a request done already is acked as a duplicate
// without a second write, and INGEST ends empty with no dead letter.
func TestRequeueBelowAckFloor(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, ns.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.AckWait = 5 * time.Minute // the lost deliveries are not redelivered during the test
	top, err := Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(id, content string) uint64 {
		t.Helper()
		req := messages.IngestRequest{V: messages.Version, ID: id, Content: []byte(content)}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		msg := nats.NewMsg("ingest.docs")
		msg.Data = data
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	lost := publish("lost.md", "# Lost\n\nThe consumer's state forgot this request.\n")
	const doneText = "# Done\n\nProcessed, its ack lost with the consumer's state.\n"
	done := publish("done.md", doneText)
	// done.md was processed before its ack was lost: its record is done.
	recs := NewKVRecords(top.Docs)
	rec := messages.DocRecord{IngestSeq: done, DocVersion: messages.ContentVersion([]byte(doneText)), Op: messages.OpUpsert, Subject: "ingest.docs"}
	_, rev, err := recs.Start(ctx, "done.md", "", rec)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := recs.Finish(ctx, "done.md", done, rev, rec); !ok || err != nil {
		t.Fatalf("Finish = %v, %v", ok, err)
	}
	// Both were delivered and their deliveries lost; the consumer's state
	// says it acked them (its ack floor is past them).
	batch, err := top.Consumer.FetchNoWait(2)
	if err != nil {
		t.Fatal(err)
	}
	for range batch.Messages() {
	}
	after := publish("after.md", "# After\n\nDelivered as usual.\n")

	sink := &writtenSink{docs: map[string]uint64{}}
	w, err := New(nc, js, top, Options{Config: cfg, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	w.pull.consumer = floorConsumer{top.Consumer, done}
	w.requeueEvery = 50 * time.Millisecond
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(rctx) }()
	defer func() {
		stop()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() (bool, string) {
		s, err := js.Stream(ctx, cfg.IngestStream)
		if err != nil {
			return false, err.Error()
		}
		return s.CachedInfo().State.Msgs == 0, ""
	})
	if got := sink.seq("lost.md"); got != lost {
		t.Errorf("lost.md written with ingest_seq %d, want its original %d", got, lost)
	}
	if got := sink.seq("after.md"); got != after {
		t.Errorf("after.md written with ingest_seq %d, want %d", got, after)
	}
	if got := sink.seq("done.md"); got != 0 {
		t.Errorf("done.md written again (ingest_seq %d), want it acked as a duplicate", got)
	}
	found, _, ok, err := w.proc.records.Get(ctx, "lost.md")
	if err != nil || !ok || found.IngestSeq != lost || found.State != messages.StateDone {
		t.Errorf("record of lost.md = %+v, %v, %v; want done at ingest_seq %d", found, ok, err, lost)
	}
	if s, err := js.Stream(ctx, cfg.DLQStream); err != nil || s.CachedInfo().State.Msgs != 0 {
		t.Errorf("dead letters: %v, want none", err)
	}
}

// refusingSink refuses every document for good, as it did the first time.
type refusingSink struct{ writtenSink }

func (s *refusingSink) Write(ctx context.Context, doc Doc, c []Chunk) error {
	_ = s.writtenSink.Write(ctx, doc, c)
	return fault.Permanent(errors.New("refused again"))
}

// TestRequeuedDeadLetterIsNoReplay: a single request that was
// dead-lettered (and one whose dead letter was then purged: dismissed)
// is still in INGEST below the ack floor; requeue puts it back with
// Chunkstream-Ingest-Seq, marked requeued. It is no replay: settled, not
// processed and dead-lettered a second time.
func TestRequeuedDeadLetterIsNoReplay(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, ns.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.AckWait = 5 * time.Minute
	top, err := Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(id string) uint64 {
		t.Helper()
		req := messages.IngestRequest{V: messages.Version, ID: id, Content: []byte("# T\n\ntext\n")}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		msg := nats.NewMsg("ingest.docs")
		msg.Data = data
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	dead, dismissed := publish("dead.md"), publish("dismissed.md")
	recs := NewKVRecords(top.Docs)
	for id, seq := range map[string]uint64{"dead.md": dead, "dismissed.md": dismissed} {
		if ok, err := recs.Fail(ctx, id, "", messages.DocRecord{IngestSeq: seq, Op: messages.OpUpsert, Subject: "ingest.docs",
			DocVersion:  messages.ContentVersion([]byte("# T\n\ntext\n")),
			LastFailure: messages.Failure{Cause: "sink", Reason: "refused", IngestSeq: seq}}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	rec, _, _, _ := recs.Get(ctx, "dismissed.md")
	rec.State, rec.LastFailure = messages.StateDismissed, messages.Failure{}
	val, _ := messages.EncodeDocRecord(rec)
	if _, err := top.Docs.Put(ctx, messages.DocRecordKey("dismissed.md"), val); err != nil {
		t.Fatal(err)
	}
	batch, err := top.Consumer.FetchNoWait(2)
	if err != nil {
		t.Fatal(err)
	}
	for range batch.Messages() {
	}
	sink := &refusingSink{writtenSink{docs: map[string]uint64{}}}
	w, err := New(nc, js, top, Options{Config: cfg, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	w.pull.consumer = floorConsumer{top.Consumer, dismissed}
	w.requeueEvery = 50 * time.Millisecond
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(rctx) }()
	defer func() { stop(); <-ran }()
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() (bool, string) {
		s, err := js.Stream(ctx, cfg.IngestStream)
		if err != nil {
			return false, err.Error()
		}
		return s.CachedInfo().State.Msgs == 0, ""
	})
	for _, id := range []string{"dead.md", "dismissed.md"} {
		if got := sink.seq(id); got != 0 {
			t.Errorf("%s processed again at ingest_seq %d: the requeued copy was taken for a replay", id, got)
		}
	}
	if s, err := js.Stream(ctx, cfg.DLQStream); err != nil || s.CachedInfo().State.Msgs != 0 {
		t.Errorf("dead letters: %d (err %v), want none: a requeue dead-letters nothing", s.CachedInfo().State.Msgs, err)
	}
	for id, want := range map[string]messages.State{"dead.md": messages.StateDeadLettered, "dismissed.md": messages.StateDismissed} {
		if r, _, _, _ := recs.Get(ctx, id); r.State != want {
			t.Errorf("%s record = %s, want %s as before", id, r.State, want)
		}
	}
}
