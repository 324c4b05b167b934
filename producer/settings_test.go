package producer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// sentIDs runs a backfill and returns the ids it published (seen on the
// ingest subjects as they were published, since a running worker takes
// them off the stream), sorted.
func sentIDs(t *testing.T, e *env, opts Options, o BackfillOptions) ([]string, Summary) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := e.nc.SubscribeSync("ingest.>")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	s, err := e.producer(opts).Backfill(ctx, o)
	if err != nil || !s.OK() {
		t.Fatalf("Backfill: %+v, %v", s, err)
	}
	var ids []string
	for len(ids) < s.Sent {
		if o.DryRun {
			break
		}
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			t.Fatalf("published %d, seen %d: %v", s.Sent, len(ids), err)
		}
		if isBatchEnd(m) {
			continue
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, req.ID)
	}
	if m, err := sub.NextMsg(50 * time.Millisecond); err == nil && !isBatchEnd(m) {
		t.Fatalf("a request beyond the %d the summary counts: %s", s.Sent, m.Subject)
	}
	slices.Sort(ids)
	return ids, s
}

// isBatchEnd reports whether m is the end of a fast-ingest batch: no
// body, a reply in the batch protocol. The stream does not store it.
func isBatchEnd(m *nats.Msg) bool {
	return len(m.Data) == 0 && strings.HasSuffix(m.Reply, ".$FI")
}

// TestRerunOnSettingsChange: a document is unchanged only with the same
// content and the same settings. A re-run with other options, chunker,
// metadata, source, collection or subject sends everything again; the
// same run again sends nothing; records without a fingerprint count as
// changed.
func TestRerunOnSettingsChange(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, f := range []string{"a.md", "b.md", "c.mdx"} {
		if err := os.WriteFile(filepath.Join(dir, f), mdContent(len(f), 3000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"a.md", "b.md", "c.mdx"}
	md := func(opts map[string]any) Document { return Document{Chunker: "markdown", Options: opts} }
	steps := []struct {
		name string
		opts Options
		tmpl Document
		want []string
	}{
		{"first run", Options{}, Document{}, all},
		{"same again", Options{}, Document{}, nil},
		{"the default chunker named", Options{}, md(nil), nil}, // same resolved settings
		{"an option at its default", Options{}, md(map[string]any{"max_char": 2048}), nil},
		{"new options", Options{}, md(map[string]any{"max_char": 300}), all},
		{"same options again", Options{}, md(map[string]any{"max_char": 300}), nil},
		{"new chunker", Options{}, Document{Chunker: "twostep"}, all},
		{"new metadata", Options{}, Document{Chunker: "twostep", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}}}, all},
		{"new source", Options{}, Document{Chunker: "twostep", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}}, Source: "wiki"}, all},
		{"new collection", Options{}, Document{Chunker: "twostep", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}}, Source: "wiki", Collection: "kb"}, all},
		{"new subject", Options{Subject: "ingest.kb"}, Document{Chunker: "twostep", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}}, Source: "wiki", Collection: "kb"}, all},
		{"all the same", Options{Subject: "ingest.kb"}, Document{Chunker: "twostep", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}}, Source: "wiki", Collection: "kb"}, nil},
	}
	for _, st := range steps {
		got, s := sentIDs(t, e, st.opts, BackfillOptions{Paths: []string{dir}, Template: st.tmpl})
		if !slices.Equal(got, st.want) {
			t.Fatalf("%s: sent %v, want %v", st.name, got, st.want)
		}
		if st.name != "first run" && s.Stale != len(st.want) {
			t.Errorf("%s: %d stale, want %d", st.name, s.Stale, len(st.want))
		}
		e.runWorker(ctx, len(got))
	}
	// The records hold the fingerprint of what was used: the last run's.
	opts, err := registry.Default().Resolve("twostep")
	if err != nil {
		t.Fatal(err)
	}
	want, err := messages.Settings{Chunker: "twostep", Options: opts, Source: "wiki", Metadata: chunking.Metadata{{Key: "team", Value: "docs"}},
		Subject: "ingest.kb", Collection: "kb"}.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range all {
		rec, _, ok, err := worker.NewKVRecords(e.top.Docs).Get(ctx, id)
		if err != nil || !ok || rec.Fingerprint != want || rec.Chunks == 0 || rec.State != messages.StateDone {
			t.Errorf("record of %s = %+v (%v), want done with fingerprint %s and its chunks", id, rec, err, want)
		}
	}
	// A record written before fingerprints existed counts as changed.
	rec, rev, _, err := worker.NewKVRecords(e.top.Docs).Get(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	rec.Fingerprint, rec.Chunks = "", 0
	val, _ := messages.EncodeDocRecord(rec)
	if _, err := e.top.Docs.Update(ctx, messages.DocRecordKey("a.md"), val, rev); err != nil {
		t.Fatal(err)
	}
	last := steps[len(steps)-1]
	if got, _ := sentIDs(t, e, last.opts, BackfillOptions{Paths: []string{dir}, Template: last.tmpl}); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("after a record lost its fingerprint: sent %v, want [a.md]", got)
	}
}

