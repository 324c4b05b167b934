package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

func TestSetupIdempotent(t *testing.T) {
	e := newEnv(t, testConfig())
	ctx := context.Background()
	for range 2 {
		if _, err := worker.Setup(ctx, e.js, e.cfg); err != nil {
			t.Fatalf("Setup again: %v", err)
		}
	}
	s, err := e.js.Stream(ctx, "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(ctx)
	if info.Config.Retention != jetstream.WorkQueuePolicy || info.Config.Storage != jetstream.FileStorage ||
		info.Config.Duplicates != e.cfg.DuplicateWindow || !info.Config.AllowDirect {
		t.Errorf("INGEST config = %+v", info.Config)
	}
	c, err := e.js.Stream(ctx, "CHUNKS")
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := c.Info(ctx)
	if ci.Config.Duplicates != time.Hour || ci.Config.MaxAge != 168*time.Hour {
		t.Errorf("CHUNKS config = %+v", ci.Config)
	}
	cons, err := e.js.Consumer(ctx, "INGEST", "chunkers")
	if err != nil {
		t.Fatal(err)
	}
	cinfo, _ := cons.Info(ctx)
	if cinfo.Config.AckWait != e.cfg.AckWait || cinfo.Config.MaxDeliver != -1 ||
		cinfo.Config.AckPolicy != jetstream.AckExplicitPolicy {
		t.Errorf("consumer config = %+v", cinfo.Config)
	}
	// A changed setting is applied on the next start.
	cfg := e.cfg
	cfg.AckWait = 2 * time.Second
	if _, err := worker.Setup(ctx, e.js, cfg); err != nil {
		t.Fatal(err)
	}
	cinfo, _ = cons.Info(ctx)
	if cinfo.Config.AckWait != 2*time.Second {
		t.Errorf("AckWait after update = %v, want 2s", cinfo.Config.AckWait)
	}
}

// TestEndToEnd: every chunk arrives once on CHUNKS, equal to chunking
// directly; an empty and a whitespace document give one delete record; a
// delete request gives a delete record; JSON and msgpack requests both
// work.
func TestEndToEnd(t *testing.T) {
	e := newEnv(t, testConfig())
	docs := markdownDocs(40)
	docs["docs/empty.md"] = []byte{}
	docs["docs/blank.md"] = []byte("  \n\n\t\n")
	_, res, _ := e.startWorker(worker.Options{})
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for i, id := range ids {
		ct := messages.ContentTypeMsgpack
		if i%3 == 0 {
			ct = messages.ContentTypeJSON
		}
		e.publish("ingest.docs.e2e", messages.IngestRequest{V: 1, ID: id, Content: docs[id]}, ct)
	}
	testutil.WaitFor(t, 60*time.Second, "every document acked", func() bool { return len(res.finals()) == len(docs) })
	for _, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked {
			t.Errorf("%s: outcome %s (%v), want acked", r.DocID, r.Outcome, r.Err)
		}
	}
	recs := e.records()
	checkComplete(t, recs, docs)
	for _, r := range recs {
		if r.DocID == "docs/empty.md" && (r.Op != messages.OpDelete || r.Count != 0 || r.IngestSeq == 0) {
			t.Errorf("empty document record = %+v, want a delete record", r)
		}
	}
	// Subjects follow the ingest subject's tail.
	for _, m := range e.streamMsgs("CHUNKS") {
		if m.Subject != "chunks.docs.e2e" {
			t.Fatalf("chunk record subject = %q, want chunks.docs.e2e", m.Subject)
		}
	}
	if n := e.pendingIngest(); n != 0 {
		t.Errorf("INGEST holds %d requests after processing, want 0", n)
	}
	// A delete request publishes a delete record with its sequence.
	seq := e.publish("ingest.docs.e2e", messages.IngestRequest{V: 1, Op: messages.OpDelete, ID: "docs/d001.md"}, "")
	testutil.WaitFor(t, 20*time.Second, "delete processed", func() bool { _, ok := res.finals()[seq]; return ok })
	var found bool
	for _, r := range e.records() {
		if r.DocID == "docs/d001.md" && r.Op == messages.OpDelete && r.IngestSeq == seq {
			found = true
		}
	}
	if !found {
		t.Error("no delete record for the delete request")
	}
	rec, _, ok, err := worker.NewKVRecords(e.top.Docs).Get(context.Background(), "docs/d001.md")
	if err != nil || !ok || rec.Op != messages.OpDelete || rec.State != messages.StateDone || rec.IngestSeq != seq {
		t.Errorf("record after delete = %+v, %v, %v", rec, ok, err)
	}
}

