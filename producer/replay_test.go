package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// replaySink is a sink under test and how to read what it holds.
type replaySink struct {
	name string
	open func(t *testing.T, e *env) (worker.Sink, func() map[string][]string)
}

var replaySinks = []replaySink{
	{"subject", func(t *testing.T, e *env) (worker.Sink, func() map[string][]string) {
		return subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes),
			func() map[string][]string { return e.view(context.Background()) }
	}},
	{"qdrant", func(t *testing.T, e *env) (worker.Sink, func() map[string][]string) {
		qd := qdranttest.Start(t)
		cfg := qdrantsink.DefaultConfig()
		cfg.Addr = qd.Addr()
		sink, err := qdrantsink.New(context.Background(), cfg, worker.NewKVRecords(e.top.Docs), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sink.Close() })
		return sink, func() map[string][]string { return points(t, qd, cfg.Collection) }
	}},
}

// replayCase is a document whose version 1 is dead-lettered (an option
// today's workers refuse) and whose version 2 is good.
type replayCase struct {
	*env
	ctx      context.Context
	sink     worker.Sink
	held     func() map[string][]string
	v1, v2   uint64 // INGEST sequences
	old, new []byte
}

const replayDoc = "replay/a.md"

func newReplayCase(t *testing.T, s replaySink) *replayCase {
	e := newEnv(t, nil)
	e.cfg.Concurrency = 1 // one request at a time, in stream order
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	sink, held := s.open(t, e)
	c := &replayCase{env: e, ctx: ctx, sink: sink, held: held,
		old: mdContent(1, 3000), new: mdContent(2, 5000)}
	ack, err := e.producer(Options{}).Enqueue(ctx, Document{ID: replayDoc, Content: c.old, Options: map[string]any{"heading_aware": true}})
	if err != nil {
		t.Fatal(err)
	}
	c.v1 = ack.Sequence
	if r := c.workToday(1)[replayDoc]; r[0].Outcome != worker.OutcomePermanent {
		t.Fatalf("version 1: %+v, want dead-lettered", r)
	}
	return c
}

// work runs a fresh worker (as after a restart) until n requests are final.
func (c *replayCase) work(n int) map[string][]worker.Result {
	return c.runWorkerChunkers(c.ctx, c.sink, newerChunkers(), n)
}

// workToday is work with the chunkers of today's workers, which refuse
// version 1's option.
func (c *replayCase) workToday(n int) map[string][]worker.Result {
	c.t.Helper()
	return c.runWorkerWith(c.ctx, c.sink, n)
}

// sendV2 sends version 2 of the document.
func (c *replayCase) sendV2() {
	c.t.Helper()
	ack, err := c.producer(Options{}).Enqueue(c.ctx, Document{ID: replayDoc, Content: c.new})
	if err != nil {
		c.t.Fatal(err)
	}
	c.v2 = ack.Sequence
}

// replay replays every dead letter and returns what happened to each.
func (c *replayCase) replay(dryRun bool) []Replayed {
	c.t.Helper()
	var got []Replayed
	if _, err := NewDLQ(c.js, DLQOptions{}).Replay(c.ctx, DLQFilter{}, ReplayOptions{DryRun: dryRun,
		OnResult: func(r Replayed) { got = append(got, r) }}); err != nil {
		c.t.Fatal(err)
	}
	return got
}

// holds checks the sink holds exactly content's chunks for the document
// and the record is done at seq.
func (c *replayCase) holds(content []byte, seq uint64) {
	c.t.Helper()
	want := chunkHashes(c.t, replayDoc, content)
	if got := c.held()[replayDoc]; !slices.Equal(got, want) {
		c.t.Errorf("the sink holds %d chunks %v, want version %d's %d chunks %v", len(got), got, seq, len(want), want)
	}
	rec, ok, err := ReadRecord(c.ctx, c.js, c.cfg.DocsBucket, replayDoc)
	if err != nil || !ok || rec.IngestSeq != seq || rec.State != messages.StateDone {
		c.t.Errorf("record %+v (found %v, %v), want done at %d", rec, ok, err, seq)
	}
}

