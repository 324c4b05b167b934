package producer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
)

func TestBackfillDuplicateIDs(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(d, "same.md"), []byte("# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(a, "only-a.md"), []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		ok    bool
	}{
		{"two roots, same relative path", []string{a, b}, false},
		{"root and file inside it", []string{a, filepath.Join(b, "same.md")}, false},
		{"one root", []string{a}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: tc.paths, DryRun: !tc.ok})
			if tc.ok {
				if err != nil || s.Sent != 2 {
					t.Fatalf("Backfill(%v) = %+v, %v; want 2 sent", tc.paths, s.Stats, err)
				}
				return
			}
			if !errors.Is(err, ErrDuplicateID) || s.Total != 0 {
				t.Fatalf("Backfill(%v) = %+v, %v; want ErrDuplicateID before anything", tc.paths, s.Stats, err)
			}
		})
	}
	// Nothing but the good run reached the stream.
	st, _ := e.js.Stream(ctx, e.cfg.IngestStream)
	info, _ := st.Info(ctx)
	if info.State.LastSeq != 2 {
		t.Errorf("INGEST last seq %d, want 2", info.State.LastSeq)
	}
}

func TestBackfillIDPrefixAndExts(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range []string{"a.md", "b.txt", "sub/c.MD", ".hidden/d.md", "sub/.e.md"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	_, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/", Exts: []string{"md"},
		DryRun: true, OnDryRun: func(p Planned) { got = append(got, p.ID) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := "kb/a.md kb/sub/c.MD"; strings.Join(got, " ") != want {
		t.Errorf("ids = %q, want %q", strings.Join(got, " "), want)
	}
}

// TestBackfillLargeDocument: a 20 MB document goes through the Object
// Store (named by its sha256, content_ref in the request) and comes out
// chunked. Workers never delete objects (the bucket's TTL does).
func TestBackfillLargeDocument(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	size := 20 << 20
	if raceEnabled {
		size = 3 << 20 // still over the 1 MiB max payload; chunking 20 MB under -race takes a minute
	}
	big := mdContent(1, size)
	if err := os.WriteFile(filepath.Join(dir, "big.md"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.md"), mdContent(2, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	if int64(len(big)) <= e.nc.MaxPayload() {
		t.Fatalf("document of %d bytes fits the max payload %d", len(big), e.nc.MaxPayload())
	}
	var planned []Planned
	if _, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, DryRun: true,
		OnDryRun: func(p Planned) { planned = append(planned, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(planned) != 2 || !planned[0].Object || planned[1].Object {
		t.Fatalf("planned %+v, want big.md through the Object Store only", planned)
	}
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil || s.Sent != 2 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	// The request carries content_ref to the object named by the sha256.
	st, _ := e.js.Stream(ctx, e.cfg.IngestStream)
	raw, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.DecodeIngest(raw.Header.Get(messages.HeaderContentType), raw.Data)
	if err != nil {
		t.Fatal(err)
	}
	version := messages.ContentVersion(big)
	if req.ID != "big.md" || req.Content != nil || req.ContentRef == nil ||
		*req.ContentRef != (messages.ContentRef{Bucket: e.cfg.ObjectsBucket, Name: version}) {
		t.Fatalf("request = id %q, content_ref %+v; want big.md → %s", req.ID, req.ContentRef, version)
	}
	if got := raw.Header.Get(messages.HeaderMsgID); !strings.HasPrefix(got, "big.md@"+version+"@") {
		t.Errorf("Nats-Msg-Id = %q", got)
	}
	results := e.runWorker(ctx, 2)
	if r := results["big.md"]; len(r) != 1 || r[0].Outcome != worker.OutcomeAcked || r[0].Chunks < 100 {
		t.Fatalf("worker results for big.md: %+v", r)
	}
	compareViews(t, e.view(ctx), expected(t, dir, ""))
	obs, err := e.js.ObjectStore(ctx, e.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.GetInfo(ctx, version); err != nil {
		t.Errorf("object %s after processing: %v (workers never delete objects)", version, err)
	}
	if st, err := obs.Status(ctx); err != nil || st.TTL() != 7*24*time.Hour {
		t.Errorf("objects bucket TTL = %v, %v; want 7 days", st.TTL(), err)
	}
}

// TestBackfillCreatesObjectsBucket: without the worker's set-up, the
// producer creates the objects bucket with the 7-day TTL.
func TestBackfillCreatesObjectsBucket(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if err := e.js.DeleteObjectStore(ctx, e.cfg.ObjectsBucket); err != nil {
		t.Fatal(err)
	}
	p := e.producer(Options{MaxInline: 1000, Topology: topology.Config{ObjectsTTL: time.Hour}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), mdContent(1, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil || s.Sent != 1 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	obs, err := e.js.ObjectStore(ctx, e.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := obs.Status(ctx); st.TTL() != time.Hour {
		t.Errorf("TTL = %v, want 1h", st.TTL())
	}
}

// TestBackfillServerOutage: the server stopped briefly mid-backfill → the
// producer retries with the same Nats-Msg-Id, counts the retries and the
// outage, and every document is on the stream once; stopped for good →
// the run gives up after RetryFor, reports, and a re-run after the
// restart completes without duplicates.
func TestBackfillServerOutage(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := 1500
	if raceEnabled {
		n = 600
	}
	dir := t.TempDir()
	writeFiles(t, dir, n, 300)

	// A: a short outage is ridden out by the retries.
	var done atomic.Int64
	stopped := make(chan struct{})
	go func() {
		for done.Load() < int64(n/3) {
			time.Sleep(5 * time.Millisecond)
		}
		e.stop()
		time.Sleep(300 * time.Millisecond)
		e.start()
		close(stopped)
	}()
	s, err := e.producer(Options{MaxPending: 64}).Backfill(ctx, BackfillOptions{
		Paths: []string{dir}, Rate: 2000,
		Retry:      RetryOptions{Wait: 50 * time.Millisecond, MaxWait: 200 * time.Millisecond, AckTimeout: time.Second},
		OnProgress: func(st Stats) { done.Store(int64(st.Done)) },
	})
	<-stopped
	if err != nil || s.Sent != n || s.Failed != 0 || s.GaveUp != 0 {
		t.Fatalf("Backfill across a short outage = %+v, %v (%v)", s.Stats, err, s.Failures)
	}
	// Publishing at 2000/s through a stopped server: publishes failed,
	// were retried and the outage was seen.
	if s.Retries == 0 || s.Outages == 0 || s.Unavailable == 0 {
		t.Errorf("short outage: %d retries, %d outages, %v unavailable; want all counted", s.Retries, s.Outages, s.Unavailable)
	}
	checkIngestOnce(t, e, n)
	start := time.Now()
	t.Logf("short outage: %d sent, %d retries, %d acknowledged as duplicates of a retried publish, %d outages (%v)",
		s.Sent, s.Retries, s.Duplicates, s.Outages, s.Unavailable)
	results := e.runWorker(ctx, n)
	checkOnce(t, results, n)
	t.Logf("worker done after %v", time.Since(start))

	// B: an outage longer than the retries: the run stops and reports.
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.md", i))
		if err := os.WriteFile(p, mdContent(i+n, 300), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(0)
	go func() {
		for done.Load() < int64(n/3) {
			time.Sleep(5 * time.Millisecond)
		}
		e.stop()
	}()
	s, err = e.producer(Options{MaxPending: 64}).Backfill(ctx, BackfillOptions{
		Paths: []string{dir}, Rate: 2000,
		Retry:      RetryOptions{RetryFor: time.Second, Wait: 50 * time.Millisecond, AckTimeout: 300 * time.Millisecond},
		OnProgress: func(st Stats) { done.Store(int64(st.Done)) },
	})
	if !errors.Is(err, ErrUnavailable) || s.Failed == 0 || s.Sent+s.Failed != n || len(s.Failures) == 0 {
		t.Fatalf("Backfill with the server gone = %+v, %v; want ErrUnavailable and failures reported", s.Stats, err)
	}
	if s.GaveUp == 0 || s.GaveUp > s.Failed || s.Outages == 0 {
		t.Errorf("Backfill with the server gone: %d given up of %d failed, %d outages; want the give-up counted", s.GaveUp, s.Failed, s.Outages)
	}
	t.Logf("long outage: %d sent, %d failed; first failure: %v", s.Sent, s.Failed, s.Failures[0].Err)
	t.Logf("phase B done after %v", time.Since(start))
	e.start()
	if !waitConnected(e, 10*time.Second) {
		t.Fatal("client did not reconnect")
	}
	first := e.pendingIngest(ctx)
	r1 := e.runWorker(ctx, first)
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil || s.Failed != 0 || s.Sent+s.Skipped != n {
		t.Fatalf("re-run = %+v, %v", s.Stats, err)
	}
	if s.Sent > n-first+int(s.Duplicates) {
		t.Errorf("re-run sent %d, but only %d documents were missing", s.Sent, n-first)
	}
	t.Logf("re-run done after %v", time.Since(start))
	r2 := e.runWorker(ctx, s.Sent)
	for id, rs := range r2 {
		r1[id] = append(r1[id], rs...)
	}
	checkOnce(t, r1, n)
	compareViews(t, e.view(ctx), expected(t, dir, ""))
}

// checkIngestOnce: INGEST holds exactly n requests, no two with the same
// Nats-Msg-Id (a retried publish the duplicate window did not drop) or
// the same document id.
func checkIngestOnce(t *testing.T, e *env, n int) {
	t.Helper()
	checkStreamOnce(t, e.js, e.cfg.IngestStream, n)
}

// checkStreamOnce is checkIngestOnce for the stream name through js.
func checkStreamOnce(t *testing.T, js jetstream.JetStream, name string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if int(info.State.Msgs) != n {
		t.Errorf("INGEST holds %d requests, want %d", info.State.Msgs, n)
	}
	msgIDs, docIDs := map[string]int{}, map[string]int{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		msgIDs[m.Header.Get(messages.HeaderMsgID)]++
		docIDs[req.ID]++
	}
	if len(msgIDs) != n || len(docIDs) != n {
		t.Errorf("INGEST: %d distinct Nats-Msg-Ids, %d distinct documents; want %d", len(msgIDs), len(docIDs), n)
	}
	for id, c := range docIDs {
		if c != 1 {
			t.Errorf("document %s stored %d times", id, c)
		}
	}
}

// checkOnce: every document was written exactly once.
func checkOnce(t *testing.T, results map[string][]worker.Result, n int) {
	t.Helper()
	if len(results) != n {
		t.Errorf("%d documents processed, want %d", len(results), n)
	}
	for id, rs := range results {
		if len(rs) != 1 || rs[0].Outcome != worker.OutcomeAcked {
			t.Errorf("document %s: %d results (%+v), want one acked", id, len(rs), rs)
			return
		}
	}
}

func waitConnected(e *env, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if e.nc.IsConnected() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// pendingIngest returns the number of requests waiting on INGEST.
func (e *env) pendingIngest(ctx context.Context) int {
	e.t.Helper()
	st, err := e.js.Stream(ctx, e.cfg.IngestStream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return int(info.State.Msgs)
}

func TestSendLines(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	big := strings.Repeat("big document line\n", 4000)
	input := strings.Join([]string{
		`{"v":1,"id":"a.md","content":"# A\n\ntext\n"}`,
		`not json`,
		``,
		`{"v":1,"content":"no id"}`,
		`{"v":1,"id":"b.txt","content_b64":"aGVsbG8="}`,
		`{"v":1,"id":"c.md"}`,
		`{"v":1,"id":"d.md","op":"delete"}`,
		`{"v":1,"id":"e.md","op":"rename"}`,
		`{"v":2,"id":"f.md","content":"x"}`,
		`{"v":1,"id":"g.md","content":"x","format":"docx"}`,
		`{"v":1,"id":"h.md","content":"x","content_ref":{"bucket":"B","name":"n"}}`,
		`{"v":1,"id":"i.md","content_ref":{"bucket":"CHUNKSTREAM_OBJECTS","name":"abc"}}`,
		`{"v":1,"id":"big.md","content":"` + strings.ReplaceAll(big, "\n", `\n`) + `"}`,
		`{"v":1,"id":"j.md","content":"x","chunker":"nope"}`,
		`{"v":1,"id":"k.md","content":"x","options":{"no_such_option":1}}`,
		`{"v":1,"id":"l.md","content":"x","options":{"max_char":-5}}`,
		`{"v":1,"id":"m.md","content":"x","chunker":"twostep"}`,
		`{"v":1,"id":"last.md","content":"no newline at the end"}`,
	}, "\n")
	var bad []int
	p := e.producer(Options{ContentType: messages.ContentTypeJSON, MaxInline: 10000})
	s, err := p.SendLines(ctx, strings.NewReader(input), StreamOptions{OnBadLine: func(f Failure) { bad = append(bad, f.Line) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 4, 6, 8, 9, 10, 11, 14, 15, 16}; fmt.Sprint(bad) != fmt.Sprint(want) {
		t.Errorf("bad lines = %v, want %v (%v)", bad, want, s.Failures)
	}
	if s.Sent != 7 || s.Deleted != 1 || s.Failed != 10 || s.Total != 17 {
		t.Errorf("summary = %+v, want 7 sent (1 delete), 10 failed of 17", s.Stats)
	}
	for _, f := range s.Failures {
		if !strings.HasPrefix(f.Err.Error(), fmt.Sprintf("line %d: ", f.Line)) {
			t.Errorf("failure %v does not name its line", f.Err)
		}
	}
	st, _ := e.js.Stream(ctx, e.cfg.IngestStream)
	want := []struct{ id, msgID string }{
		{"a.md", "a.md@" + messages.ContentVersion([]byte("# A\n\ntext\n")) + "@"},
		{"b.txt", "b.txt@" + messages.ContentVersion([]byte("hello")) + "@"},
		{"d.md", "d.md@delete@"},
		{"i.md", "i.md@abc@"},
		{"big.md", "big.md@" + messages.ContentVersion([]byte(big)) + "@"},
		{"m.md", "m.md@"},
		{"last.md", "last.md@"},
	}
	for i, w := range want {
		m, err := st.GetMsg(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if req.ID != w.id || !strings.HasPrefix(m.Header.Get(messages.HeaderMsgID), w.msgID) ||
			!strings.HasSuffix(m.Header.Get(messages.HeaderMsgID), "@"+p.SendID()) {
			t.Errorf("message %d: id %q, Nats-Msg-Id %q; want %q, %q…", i+1, req.ID, m.Header.Get(messages.HeaderMsgID), w.id, w.msgID)
		}
		if w.id == "b.txt" && !bytes.Equal(req.Content, []byte("hello")) {
			t.Errorf("b.txt content = %q", req.Content)
		}
		if w.id == "big.md" && (req.ContentRef == nil || req.Content != nil) {
			t.Errorf("big.md: content_ref %+v, want the Object Store", req.ContentRef)
		}
	}
}

func TestReadLineTooLong(t *testing.T) {
	in := strings.Repeat("x", 100) + "\nok\n" + strings.Repeat("y", 50)
	br := bufioReader(in, 16)
	var got []string
	for {
		line, tooLong, err := readLine(br, 60)
		got = append(got, fmt.Sprintf("%q/%v", line, tooLong))
		if err != nil {
			break
		}
	}
	if len(got) != 3 || got[0] != `""/true` || got[1] != `"ok"/false` || got[2] != fmt.Sprintf("%q/false", strings.Repeat("y", 50)) {
		t.Errorf("readLine = %v", got)
	}
}

func TestWalkable(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		exts []string
		want bool
	}{
		{"a.md", nil, true},
		{"a.md", []string{"md"}, true},
		{"sub/a.MD", []string{".md"}, true},
		{"a.txt", []string{".md", "mdx"}, false},
		{".hidden/a.md", nil, false},
		{"sub/.a.md", nil, false},
		{"box.mbox#thread@x", []string{".md"}, false},
	} {
		if got := walkable(tc.rel, tc.exts); got != tc.want {
			t.Errorf("walkable(%q, %q) = %v, want %v", tc.rel, tc.exts, got, tc.want)
		}
	}
}

// TestDeleteMissingScope: -delete-missing leaves alone what the walk could
// not have produced (other extensions, hidden files, a mailbox's threads)
// and files filtered out but present.
func TestDeleteMissingScope(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range []string{"a.md", "b.md", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := e.js.KeyValue(ctx, e.cfg.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a.md", "b.md", "c.txt", "gone.md", "gone.txt", ".hidden.md", "box.mbox#t@x", "deleted.md"} {
		op := "upsert"
		if id == "deleted.md" {
			op = "delete"
		}
		if _, err := kv.Put(ctx, messages.DocRecordKey(id), []byte(`{"ingest_seq":1,"doc_version":"","op":"`+op+`","state":"done"}`)); err != nil {
			t.Fatal(err)
		}
	}
	var deletes []string
	_, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Exts: []string{".md"}, DeleteMissing: true, DryRun: true,
		OnDryRun: func(p Planned) {
			if p.Op == messages.OpDelete {
				deletes = append(deletes, p.ID)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(deletes) != "[gone.md]" {
		t.Errorf("deletes = %v, want [gone.md]", deletes)
	}
}

// TestObjectRemovedByTTL: the object of a large document outlives its
// processing (workers never delete objects: another request may name the
// same content) and is then removed by the bucket's TTL.
func TestObjectRemovedByTTL(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.js.DeleteObjectStore(ctx, e.cfg.ObjectsBucket); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	content := mdContent(1, 5000)
	if err := os.WriteFile(filepath.Join(dir, "a.md"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	const ttl = 3 * time.Second
	s, err := e.producer(Options{MaxInline: 1000, Topology: topology.Config{ObjectsTTL: ttl}}).Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil || s.Sent != 1 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	start := time.Now()
	results := e.runWorker(ctx, 1)
	if r := results["a.md"]; len(r) != 1 || r[0].Outcome != worker.OutcomeAcked || r[0].Chunks == 0 {
		t.Fatalf("worker results for a.md: %+v", r)
	}
	compareViews(t, e.view(ctx), expected(t, dir, ""))
	obs, err := e.js.ObjectStore(ctx, e.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	version := messages.ContentVersion(content)
	if time.Since(start) < ttl {
		if _, err := obs.GetInfo(ctx, version); err != nil {
			t.Errorf("object %s right after processing: %v, want it kept until the TTL", version, err)
		}
	}
	for {
		_, err := obs.GetInfo(ctx, version)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("object %s still there %v after processing (TTL %v): %v", version, time.Since(start), ttl, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