// TestResendStale: after the workers' chunker defaults change, the
// re-chunk run sends exactly the documents processed under the old ones:
// not a mailbox thread (another chunker), not an edited or a new file
// (which the next normal run sends), nothing deleted.
func TestResendStale(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name string, content []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mbox, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "chunking", "email", "testdata", "duplicate-ids.mbox"))
	if err != nil {
		t.Fatal(err)
	}
	write("a.md", mdContent(1, 4000))
	write("b.md", mdContent(2, 4000))
	write("edited.md", mdContent(3, 4000))
	write("gone.md", mdContent(4, 100))
	write("mail.mbox", mbox)
	got, _ := sentIDs(t, e, Options{}, BackfillOptions{Paths: []string{dir}})
	if len(got) != 5 {
		t.Fatalf("first run sent %v", got)
	}
	e.runWorker(ctx, 5)

	// The workers restart with a new default chunker; meanwhile a file is
	// edited, one added and one removed.
	write("edited.md", mdContent(33, 4000))
	write("new.md", mdContent(5, 4000))
	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	before := map[string]uint64{}
	for _, id := range []string{"a.md", "b.md"} {
		rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, id)
		before[id] = rec.IngestSeq
	}
	// The operator sets the fleet's new defaults; the workers restart with
	// them.
	old, had, set, err := SetChunkerDefaults(ctx, e.js, e.cfg.Config, nil, registry.Defaults{Chunker: "twostep", Options: map[string]any{"max_chunk_size": 300}})
	if err != nil || !had || old.Chunker != "markdown" || set.Chunker != "twostep" || fmt.Sprint(set.Options["max_chunk_size"]) != "300" {
		t.Fatalf("SetChunkerDefaults = %+v, %v, %+v, %v", old, had, set, err)
	}
	e.cfg.Chunker, e.cfg.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
	stop := e.startWorker(ctx)
	waitAdvertised(t, e, "twostep")

	var dry []string
	if _, s := sentIDs(t, e, Options{}, BackfillOptions{Paths: []string{dir}, ResendStale: true, DryRun: true,
		OnDryRun: func(p Planned) { dry = append(dry, p.ID) }}); s.Stale != 2 || s.Skipped != 3 {
		t.Errorf("dry run: %d stale, %d skipped; want 2, 3", s.Stale, s.Skipped)
	}
	got, s := sentIDs(t, e, Options{}, BackfillOptions{Paths: []string{dir}, ResendStale: true})
	if want := []string{"a.md", "b.md"}; !slices.Equal(got, want) || !slices.Equal(dry, want) {
		t.Errorf("-resend-stale sent %v (dry run listed %v), want %v", got, dry, want)
	}
	if s.Stale != 2 || s.Skipped != 3 || s.Deleted != 0 {
		t.Errorf("-resend-stale: %+v, want 2 stale, 3 skipped, no delete", s.Stats)
	}
	for _, id := range []string{"a.md", "b.md"} {
		old := before[id]
		waitRecord(t, e, id, func(r messages.DocRecord) bool { return r.State == messages.StateDone && r.IngestSeq > old })
	}
	// They were chunked with the new defaults.
	for _, id := range []string{"a.md", "b.md"} {
		rec, _, _, _ := worker.NewKVRecords(e.top.Docs).Get(ctx, id)
		content, _ := os.ReadFile(filepath.Join(dir, id))
		c, _ := registry.Default().NewChunker("twostep", map[string]any{"max_chunk_size": 300})
		chunks, _, _ := c.Chunk(chunking.Document{Path: id, Content: content})
		if rec.Chunks != len(chunks) {
			t.Errorf("%s: record says %d chunks, twostep max_chunk_size 300 gives %d", id, rec.Chunks, len(chunks))
		}
	}
	// Nothing is stale now; a normal run sends the edit and the new file.
	if got, _ := sentIDs(t, e, Options{}, BackfillOptions{Paths: []string{dir}, ResendStale: true}); len(got) != 0 {
		t.Errorf("second -resend-stale sent %v, want nothing", got)
	}
	if got, _ := sentIDs(t, e, Options{}, BackfillOptions{Paths: []string{dir}}); !slices.Equal(got, []string{"edited.md", "new.md"}) {
		t.Errorf("normal run sent %v, want [edited.md new.md]", got)
	}
	stop()
	if _, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, ResendStale: true, Force: true}); err == nil {
		t.Error("ResendStale with Force: no error")
	}
}