// TestPoison: each poison kind gives one dead letter with its reason and
// headers, and the good messages around it are processed.
func TestPoison(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDocBytes = 9000
	e := newEnv(t, cfg)
	_, res, _ := e.startWorker(worker.Options{})
	good := markdownDocs(2)
	ctx := context.Background()
	objs, err := e.js.ObjectStore(ctx, cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("word ", 4000))
	if _, err := objs.PutBytes(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	type poison struct {
		name  string
		data  []byte
		ct    string
		cause fault.Cause
		text  string
	}
	enc := func(r messages.IngestRequest, ct string) []byte {
		b, err := messages.EncodeIngest(&r, ct)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []poison{
		{"bad msgpack", []byte{0xc1, 0x00}, "", fault.CauseUndecodable, "cannot decode"},
		{"bad json", []byte(`{"v":1,"id":`), messages.ContentTypeJSON, fault.CauseUndecodable, "cannot decode"},
		{"unknown version", []byte(`{"v":9,"id":"p/v.md","content":"x"}`), messages.ContentTypeJSON, fault.CauseUnknownVersion, "v=9"},
		{"unknown chunker", enc(messages.IngestRequest{V: 1, ID: "p/c.md", Chunker: "nope", Content: []byte("x")}, ""), "", fault.CauseUnknownChunker, "nope"},
		{"unknown option", enc(messages.IngestRequest{V: 1, ID: "p/o.md", Options: map[string]any{"bogus": 1}, Content: []byte("x")}, ""), "", fault.CauseUnknownOption, "bogus"},
		{"invalid options", enc(messages.IngestRequest{V: 1, ID: "p/i.md", Options: map[string]any{"max_char": "many"}, Content: []byte("x")}, ""), "", fault.CauseInvalidOptions, "max_char"},
		{"unknown format", enc(messages.IngestRequest{V: 1, ID: "p/f.md", Format: "pdf", Content: []byte("x")}, ""), "", fault.CauseUnknownFormat, "pdf"},
		{"bad tenant", enc(messages.IngestRequest{V: 1, ID: "p/t.md", Tenant: "no spaces", Content: []byte("x")}, ""), "", fault.CauseInvalidRequest, `tenant "no spaces": want 1 to 64`},
		{"not utf-8", enc(messages.IngestRequest{V: 1, ID: "p/u.md", Content: []byte("caf\xe9\n")}, ""), "", fault.CauseNotUTF8, `document "p/u.md" (markdown): content: invalid UTF-8 at byte 3`},
		{"no content", []byte(`{"v":1,"id":"p/n.md"}`), messages.ContentTypeJSON, fault.CauseNoContent, "no content"},
		{"too large", enc(messages.IngestRequest{V: 1, ID: "p/l.md", Content: big}, ""), "", fault.CauseTooLarge, "over the limit"},
		{"too large object", enc(messages.IngestRequest{V: 1, ID: "p/lo.md", ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: "big"}}, ""), "", fault.CauseTooLarge, "over the limit"},
		{"missing object", enc(messages.IngestRequest{V: 1, ID: "p/m.md", ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: "gone"}}, ""), "", fault.CauseMissingObject, "gone"},
		{"missing bucket", enc(messages.IngestRequest{V: 1, ID: "p/mb.md", ContentRef: &messages.ContentRef{Bucket: "NOBUCKET", Name: "x"}}, ""), "", fault.CauseMissingObject, "NOBUCKET"},
		{"chunker panic", enc(messages.IngestRequest{V: 1, ID: "p/p.md", Chunker: "panic", Content: []byte("x")}, ""), "", fault.CauseChunkerPanic, "boom"},
	}
	seqs := map[uint64]poison{}
	var goodSeqs []uint64
	i := 0
	for id, content := range good {
		goodSeqs = append(goodSeqs, e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: content}, ""))
		for ; i < len(cases)*(len(goodSeqs))/len(good); i++ {
			seqs[e.publishRaw("ingest.docs", cases[i].data, cases[i].ct)] = cases[i]
		}
	}
	// A good document stored as an object.
	objDoc := markdownDocs(3)["docs/d002.md"]
	if _, err := objs.PutBytes(ctx, messages.ContentVersion(objDoc), objDoc); err != nil {
		t.Fatal(err)
	}
	goodSeqs = append(goodSeqs, e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "docs/d002.md",
		ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: messages.ContentVersion(objDoc)}}, ""))
	good["docs/d002.md"] = objDoc

	total := len(cases) + len(goodSeqs)
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == total })
	finals := res.finals()
	for _, s := range goodSeqs {
		if finals[s].Outcome != worker.OutcomeAcked {
			t.Errorf("good request %d: %s (%v)", s, finals[s].Outcome, finals[s].Err)
		}
	}
	checkComplete(t, e.records(), good)

	dls := e.streamMsgs("DLQ")
	if len(dls) != len(cases) {
		t.Errorf("%d dead letters, want %d", len(dls), len(cases))
	}
	for _, m := range dls {
		dl, err := messages.ParseDeadLetter(m.Header)
		if err != nil {
			t.Errorf("dead letter %d: %v", m.Sequence, err)
			continue
		}
		pc, ok := seqs[dl.StreamSeq]
		if !ok {
			t.Errorf("dead letter for unexpected sequence %d: %+v", dl.StreamSeq, dl)
			continue
		}
		delete(seqs, dl.StreamSeq)
		if dl.Kind != messages.KindPermanent || dl.Subject != "ingest.docs" || dl.Deliveries != 1 ||
			!strings.Contains(dl.Reason, pc.text) || m.Subject != "dlq.ingest" {
			t.Errorf("%s: dead letter %+v on %s, want permanent, reason containing %q", pc.name, dl, m.Subject, pc.text)
		}
		if string(m.Data) != string(pc.data) || m.Header.Get(messages.HeaderContentType) != pc.ct {
			t.Errorf("%s: dead letter payload or headers changed", pc.name)
		}
		if r := finals[dl.StreamSeq]; r.Cause != pc.cause {
			t.Errorf("%s: cause %q, want %q", pc.name, r.Cause, pc.cause)
		}
	}
	for _, pc := range seqs {
		t.Errorf("%s: no dead letter", pc.name)
	}
	if n := e.pendingIngest(); n != 0 {
		t.Errorf("INGEST holds %d requests, want 0 (poison must be terminated)", n)
	}
}