// chunkHashes is the hashes of the chunks the worker makes of content.
func chunkHashes(t *testing.T, id string, content []byte) []string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, id, content)
	return expected(t, dir, "")[id]
}

// TestReplayKeepsItsPlaceInTime: replaying the dead letter of version 1
// after version 2 was done, or while version 2 is on its way, never
// brings version 1 back; replaying the newest version processes it. Each
// step runs a fresh worker, as after a restart; both sinks.
func TestReplayKeepsItsPlaceInTime(t *testing.T) {
	for _, s := range replaySinks {
		t.Run(s.name+"/old replay after newer done", func(t *testing.T) {
			c := newReplayCase(t, s)
			c.sendV2()
			if r := c.work(1)[replayDoc]; r[0].Outcome != worker.OutcomeAcked {
				t.Fatalf("version 2: %+v", r)
			}
			for _, dry := range []bool{true, false} {
				got := c.replay(dry)
				if len(got) != 1 || got[0].Action != ActionRemove || got[0].Entry.Standing != StandingSuperseded ||
					got[0].Entry.RecordSeq != c.v2 || got[0].Entry.IngestSeq != c.v1 || got[0].Why != "" {
					t.Fatalf("replay (dry run %v) = %+v, want superseded by version %d", dry, got, c.v2)
				}
			}
			if n, m := c.streamCount(c.cfg.DLQStream), c.streamCount(c.cfg.IngestStream); n != 0 || m != 0 {
				t.Errorf("after the replay DLQ holds %d, INGEST %d; want 0 and 0 (nothing sent)", n, m)
			}
			c.holds(c.new, c.v2)
		})
		t.Run(s.name+"/newer version arrives while the replay is in flight", func(t *testing.T) {
			c := newReplayCase(t, s)
			if got := c.replay(false); len(got) != 1 || got[0].Action != ActionProcess {
				t.Fatalf("replay = %+v, want published", got)
			}
			c.sendV2()
			// In stream order: the replay (version 1) is written, then
			// version 2 overwrites it.
			res := c.work(2)[replayDoc]
			if len(res) != 2 || res[0].IngestSeq != c.v1 || res[1].IngestSeq != c.v2 ||
				res[0].Outcome != worker.OutcomeAcked || res[1].Outcome != worker.OutcomeAcked {
				t.Fatalf("results %+v, want version %d then %d acked", res, c.v1, c.v2)
			}
			c.holds(c.new, c.v2)
		})
		t.Run(s.name+"/newer version done before the replay is processed", func(t *testing.T) {
			c := newReplayCase(t, s)
			dls := listDLQ(t, NewDLQ(c.js, DLQOptions{}), DLQFilter{})
			c.sendV2()
			c.work(1)
			// The replay as Replay publishes it once it found version 1
			// current, overtaken before a worker takes it.
			out := nats.NewMsg(dls[0].Subject)
			out.Data = dls[0].data
			out.Header = nats.Header(messages.UserHeaders(dls[0].header))
			out.Header.Set(messages.HeaderIngestSeq, strconv.FormatUint(dls[0].IngestSeq, 10))
			if _, err := c.js.PublishMsg(c.ctx, out); err != nil {
				t.Fatal(err)
			}
			if r := c.work(1)[replayDoc]; r[0].Outcome != worker.OutcomeSuperseded || r[0].IngestSeq != c.v1 {
				t.Fatalf("replay: %+v, want superseded", r)
			}
			c.holds(c.new, c.v2)
		})
		t.Run(s.name+"/replay of the newest version", func(t *testing.T) {
			c := newReplayCase(t, s)
			got := c.replay(true)
			if len(got) != 1 || got[0].Action != ActionProcess || got[0].Entry.Standing != StandingCurrent {
				t.Fatalf("replay -dry-run = %+v, want would process", got)
			}
			c.replay(false)
			if r := c.work(1)[replayDoc]; r[0].Outcome != worker.OutcomeAcked || r[0].IngestSeq != c.v1 {
				t.Fatalf("replay: %+v, want version %d acked", r, c.v1)
			}
			c.holds(c.old, c.v1)
		})
		t.Run(s.name+"/replay fails again then is purged", func(t *testing.T) {
			c := newReplayCase(t, s)
			c.replay(false)
			if r := c.workToday(1)[replayDoc]; r[0].Outcome != worker.OutcomePermanent {
				t.Fatalf("replay: %+v, want dead-lettered again", r)
			}
			dls := listDLQ(t, NewDLQ(c.js, DLQOptions{}), DLQFilter{})
			if len(dls) != 1 || dls[0].IngestSeq != c.v1 || dls[0].StreamSeq == c.v1 {
				t.Fatalf("dead letters %+v, want the replay's, of version %d", dls, c.v1)
			}
			rec, _, _ := ReadRecord(c.ctx, c.js, c.cfg.DocsBucket, replayDoc)
			if rec.State != messages.StateDeadLettered || rec.IngestSeq != c.v1 || rec.LastFailure.IngestSeq != c.v1 {
				t.Fatalf("record %+v, want version %d dead-lettered", rec, c.v1)
			}
			if _, err := NewDLQ(c.js, DLQOptions{}).Purge(c.ctx, DLQFilter{}, PurgeOptions{All: true}); err != nil {
				t.Fatal(err)
			}
			rec, _, _ = ReadRecord(c.ctx, c.js, c.cfg.DocsBucket, replayDoc)
			if rec.State != messages.StateDismissed || rec.LastFailure != (messages.Failure{}) {
				t.Errorf("record after purge %+v, want dismissed", rec)
			}
		})
	}
}