// startWorker runs the real worker with e.cfg until stop is called.
func (e *env) startWorker(ctx context.Context) (stop func()) {
	e.t.Helper()
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{
		Config: e.cfg, Sink: subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(rctx) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-errc; err != nil {
			e.t.Errorf("worker.Run: %v", err)
		}
	}
	e.t.Cleanup(stop)
	return stop
}

// waitAdvertised waits until the fleet's defaults name chunker.
func waitAdvertised(t *testing.T, e *env, chunker string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := loadDefaults(context.Background(), e.js, e.cfg.Config)
		if err == nil && d.Chunker == chunker {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("advertised chunker defaults %+v (%v), want %s", d, err, chunker)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRecord waits until the record of id satisfies ok.
func waitRecord(t *testing.T, e *env, id string, ok func(messages.DocRecord) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec, _, _, err := worker.NewKVRecords(e.top.Docs).Get(context.Background(), id)
		if err == nil && ok(rec) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("record of %s = %+v (%v), still not what the test waits for", id, rec, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStdinChecksUnderFleetDefaults: -stdin checks each line as the
// workers resolve it, under the fleet's chunker defaults: with twostep
// and a tokenizer as the defaults, an option twostep does not have is
// refused before sending (a worker would dead-letter it), and a token
// target that needs the defaults' tokenizer is sent (a worker takes it).
func TestStdinChecksUnderFleetDefaults(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, _, err := SetChunkerDefaults(ctx, e.js, e.cfg.Config, nil, registry.Defaults{Chunker: "twostep", Options: map[string]any{"tokenizer": "cl100k_base"}}); err != nil {
		t.Fatal(err)
	}
	lines := `{"v":1,"id":"a.md","content":"# A\n\ntext\n","options":{"max_char":500}}` + "\n" +
		`{"v":1,"id":"b.md","content":"# B\n\ntext\n","options":{"target_tokens":200}}` + "\n"
	var refused []string
	sum, err := e.producer(Options{}).SendLines(ctx, strings.NewReader(lines), StreamOptions{OnBadLine: func(f Failure) { refused = append(refused, f.ID) }})
	if err != nil || sum.Sent != 1 || fmt.Sprint(refused) != "[a.md]" {
		t.Fatalf("SendLines = %+v, %v, refused %v; want b.md sent, a.md refused", sum.Stats, err, refused)
	}
	if r := e.runWorker(ctx, 1)["b.md"]; len(r) != 1 || r[0].Outcome != worker.OutcomeAcked {
		t.Errorf("b.md: %+v, want acked", r)
	}
}