// TestSlowChunker: a chunker slower than AckWait is not redelivered while
// the worker lives, thanks to the in-progress acks. They go out every
// AckWait/3, so only a stall of the worker's process longer than two
// thirds of AckWait (here 3 s) could let the server redeliver: the test
// holds on a busy machine. (TestHeartbeat checks the beat's timing
// itself, in fake time.)
func TestSlowChunker(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.AckWait = 5 * time.Second
	e := newEnv(t, cfg)
	w, res, _ := e.startWorker(worker.Options{})
	seq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "slow.md", Chunker: "slow",
		Options: map[string]any{"sleep_ms": 6000}, Content: []byte("# Slow\n\ntext")}, "")
	testutil.WaitFor(t, 20*time.Second, "slow document", func() bool { _, ok := res.finals()[seq]; return ok })
	// Once the server has taken the ack, no redelivery can come; the
	// consumer's delivery sequence counts every delivery it made.
	ctx := context.Background()
	var info *jetstream.ConsumerInfo
	testutil.WaitFor(t, 20*time.Second, "the ack taken", func() (bool, string) {
		var err error
		if info, err = e.top.Consumer.Info(ctx); err != nil {
			return false, err.Error()
		}
		return info.NumAckPending == 0, fmt.Sprintf("%d ack pending", info.NumAckPending)
	})
	if info.Delivered.Consumer != 1 {
		t.Errorf("the consumer made %d deliveries, want 1", info.Delivered.Consumer)
	}
	all := res.snapshot()
	if len(all) != 1 || all[0].Delivery != 1 || all[0].Outcome != worker.OutcomeAcked {
		t.Errorf("results = %+v, want one acked first delivery", all)
	}
	if n := metricValue(t, w.Metrics().Redeliveries); n != 0 {
		t.Errorf("redeliveries = %v, want 0", n)
	}
}

// flakySink fails the first n writes with a transient error, counting
// the writes.
type flakySink struct {
	mu     sync.Mutex
	fails  int
	writes int
	inner  worker.Sink
}

func (s *flakySink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	s.mu.Lock()
	s.writes++
	fail := s.writes <= s.fails
	s.mu.Unlock()
	if fail {
		return errors.New("sink unavailable")
	}
	return s.inner.Write(ctx, doc, chunks)
}

// TestTransientSink: a sink that fails transiently gets NAKs with growing
// delays, then the document succeeds; a sink failing forever ends in an
// exhausted dead letter after MaxDeliver.
func TestTransientSink(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDeliver = 4
	cfg.BackoffBase = 150 * time.Millisecond
	cfg.BackoffMax = 2 * time.Second
	e := newEnv(t, cfg)
	// The NAKs the worker sends, as the server receives them.
	var naksMu sync.Mutex
	var naks []string
	sub, err := e.nc.Subscribe("$JS.ACK.>", func(m *nats.Msg) {
		if strings.HasPrefix(string(m.Data), "-NAK") {
			naksMu.Lock()
			naks = append(naks, string(m.Data))
			naksMu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	sink := &flakySink{fails: 2, inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16)}
	// No jitter: delays are exactly base·2^(n−1).
	_, res, stop := e.startWorker(worker.Options{Sink: sink, Backoff: worker.Backoff{Base: cfg.BackoffBase, Max: cfg.BackoffMax, Rand: func() float64 { return 1 }}})
	docs := markdownDocs(1)
	seq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "docs/d000.md", Content: docs["docs/d000.md"]}, "")
	testutil.WaitFor(t, 20*time.Second, "success after retries", func() bool { _, ok := res.finals()[seq]; return ok })
	if r := res.finals()[seq]; r.Outcome != worker.OutcomeAcked || r.Delivery != 3 {
		t.Errorf("final = %+v, want acked on delivery 3", r)
	}
	sink.mu.Lock()
	writes := sink.writes
	sink.mu.Unlock()
	if writes != 3 {
		t.Fatalf("%d writes, want 3", writes)
	}
	// Each failure was NAKed with the delay of its delivery (the server
	// holds the request back that long; TestSettleRetries checks the
	// delays with jitter).
	want := []string{`-NAK {"delay": 150000000}`, `-NAK {"delay": 300000000}`}
	var got []string
	testutil.WaitFor(t, time.Minute, "the NAKs", func() (bool, string) {
		naksMu.Lock()
		defer naksMu.Unlock()
		got = slices.Clone(naks)
		return len(got) >= len(want), fmt.Sprintf("%q", got)
	})
	if !slices.Equal(got, want) {
		t.Errorf("NAKs sent = %q, want %q", got, want)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	checkComplete(t, e.records(), docs)
	stop()

	// Failing forever: exhausted after MaxDeliver deliveries.
	sink2 := &flakySink{fails: 1 << 30}
	_, res2, _ := e.startWorker(worker.Options{Sink: sink2})
	seq2 := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "docs/forever.md", Content: []byte("# x\n\ny")}, "")
	testutil.WaitFor(t, 30*time.Second, "exhausted", func() bool { _, ok := res2.finals()[seq2]; return ok })
	r := res2.finals()[seq2]
	if r.Outcome != worker.OutcomeExhausted || r.Delivery != uint64(cfg.MaxDeliver) {
		t.Errorf("final = %+v, want exhausted on delivery %d", r, cfg.MaxDeliver)
	}
	var found bool
	for _, m := range e.streamMsgs("DLQ") {
		dl, err := messages.ParseDeadLetter(m.Header)
		if err == nil && dl.StreamSeq == seq2 {
			found = true
			if dl.Kind != messages.KindExhausted || dl.Deliveries != uint64(cfg.MaxDeliver) || !strings.Contains(dl.Reason, "sink unavailable") {
				t.Errorf("dead letter = %+v", dl)
			}
		}
	}
	if !found {
		t.Error("no exhausted dead letter")
	}
	if n := e.pendingIngest(); n != 0 {
		t.Errorf("INGEST holds %d requests, want 0", n)
	}
}