// writeFile writes content at dir/name, making its folders.
func writeFile(t *testing.T, dir, name string, content []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// halfSink is a Qdrant sink that, for version failSeq, writes the first
// chunk and then fails permanently (Qdrant took one request, then refused
// the next as invalid): the version is dead-lettered half written.
type halfSink struct {
	*qdrantsink.Sink
	failSeq uint64
}

func (h *halfSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if doc.Seq == h.failSeq && len(chunks) > 1 {
		if err := h.Sink.Write(ctx, doc, chunks[:1]); err != nil {
			return err
		}
		return fault.Permanent(errors.New("qdrantsink: request refused as invalid"))
	}
	return h.Sink.Write(ctx, doc, chunks)
}

// TestReplayFinishesVersionOvertakenElsewhere: version S of a document,
// sent to collection "chunks", is dead-lettered half written; a newer
// version N goes to collection "other" (a move to a new collection). S is
// still the newest version started in "chunks" (the record's targets), so
// its dead letter stands current, not superseded, and its replay is
// processed as a redelivery of S, finishing S's write there (rule of
// docs/design.md, "Versions in several collections"): "chunks" holds S
// whole, "other" N, and the record stays at N.
func TestReplayFinishesVersionOvertakenElsewhere(t *testing.T) {
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
	p := e.producer(Options{})
	r, s, n := mdContent(1, 3000), mdContent(2, 4000), mdContent(3, 3000)
	send := func(content []byte, collection string) uint64 {
		t.Helper()
		ack, err := p.Enqueue(ctx, Document{ID: replayDoc, Content: content, Collection: collection})
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	send(r, "")
	e.runWorkerWith(ctx, sink, 1)
	sSeq := send(s, "")
	if res := e.runWorkerWith(ctx, &halfSink{Sink: sink, failSeq: sSeq}, 1)[replayDoc]; res[0].Outcome != worker.OutcomePermanent {
		t.Fatalf("version S: %+v, want dead-lettered", res)
	}
	nSeq := send(n, "other")
	e.runWorkerWith(ctx, sink, 1)
	if got, want := points(t, qd, cfg.Collection)[replayDoc], chunkHashes(t, replayDoc, s); len(got) >= len(want) {
		t.Fatalf("collection %s holds %d points of the document before the replay, want fewer than S's %d (half written)", cfg.Collection, len(got), len(want))
	}

	var got []string
	sum, err := NewDLQ(e.js, DLQOptions{}).Replay(ctx, DLQFilter{}, ReplayOptions{OnResult: func(r Replayed) {
		got = append(got, fmt.Sprintf("%s %s", r.Action, r.Entry.Standing))
	}})
	if err != nil || sum.Processed != 1 || !slices.Equal(got, []string{"process overtaken_elsewhere"}) {
		t.Fatalf("Replay = %+v, %v, %q; want S processed as overtaken elsewhere", sum, err, got)
	}
	if res := e.runWorkerWith(ctx, sink, 1)[replayDoc]; res[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("the replay of S: %+v, want acked", res)
	}
	for coll, content := range map[string][]byte{cfg.Collection: s, "other": n} {
		if got, want := points(t, qd, coll)[replayDoc], chunkHashes(t, replayDoc, content); !slices.Equal(got, want) {
			t.Errorf("collection %s holds %v, want %v", coll, got, want)
		}
	}
	if rec, _, err := ReadRecord(ctx, e.js, e.cfg.DocsBucket, replayDoc); err != nil || rec.IngestSeq != nSeq || rec.State != messages.StateDone {
		t.Errorf("record %+v, %v; want done at N (%d)", rec, err, nSeq)
	}
}

// deadLetterOvertaken stores a.md's record done at version n with
// targets, and a dead letter of its version s, and returns the DLQ and
// that dead letter as listed.
func (e *env) deadLetterOvertaken(ctx context.Context, s, n uint64, targets map[string]uint64) (*DLQ, DeadLetterEntry) {
	e.t.Helper()
	val, err := messages.EncodeDocRecord(messages.DocRecord{IngestSeq: n, Op: messages.OpUpsert, State: messages.StateDone, Targets: targets})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.top.Docs.Put(ctx, messages.DocRecordKey("a.md"), val); err != nil {
		e.t.Fatal(err)
	}
	req, err := messages.EncodeIngest(&messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# A\n")}, messages.ContentTypeJSON)
	if err != nil {
		e.t.Fatal(err)
	}
	e.publishDeadLetter(req, messages.ContentTypeJSON, messages.DeadLetter{Reason: "r", Kind: messages.KindPermanent,
		Cause: "sink", Subject: "ingest.docs", StreamSeq: s, IngestSeq: s, Deliveries: 1})
	d := NewDLQ(e.js, DLQOptions{})
	return d, listDLQ(e.t, d, DLQFilter{})[0]
}

// TestStandingAtItsPlace: a dead letter of version S whose record holds a
// newer version is superseded unless S is still the newest version
// started at a place it went to (targets): then it is overtaken
// elsewhere, and replayed.
func TestStandingAtItsPlace(t *testing.T) {
	const s, n = 10, 20
	for _, tc := range []struct {
		name    string
		targets map[string]uint64
		want    Standing
	}{
		{"no targets (an older record)", nil, StandingSuperseded},
		{"newer in its collection", map[string]uint64{"chunks": n}, StandingSuperseded},
		{"newer elsewhere only", map[string]uint64{"chunks": s, "other": n}, StandingElsewhere},
		{"newer of unknown place", map[string]uint64{"chunks": s, "": n}, StandingSuperseded},
		{"newer here and elsewhere", map[string]uint64{"chunks": n, "other": n}, StandingSuperseded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			d, dl := e.deadLetterOvertaken(ctx, s, n, tc.targets)
			if err := d.Standing(ctx, &dl); err != nil || dl.Standing != tc.want {
				t.Errorf("standing %q (%v), want %q", dl.Standing, err, tc.want)
			}
		})
	}
}