// TestSuperseded: a request overtaken by a newer version of its document
// is acked without writing.
func TestSuperseded(t *testing.T) {
	e := newEnv(t, testConfig())
	old := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# Old\n\nold text")}, "")
	newer := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# New\n\nnew text")}, "")
	// A worker started the newer version first.
	recs := worker.NewKVRecords(e.top.Docs)
	if _, _, err := recs.Start(context.Background(), "a.md", "", messages.DocRecord{IngestSeq: newer, Op: worker.OpUpsert}); err != nil {
		t.Fatal(err)
	}
	w, res, _ := e.startWorker(worker.Options{})
	testutil.WaitFor(t, 20*time.Second, "both versions", func() bool { return len(res.finals()) == 2 })
	f := res.finals()
	if f[old].Outcome != worker.OutcomeSuperseded || f[newer].Outcome != worker.OutcomeAcked {
		t.Errorf("outcomes old=%s new=%s, want superseded and acked", f[old].Outcome, f[newer].Outcome)
	}
	for _, r := range e.records() {
		if r.IngestSeq != newer {
			t.Errorf("record of superseded version published: %+v", r)
		}
	}
	if n := metricValue(t, w.Metrics().Messages.WithLabelValues(string(worker.OutcomeSuperseded))); n != 1 {
		t.Errorf("superseded count = %v, want 1", n)
	}
	got, err := recs.NewestSeq(context.Background(), "a.md", "")
	if err != nil || got != newer {
		t.Errorf("NewestSeq = %d, %v; want %d", got, err, newer)
	}
}

// TestRecordsCAS: the record only moves forward, under concurrency.
func TestRecordsCAS(t *testing.T) {
	e := newEnv(t, testConfig())
	recs := worker.NewKVRecords(e.top.Docs)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 1; i <= 20; i++ {
		wg.Go(func() {
			if _, _, err := recs.Start(ctx, "doc", "", messages.DocRecord{IngestSeq: uint64(i), Op: worker.OpUpsert}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, _ := recs.NewestSeq(ctx, "doc", ""); got != 20 {
		t.Errorf("NewestSeq = %d after concurrent starts, want 20", got)
	}
	if ok, _ := recs.Finish(ctx, "doc", 19, 0, messages.DocRecord{}); ok {
		t.Error("Finish(19) succeeded while the record holds 20")
	}
	// A stale revision falls back to reading the record, and writes the
	// same done record as the fast path: the results, warnings included.
	warnings := messages.RecordWarnings([]chunking.Warning{{Kind: chunking.WarnMalformed, Text: "a bad row"}})
	if ok, _ := recs.Finish(ctx, "doc", 20, 1, messages.DocRecord{IngestSeq: 20, Op: worker.OpUpsert,
		Fingerprint: "fp", Chunks: 3, Warnings: warnings}); !ok {
		t.Error("Finish(20) failed")
	}
	rec, _, _, _ := recs.Get(ctx, "doc")
	if rec.State != messages.StateDone || rec.Fingerprint != "fp" || rec.Chunks != 3 || rec.Op != worker.OpUpsert ||
		rec.Warnings.Total != 1 || len(rec.Warnings.First) != 1 {
		t.Errorf("record = %+v, want done with the results and the warning", rec)
	}
	found, _, _ := recs.Start(ctx, "doc", "", messages.DocRecord{IngestSeq: 5})
	if found.IngestSeq != 20 {
		t.Errorf("Start(5) found %d, want 20 (never moves back)", found.IngestSeq)
	}
}

// TestAdvisory: a request whose worker died on its last delivery is
// delivered once more, not processed, and dead-lettered as exhausted,
// cause max_deliveries, naming the deliveries it was processed in; it
// leaves INGEST.
func TestAdvisory(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDeliver = 2
	cfg.AckWait = 300 * time.Millisecond
	e := newEnv(t, cfg)
	seq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "dead.md", Content: []byte("x")}, "")
	// A "worker" that takes the request and dies, twice.
	for d := 1; d <= cfg.MaxDeliver; d++ {
		b, err := e.top.Consumer.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range b.Messages() {
			n++
		}
		if n != 1 {
			t.Fatalf("delivery %d: fetched %d messages", d, n)
		}
	}
	// A live worker handles the advisory when the last AckWait expires.
	_, res, _ := e.startWorker(worker.Options{})
	testutil.WaitFor(t, 20*time.Second, "advisory handled", func() bool { _, ok := res.finals()[seq]; return ok })
	if r := res.finals()[seq]; r.Outcome != worker.OutcomeExhausted || r.Cause != "max_deliveries" {
		t.Errorf("result = %+v", r)
	}
	dls := e.streamMsgs("DLQ")
	if len(dls) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dls))
	}
	dl, err := messages.ParseDeadLetter(dls[0].Header)
	if err != nil || dl.Kind != messages.KindExhausted || dl.StreamSeq != seq || dl.Deliveries != 2 || dl.Subject != "ingest.docs" {
		t.Errorf("dead letter = %+v, %v", dl, err)
	}
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() bool { return e.pendingIngest() == 0 })
}

// TestPastLastDeliveryProcessed: a worker processed a request on its
// last delivery and died before its ack (its record says done); the
// consumer delivers it once more, and the worker acks it as a duplicate
// without processing it or dead-lettering it: a processed request is
// never dead-lettered as undeliverable.
func TestPastLastDeliveryProcessed(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDeliver = 1
	cfg.AckWait = 300 * time.Millisecond
	e := newEnv(t, cfg)
	seq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "done.md", Content: []byte("# Done\n\ntext")}, "")
	b, err := e.top.Consumer.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for range b.Messages() {
	}
	ctx := context.Background()
	records := worker.NewKVRecords(e.top.Docs)
	_, rev, err := records.Start(ctx, "done.md", "", messages.DocRecord{IngestSeq: seq, Op: messages.OpUpsert})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Finish(ctx, "done.md", seq, rev, messages.DocRecord{Chunks: 1}); err != nil {
		t.Fatal(err)
	}
	_, res, _ := e.startWorker(worker.Options{})
	testutil.WaitFor(t, 20*time.Second, "the delivery after the last", func() bool { _, ok := res.finals()[seq]; return ok })
	if r := res.finals()[seq]; r.Outcome != worker.OutcomeDuplicate || r.Delivery != 2 {
		t.Errorf("result = %+v, want a duplicate on delivery 2", r)
	}
	if n := len(e.streamMsgs("DLQ")); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() bool { return e.pendingIngest() == 0 })
}

// TestServerRestart: the nats-server stops and restarts mid-run with the
// same store; nothing is lost.
func TestServerRestart(t *testing.T) {
	cfg := testConfig()
	// Deliveries whose acks the stopped server missed come back after
	// AckWait: a short one keeps the test quick, and the test allows
	// redeliveries (MaxDeliver is roomy).
	cfg.AckWait = 2 * time.Second
	cfg.MaxDeliver = 20
	e := &env{t: t, dir: t.TempDir(), cfg: cfg}
	port := testutil.FreePort(t)
	e.ns = jstest.Start(t, e.dir, port)
	e.connect()
	docs := markdownDocs(120)
	w, res, _ := e.startWorker(worker.Options{})
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	testutil.WaitFor(t, 30*time.Second, "some progress", func() bool { return len(res.finals()) >= 10 })
	e.ns.Shutdown()
	e.ns.WaitForShutdown()
	testutil.WaitFor(t, 30*time.Second, "the worker's connection lost", func() bool { return !e.nc.IsConnected() })
	e.ns = jstest.Start(t, e.dir, port)
	t.Cleanup(func() { e.ns.Shutdown(); e.ns.WaitForShutdown() })
	testutil.WaitFor(t, 90*time.Second, "INGEST drained", func() bool { return e.pendingIngest() == 0 })
	// Acks of deliveries the restarted server forgot go unanswered; no
	// processor waited for them (TestAckNeverBlocksAProcessor).
	t.Logf("acks not confirmed: %v", metricValue(t, w.Metrics().AcksUnconfirmed))
	// Records of one ingest sequence are never stored twice (CHUNKS
	// de-duplicates by <chunk id>@<ingest_seq>).
	checkComplete(t, e.records(), docs)
	if n := len(e.streamMsgs("DLQ")); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

// TestDrainAbandons: work still running when the drain timeout ends is
// NAKed and taken by the next worker; nothing is lost.
func TestDrainAbandons(t *testing.T) {
	cfg := testConfig()
	cfg.DrainTimeout = 200 * time.Millisecond
	e := newEnv(t, cfg)
	w, res, stop := e.startWorker(worker.Options{})
	seq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "slow.md", Chunker: "slow",
		Options: map[string]any{"sleep_ms": 1500}, Content: []byte("# S\n\nx")}, "")
	testutil.WaitFor(t, time.Minute, "in flight", func() bool { return metricValue(t, w.Metrics().InFlight) == 1 })
	// Stop waits for the running chunker call (1.5 s, pure code cannot be
	// interrupted) and the pull in progress (≤ 1 s), not for more work.
	stop()
	if all := res.snapshot(); len(all) != 1 || all[0].Outcome != worker.OutcomeAbandoned {
		t.Errorf("first worker results = %+v, want one abandoned", all)
	}
	_, res2, _ := e.startWorker(worker.Options{})
	testutil.WaitFor(t, 20*time.Second, "second worker finishes", func() bool { _, ok := res2.finals()[seq]; return ok })
	if r := res2.finals()[seq]; r.Outcome != worker.OutcomeAcked {
		t.Errorf("second worker: %+v", r)
	}
}

// metricValue reads a counter or gauge.
func metricValue(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

// TestHealth: /metrics serves the private registry; /readyz follows the
// worker's state.
func TestHealth(t *testing.T) {
	e := newEnv(t, testConfig())
	w, _, stop := e.startWorker(worker.Options{})
	srv := httptest.NewServer(worker.Handler(w.Metrics(), w))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testutil.WaitFor(t, time.Minute, "ready", w.Ready)
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	code, body := get("/metrics")
	for _, name := range []string{"chunkstream_worker_messages_total", "chunkstream_worker_in_flight", "chunkstream_worker_redeliveries_total"} {
		if code != 200 || !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	stop()
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz after stop = %d, want 503", code)
	}
}

// TestProducerLargeDocument: the producer stores documents above
// MaxInline in the Object Store; the worker reads them back.
func TestProducerLargeDocument(t *testing.T) {
	e := newEnv(t, testConfig())
	_, res, _ := e.startWorker(worker.Options{})
	docs := markdownDocs(8)
	p := producer.New(e.nc, e.js, producer.Options{MaxInline: 1024})
	var sent atomic.Int64
	b := p.Batch(func(s producer.Sent) {
		if s.Err != nil {
			t.Error(s.Err)
		}
		sent.Add(1)
	})
	for id, c := range docs {
		if err := b.Add(context.Background(), producer.Document{ID: id, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sent.Load() != int64(len(docs)) {
		t.Fatalf("sent %d, want %d", sent.Load(), len(docs))
	}
	testutil.WaitFor(t, 30*time.Second, "all processed", func() bool { return len(res.finals()) == len(docs) })
	checkComplete(t, e.records(), docs)
	objs, _ := e.js.ObjectStore(context.Background(), e.cfg.ObjectsBucket)
	list, _ := objs.List(context.Background())
	if len(list) == 0 {
		t.Error("no document went through the Object Store")
	}
	// A retried publish of the same send is dropped by the duplicate window.
	ack, err := p.Enqueue(context.Background(), producer.Document{ID: "docs/d000.md", Content: docs["docs/d000.md"]})
	if err != nil || !ack.Duplicate {
		t.Errorf("re-publish in the same send: %+v, %v; want a duplicate", ack, err)
	}
}

// readySink is a sink that says whether it can write.
type readySink struct {
	worker.Sink
	ready atomic.Bool
}

func (s *readySink) Ready(context.Context) bool { return s.ready.Load() }

// TestReadyAsksSink: /readyz is 503 while a ReadySink is not ready. The
// worker is first seen ready (bound to its consumer, sink ready), so that
// it is the sink alone that makes it unready.
func TestReadyAsksSink(t *testing.T) {
	e := newEnv(t, testConfig())
	sink := &readySink{Sink: subjectsink.New(e.js, "chunks", 8)}
	sink.ready.Store(true)
	w, _, _ := e.startWorker(worker.Options{Sink: sink})
	testutil.WaitFor(t, time.Minute, "the worker bound and ready", w.Ready)
	sink.ready.Store(false)
	if w.Ready() {
		t.Error("Ready() = true while the sink is not ready")
	}
	sink.ready.Store(true)
	if !w.Ready() {
		t.Error("Ready() = false once the sink is ready again")
	}
}

// TestDeadLetterPublishFails: when the dead letter cannot be stored (the
// DLQ stream is missing: no responders) the request is held as in an
// outage, never NAKed nor dropped; the worker's storage probe creates the
// stream again, and the request is dead-lettered then, on its first
// delivery. (How soon the probe runs after the failure depends on the
// machine, so what the test holds at the failure is that the request is
// in one of the two streams, not which.)
func TestDeadLetterPublishFails(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	ctx := context.Background()
	if err := e.js.DeleteStream(ctx, cfg.DLQStream); err != nil {
		t.Fatal(err)
	}
	w, res, _ := e.startWorker(worker.Options{})
	seq := e.publishRaw("ingest.docs", []byte{0xc1}, "")
	testutil.WaitFor(t, 20*time.Second, "the request held after the failed dead letter", func() bool {
		for _, r := range res.snapshot() {
			if r.StreamSeq == seq && r.Outcome == worker.OutcomePaused && strings.Contains(r.Err.Error(), "dead letter failed") {
				return true
			}
		}
		return false
	})
	// Read in this order: a request leaves INGEST only after its dead
	// letter is stored.
	if n := e.pendingIngest(); n != 1 {
		if d := len(e.streamMsgs(cfg.DLQStream)); d != 1 {
			t.Fatalf("INGEST holds %d requests and the DLQ %d: the request is lost", n, d)
		}
	}
	testutil.WaitFor(t, 20*time.Second, "dead letter", func() bool { return res.finals()[seq].Outcome == worker.OutcomePermanent })
	if d := res.finals()[seq].Delivery; d != 1 {
		t.Errorf("dead-lettered on delivery %d, want the first", d)
	}
	if n := len(e.streamMsgs(cfg.DLQStream)); n != 1 {
		t.Errorf("%d dead letters, want 1", n)
	}
	testutil.WaitFor(t, time.Minute, "INGEST empty", func() bool { return e.pendingIngest() == 0 })
	testutil.WaitFor(t, time.Minute, "the worker ready again", w.Ready)
}

// cleanupSink fails the first write of a document after a newer version
// was started behind its back (as when a worker dies between its write and
// the end of the procedure), and records Superseded calls.
type cleanupSink struct {
	worker.Sink
	recs   *worker.KVRecords
	newer  uint64
	at     string // the newer version's target
	mu     sync.Mutex
	writes int
	calls  []worker.Doc
}

func (s *cleanupSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	s.mu.Lock()
	s.writes++
	first := s.writes == 1
	s.mu.Unlock()
	if first {
		if _, _, err := s.recs.Start(ctx, doc.ID, s.at, messages.DocRecord{IngestSeq: s.newer, Op: worker.OpUpsert}); err != nil {
			return err
		}
		return errors.New("worker died after its write")
	}
	return s.Sink.Write(ctx, doc, chunks)
}

func (s *cleanupSink) Superseded(_ context.Context, doc worker.Doc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, doc)
	return nil
}

// TestSupersededRedeliveryCleansUp: a redelivered request found overtaken
// lets a SupersededSink remove what its earlier attempt wrote; a first
// delivery found overtaken wrote nothing and costs the sink nothing.
func TestSupersededRedeliveryCleansUp(t *testing.T) {
	cfg := testConfig()
	cfg.BackoffBase = 50 * time.Millisecond
	e := newEnv(t, cfg)
	old := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# Old\n\nold text")}, "")
	const newer = 1 << 20 // a version far ahead, started by "another worker"
	sink := &cleanupSink{Sink: subjectsink.New(e.js, cfg.ChunksPrefix, 8), recs: worker.NewKVRecords(e.top.Docs), newer: newer}
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	testutil.WaitFor(t, 20*time.Second, "the old version settled", func() bool { _, ok := res.finals()[old]; return ok })
	if r := res.finals()[old]; r.Outcome != worker.OutcomeSuperseded || r.Delivery != 2 {
		t.Fatalf("final = %+v, want superseded on delivery 2", r)
	}
	sink.mu.Lock()
	calls := append([]worker.Doc(nil), sink.calls...)
	sink.mu.Unlock()
	if len(calls) != 1 || calls[0].ID != "a.md" || calls[0].Seq != old {
		t.Errorf("Superseded calls = %+v, want one for a.md at %d", calls, old)
	}

	// A first delivery that is already overtaken: no Superseded call.
	first := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# Other\n\ntext")}, "")
	testutil.WaitFor(t, 20*time.Second, "the second old version settled", func() bool { _, ok := res.finals()[first]; return ok })
	if r := res.finals()[first]; r.Outcome != worker.OutcomeSuperseded || r.Delivery != 1 {
		t.Errorf("final = %+v, want superseded on delivery 1", r)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.calls) != 1 {
		t.Errorf("Superseded called %d times, want once (first deliveries wrote nothing)", len(sink.calls))
	}
}

// targetedSink is a cleanupSink that writes every document to one place
// (worker.TargetSink).
type targetedSink struct {
	*cleanupSink
	target string
}

func (s targetedSink) Target(worker.Doc) string { return s.target }

// TestSupersededElsewhereKeepsItsChunks: a redelivered version overtaken by
// a newer one started at another place of the sink (another Qdrant
// collection, as in a rolling restart onto a new collection) is written
// again at its own place, so that an interrupted write is not left half
// done, and nothing is removed; overtaken at its own place, it is acked
// as superseded and what it wrote removed.
func TestSupersededElsewhereKeepsItsChunks(t *testing.T) {
	for _, tt := range []struct {
		at      string
		outcome worker.Outcome
		writes  int
		calls   int
	}{{"chunks_v2", worker.OutcomeAcked, 2, 0}, {"chunks_v1", worker.OutcomeSuperseded, 1, 1}} {
		t.Run("newer at "+tt.at, func(t *testing.T) {
			cfg := testConfig()
			cfg.BackoffBase = 50 * time.Millisecond
			e := newEnv(t, cfg)
			old := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# Old\n\nold text")}, "")
			inner := &cleanupSink{Sink: subjectsink.New(e.js, cfg.ChunksPrefix, 8), recs: worker.NewKVRecords(e.top.Docs), newer: 1 << 20, at: tt.at}
			_, res, _ := e.startWorker(worker.Options{Sink: targetedSink{inner, "chunks_v1"}})
			testutil.WaitFor(t, 20*time.Second, "the old version settled", func() bool { _, ok := res.finals()[old]; return ok })
			if r := res.finals()[old]; r.Outcome != tt.outcome || r.Delivery != 2 {
				t.Fatalf("final = %+v, want %s on delivery 2", r, tt.outcome)
			}
			inner.mu.Lock()
			defer inner.mu.Unlock()
			if len(inner.calls) != tt.calls || inner.writes != tt.writes {
				t.Errorf("Superseded called %d times, Write %d; want %d and %d", len(inner.calls), inner.writes, tt.calls, tt.writes)
			}
		})
	}
}

// TestNewestSeqLeaderRead: the leader read of step 4 agrees with the KV
// read for present, moved-forward and absent records.
func TestNewestSeqLeaderRead(t *testing.T) {
	e := newEnv(t, testConfig())
	ctx := context.Background()
	kv := worker.NewKVRecords(e.top.Docs)
	leader := kv.WithLeaderReads(e.nc)
	if _, _, err := kv.Start(ctx, "docs/a.md", "", messages.DocRecord{IngestSeq: 7, Op: worker.OpUpsert}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Start(ctx, "docs/a.md", "", messages.DocRecord{IngestSeq: 9, Op: worker.OpDelete}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Start(ctx, "b/ü.md", "", messages.DocRecord{IngestSeq: 3, Op: worker.OpUpsert}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want uint64
	}{{"docs/a.md", 9}, {"b/ü.md", 3}, {"missing.md", 0}} {
		got, err := leader.NewestSeq(ctx, tt.id, "")
		if err != nil || got != tt.want {
			t.Errorf("leader NewestSeq(%q) = %d, %v; want %d", tt.id, got, err, tt.want)
		}
		viaKV, err := kv.NewestSeq(ctx, tt.id, "")
		if err != nil || viaKV != got {
			t.Errorf("KV NewestSeq(%q) = %d, %v; leader read %d", tt.id, viaKV, err, got)
		}
	}
}

// TestDrainDoesNotWaitForAHungChunker: a chunker call that does not end
// cannot hold the worker past DrainTimeout plus a short grace, and its
// request stays in INGEST for redelivery. The chunker here returns only
// once the test releases it, after Run has returned.
func TestDrainDoesNotWaitForAHungChunker(t *testing.T) {
	cfg := testConfig()
	cfg.DrainTimeout = 200 * time.Millisecond
	e := newEnv(t, cfg)
	release := make(chan struct{})
	hung := registrytest.Func("hung", func(registrytest.Config) (chunking.Chunker, error) {
		return chunking.ChunkerFunc(func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
			<-release
			return nil, nil, nil
		}), nil
	})
	w, _, stop := e.startWorker(worker.Options{Chunkers: registrytest.With(hung)})
	t.Cleanup(func() { close(release) }) // runs before the stop startWorker registered
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "hung.md", Chunker: "hung", Content: []byte("# S\n\nx")}, "")
	testutil.WaitFor(t, time.Minute, "in flight", func() bool { return metricValue(t, w.Metrics().InFlight) == 1 })
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Minute): // a guard: stopping takes DrainTimeout plus a short grace
		t.Fatal("Run did not return while a chunker call hung")
	}
	if n := e.pendingIngest(); n != 1 {
		t.Errorf("INGEST holds %d requests, want the hung one kept", n)
	}
}

// TestIngestMadeAgainKeepsVersionsNew: INGEST deleted under a running
// worker is made again by it, numbering requests above the versions the
// records hold: a new version and a delete sent afterwards are processed,
// not acked as superseded by the records of the old stream's numbers.
func TestIngestMadeAgainKeepsVersionsNew(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg)
	ctx := context.Background()
	_, res, _ := e.startWorker(worker.Options{})
	var last uint64
	for i := range 5 {
		last = e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("d%d.md", i), Content: []byte("# old\n\nold text\n")}, "")
	}
	testutil.WaitFor(t, 20*time.Second, "the first versions done", func() bool { return len(res.finals()) == 5 })
	if err := e.js.DeleteStream(ctx, cfg.IngestStream); err != nil {
		t.Fatal(err)
	}
	// Published once INGEST is back (each try its own message id).
	send := func(req messages.IngestRequest) (seq uint64) {
		t.Helper()
		data, err := messages.EncodeIngest(&req, "")
		if err != nil {
			t.Fatal(err)
		}
		// The worker makes it again at its next storage probe, which backs
		// off while it fails: generous, for a busy machine.
		testutil.WaitFor(t, 2*time.Minute, "INGEST made again", func() bool {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			ack, err := e.js.Publish(pctx, "ingest.docs", data)
			if err == nil {
				seq = ack.Sequence
			}
			return err == nil
		})
		return seq
	}
	v2 := send(messages.IngestRequest{V: 1, ID: "d0.md", Content: []byte("# new\n\nnew text\n")})
	del := send(messages.IngestRequest{V: 1, ID: "d1.md", Op: messages.OpDelete})
	if v2 <= last {
		t.Fatalf("the new version numbered %d, at or below the old stream's %d", v2, last)
	}
	testutil.WaitFor(t, time.Minute, "the new version and the delete", func() bool {
		f := res.finals()
		return f[v2].Outcome != "" && f[del].Outcome != ""
	})
	for _, seq := range []uint64{v2, del} {
		if r := res.finals()[seq]; r.Outcome != worker.OutcomeAcked {
			t.Errorf("request %d: %s (%v), want processed", seq, r.Outcome, r.Err)
		}
	}
	if rec := e.docRecord("d0.md"); rec.IngestSeq != v2 || rec.State != messages.StateDone {
		t.Errorf("d0.md record %+v, want done at %d", rec, v2)
	}
}
