package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// dlqEnv is a server with the workers' topology and a client of it.
type dlqEnv struct {
	t   *testing.T
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
	top *topology.Handles
	cfg worker.Config
	n   int // requests published
}

func newDLQEnv(t *testing.T) *dlqEnv {
	t.Helper()
	url, _ := testServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.Concurrency = 1 // dead letters in request order
	top, err := worker.Setup(context.Background(), js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &dlqEnv{t: t, url: url, nc: nc, js: js, top: top, cfg: cfg}
}

// producer runs the command and returns its exit status and outputs.
func (e *dlqEnv) producer(args ...string) (int, string, string) {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, nil, &stdout, &stderr, envOf(map[string]string{"NATS_URL": e.url}))
	return code, stdout.String(), stderr.String()
}

// work runs a worker with newChunker until n requests are final.
func (e *dlqEnv) work(chunkers *registry.Registry, n int) []worker.Result {
	e.t.Helper()
	results := make(chan worker.Result, 100)
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{Config: e.cfg, Chunkers: chunkers,
		Sink: subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes),
		OnResult: func(r worker.Result) {
			if r.Final() {
				results <- r
			}
		}})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var out []worker.Result
	for len(out) < n {
		select {
		case r := <-results:
			out = append(out, r)
		case <-time.After(30 * time.Second):
			e.t.Fatalf("%d of %d requests final", len(out), n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *dlqEnv) count(stream string) uint64 {
	e.t.Helper()
	s, err := e.js.Stream(context.Background(), stream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

// publish sends a request as a client in another language would.
func (e *dlqEnv) publish(subject string, req messages.IngestRequest) {
	e.t.Helper()
	data, err := messages.EncodeIngest(&req, messages.ContentTypeJSON)
	if err != nil {
		e.t.Fatal(err)
	}
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set(messages.HeaderContentType, messages.ContentTypeJSON)
	e.n++
	m.Header.Set(messages.HeaderMsgID, fmt.Sprintf("%s@x@client-%d", req.ID, e.n))
	if _, err := e.js.PublishMsg(context.Background(), m); err != nil {
		e.t.Fatal(err)
	}
}

// knowsHeadingAware is the registry of workers that know the markdown
// option heading_aware (today's refuse it).
func knowsHeadingAware() *registry.Registry { return registrytest.With(registrytest.HeadingAware()) }

// TestDLQCommand runs the dead-letter runbook through the command: list
// (text and JSON), a dry-run replay, purges refused (no scope, no -yes)
// and dry, a replay, and workers that now know the option.
func TestDLQCommand(t *testing.T) {
	e := newDLQEnv(t)
	e.publish("ingest.docs.kb", messages.IngestRequest{V: 1, ID: "kb/a.md", Content: []byte("# A\n\ntext\n"), Options: map[string]any{"heading_aware": true}})
	e.publish("ingest.docs.kb", messages.IngestRequest{V: 1, ID: "kb/b.md", Content: []byte("# B\n"), Chunker: "nope"})
	e.work(nil, 2)

	code, out, errOut := e.producer("dlq", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(errOut, "2 dead letters") {
		t.Fatalf("dlq list = %d\n%s\n%s", code, out, errOut)
	}
	fields := strings.Split(lines[0], "\t")
	if len(fields) != 10 || fields[0] != "1" || fields[2] != "kb/a.md" || fields[3] != "ingest.docs.kb" || fields[4] != "permanent" ||
		fields[5] != "unknown_option" || !strings.Contains(fields[6], "heading_aware") || fields[7] != "1" || fields[8] != "current" || fields[9] != "-" {
		t.Errorf("list line = %q", fields)
	}
	if _, err := time.Parse(time.RFC3339, fields[1]); err != nil {
		t.Errorf("list time %q: %v", fields[1], err)
	}

	code, out, _ = e.producer("dlq", "list", "-json", "-cause", "unknown_chunker")
	var got producer.DeadLetterEntry
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.DocID != "kb/b.md" || got.Cause != "unknown_chunker" || got.Seq != 2 {
		t.Errorf("dlq list -json -cause unknown_chunker = %d, %q, %v", code, out, err)
	}

	code, out, _ = e.producer("dlq", "replay", "-dry-run", "-id-prefix", "kb/a")
	if code != 0 || out != "would process\t1\tkb/a.md\tingest.docs.kb: version 1\n" {
		t.Errorf("dlq replay -dry-run = %d, %q", code, out)
	}
	if n, m := e.count(e.cfg.DLQStream), e.count(e.cfg.IngestStream); n != 2 || m != 0 {
		t.Fatalf("after the dry run DLQ holds %d, INGEST %d; want 2 and 0", n, m)
	}

	// A purge says its count first; it needs a scope and -yes, and
	// -dry-run lists what it would delete.
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"-cause", "unknown_chunker"}, 2, "",
			"producer: dlq purge: 1 dead letters selected (-cause unknown_chunker)\nproducer: dlq purge: usage: would delete 1 dead letters (-cause unknown_chunker); nothing was deleted: list them with -dry-run, then run again with -yes to delete them\n"},
		{[]string{"-yes"}, 2, "",
			"producer: dlq purge: 2 dead letters selected (every dead letter)\nproducer: dlq purge: usage: without a filter, purge selects every dead letter (2 now); nothing was deleted: select them with -kind, -cause, -subject, -tenant, -id-prefix or -seq, or say -all; -dry-run lists them\n"},
		{[]string{"-cause", "unknown_chunker", "-dry-run"}, 0, "would delete\t2\t",
			"producer: dlq purge: 1 dead letters selected (-cause unknown_chunker)\nproducer: dlq purge: 1 would be deleted (-cause unknown_chunker); -yes deletes them\n"},
		{[]string{"-all", "-dry-run"}, 0, "would delete\t1\t", "producer: dlq purge: 2 would be deleted (every dead letter); -yes deletes them\n"},
		{[]string{"-all", "-cause", "unknown_chunker", "-yes"}, 2, "", "-all excludes the filters (-cause unknown_chunker)"},
		{[]string{"-seq", "2", "-dry-run", "-yes"}, 2, "", "-dry-run excludes -yes"},
	} {
		code, out, errOut := e.producer(append([]string{"dlq", "purge"}, tc.args...)...)
		if code != tc.code || !strings.HasPrefix(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("dlq purge %q = %d\n%s\n%s\nwant %d, stdout starting %q, stderr holding %q", tc.args, code, out, errOut, tc.code, tc.out, tc.err)
		}
		if n := e.count(e.cfg.DLQStream); n != 2 {
			t.Fatalf("dlq purge %q deleted: DLQ holds %d, want 2", tc.args, n)
		}
	}

	code, out, errOut = e.producer("dlq", "replay", "-cause", "unknown_option")
	if code != 0 || out != "replayed\t1\tkb/a.md\tingest.docs.kb: version 1, INGEST message 3\n" || !strings.Contains(errOut, "1 replayed, 0 removed as superseded or written, 0 kept") {
		t.Fatalf("dlq replay = %d\n%s\n%s", code, out, errOut)
	}
	if r := e.work(knowsHeadingAware(), 1); r[0].Outcome != worker.OutcomeAcked || r[0].DocID != "kb/a.md" || r[0].Subject != "ingest.docs.kb" {
		t.Errorf("replayed request: %+v", r[0])
	}

	code, out, errOut = e.producer("dlq", "purge", "-yes", "-seq", "2")
	if code != 0 || !strings.HasPrefix(out, "deleted\t2\t") ||
		errOut != "producer: dlq purge: 1 dead letters selected (-seq 2)\nproducer: dlq purge: 1 deleted (-seq 2)\n" {
		t.Errorf("dlq purge -yes -seq 2 = %d\n%s\n%s", code, out, errOut)
	}
	if n := e.count(e.cfg.DLQStream); n != 0 {
		t.Errorf("DLQ holds %d, want 0", n)
	}
}

// TestDLQCommandKeeps: a replay that keeps a dead letter (its content_ref
// object expired) says why and exits 1; a sequence that is not there is
// reported.
func TestDLQCommandKeeps(t *testing.T) {
	e := newDLQEnv(t)
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "big.md", ContentRef: &messages.ContentRef{Bucket: e.cfg.ObjectsBucket, Name: "expired"}})
	if r := e.work(nil, 1); r[0].Cause != fault.CauseMissingObject {
		t.Fatalf("result %+v, want missing_object", r[0])
	}
	code, out, errOut := e.producer("dlq", "replay")
	if code != 1 || !strings.HasPrefix(out, "kept\t1\tbig.md\tobject expired: ") || !strings.Contains(errOut, "1 kept (1 object expired)") {
		t.Errorf("dlq replay = %d\n%s\n%s", code, out, errOut)
	}
	if n, m := e.count(e.cfg.DLQStream), e.count(e.cfg.IngestStream); n != 1 || m != 0 {
		t.Errorf("DLQ holds %d, INGEST %d; want 1 and 0", n, m)
	}
	if code, _, errOut := e.producer("dlq", "replay", "-seq", "7"); code != 1 || !strings.Contains(errOut, "no dead letter 7") {
		t.Errorf("dlq replay -seq 7 = %d, %s", code, errOut)
	}
}

// TestDLQUsage: the dispatch and the dlq flags' usage errors exit 2 and
// touch nothing; -h exits 0.
func TestDLQUsage(t *testing.T) {
	e := newDLQEnv(t)
	for _, tc := range []struct {
		args []string
		want int
		text string
	}{
		{[]string{"dlq"}, 2, "say list, replay or purge"},
		{[]string{"dlq", "frob"}, 2, `unknown operation "frob"`},
		{[]string{"dlq", "list", "-kind", "fatal"}, 2, "-kind"},
		{[]string{"dlq", "list", "-seq", "1,x"}, 2, "-seq"},
		{[]string{"dlq", "list", "extra"}, 2, "takes no arguments"},
		{[]string{"dlq", "list", "-yes"}, 2, "flag provided but not defined"},
		{[]string{"dlq", "purge", "-json"}, 2, "flag provided but not defined"},
		{[]string{"dlq", "replay", "-h"}, 0, "-dry-run"},
		{[]string{"-h"}, 0, "producer dlq list|replay|purge"},
	} {
		code, _, errOut := e.producer(tc.args...)
		if code != tc.want || !strings.Contains(errOut, tc.text) {
			t.Errorf("producer %q = %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.want, tc.text)
		}
	}
}

// agree checks that status -failed, the dead-lettered count of status
// and the current dead letters of dlq list name the same documents, and
// returns them.
func (e *dlqEnv) agree(step string) []string {
	e.t.Helper()
	code, out, errOut := e.producer("status", "-json")
	var st producer.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		e.t.Fatalf("%s: status -json = %d, %v\n%s", step, code, err, errOut)
	}
	code, out, errOut = e.producer("status", "-failed", "-json")
	if code != 0 {
		e.t.Fatalf("%s: status -failed = %d\n%s", step, code, errOut)
	}
	var failed []string
	for line := range strings.Lines(out) {
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			e.t.Fatal(err)
		}
		failed = append(failed, r.ID)
	}
	code, out, errOut = e.producer("dlq", "list", "-json")
	if code != 0 {
		e.t.Fatalf("%s: dlq list = %d\n%s", step, code, errOut)
	}
	var current []string
	for line := range strings.Lines(out) {
		var dl producer.DeadLetterEntry
		if err := json.Unmarshal([]byte(line), &dl); err != nil {
			e.t.Fatal(err)
		}
		if dl.Standing == producer.StandingCurrent {
			current = append(current, dl.DocID)
		}
	}
	slices.Sort(current)
	if !slices.Equal(failed, current) || st.Documents.DeadLettered != len(failed) {
		e.t.Errorf("%s: status -failed %v, dead-lettered count %d, current dead letters %v: want all three to agree",
			step, failed, st.Documents.DeadLettered, current)
	}
	return failed
}

// TestDLQVerbsAgreeWithStatus: after list, replay, re-send and purge,
// status -failed, the dead-lettered count and the current dead letters
// of dlq list agree; a dead letter overtaken by a re-send is superseded,
// and replaying it leaves the newer version in place.
func TestDLQVerbsAgreeWithStatus(t *testing.T) {
	e := newDLQEnv(t)
	bad := map[string]any{"heading_aware": true}
	for _, id := range []string{"a.md", "b.md", "c.md"} {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: []byte("# " + id + "\n\nold text\n"), Options: bad})
	}
	e.work(nil, 3)
	if got := e.agree("after three failures"); !slices.Equal(got, []string{"a.md", "b.md", "c.md"}) {
		t.Fatalf("failed %v, want a, b and c", got)
	}

	// b is sent again, fixed: its old dead letter is superseded.
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "b.md", Content: []byte("# b\n\nnew text\n")})
	if r := e.work(nil, 1); r[0].Outcome != worker.OutcomeAcked {
		t.Fatalf("re-send of b: %+v", r[0])
	}
	e.agree("after the re-send of b")
	code, out, _ := e.producer("dlq", "replay", "-dry-run", "-id-prefix", "b")
	if code != 0 || out != "superseded\t2\tb.md\tby version 4: would delete the dead letter and send nothing\n" {
		t.Errorf("dlq replay -dry-run -id-prefix b = %d, %q", code, out)
	}
	code, out, _ = e.producer("dlq", "replay", "-id-prefix", "b")
	if code != 0 || out != "superseded\t2\tb.md\tby version 4: dead letter deleted, nothing sent\n" {
		t.Errorf("dlq replay -id-prefix b = %d, %q", code, out)
	}
	if n := e.count(e.cfg.IngestStream); n != 0 {
		t.Errorf("INGEST holds %d after replaying a superseded dead letter, want 0", n)
	}
	rec, _, _ := producer.ReadRecord(context.Background(), e.js, e.cfg.DocsBucket, "b.md")
	if rec.IngestSeq != 4 || rec.State != messages.StateDone {
		t.Errorf("record of b %+v, want version 4 done", rec)
	}
	e.agree("after the replay of b")

	// a is replayed and fails again; c is purged.
	e.producer("dlq", "replay", "-id-prefix", "a")
	e.work(nil, 1)
	e.agree("after a replay that failed again")
	if code, _, errOut := e.producer("dlq", "purge", "-id-prefix", "c", "-yes"); code != 0 {
		t.Fatalf("purge c = %d\n%s", code, errOut)
	}
	if got := e.agree("after the purge of c"); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("failed %v, want a only", got)
	}
	// a replayed to workers that know its option: nothing failed.
	e.producer("dlq", "replay")
	e.work(knowsHeadingAware(), 1)
	if got := e.agree("after a replay that worked"); len(got) != 0 {
		t.Errorf("failed %v, want none", got)
	}
}

// TestDLQFiltersMatchingNothing: a verb whose filters select no dead
// letter says so.
func TestDLQFiltersMatchingNothing(t *testing.T) {
	e := newDLQEnv(t)
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Content: []byte("# A\n"), Chunker: "nope"})
	e.work(nil, 1)
	for _, args := range [][]string{
		{"dlq", "replay", "-cause", "unknown_option"},
		{"dlq", "purge", "-cause", "unknown_option"},
		{"dlq", "purge", "-cause", "unknown_option", "-yes"},
	} {
		code, _, errOut := e.producer(args...)
		if code != 0 || !strings.Contains(errOut, "no dead letter matches (-cause unknown_option)") {
			t.Errorf("producer %q = %d, %s; want it to say nothing matches", args, code, errOut)
		}
	}
	if n := e.count(e.cfg.DLQStream); n != 1 {
		t.Errorf("DLQ holds %d, want its one dead letter untouched", n)
	}
}

// TestDLQReplayRefusedBesideWorkersBehind: `dlq replay` of a tenant's
// dead letter while a running worker does not read tenants exits 1 with
// the producer's message (docs/operations.md, "Upgrading") and keeps the
// dead letter, nothing published.
func TestDLQReplayRefusedBesideWorkersBehind(t *testing.T) {
	e := newDLQEnv(t)
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "a.md", Tenant: "acme", Content: []byte("# A\n"), Chunker: "nope"})
	e.work(nil, 1)
	now := time.Now().UTC()
	val, err := messages.EncodeWorkerPresence(messages.WorkerPresence{ID: "old", Host: "old-host", Started: now, Seen: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.top.Docs.Put(context.Background(), messages.WorkerKey("old"), val); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := e.producer("dlq", "replay", "-tenant", "acme")
	want := "producer: a running worker is of an earlier build: worker old on old-host does not read tenants requests"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("dlq replay = %d, %s; want 1 and %q", code, errOut, want)
	}
	if n, m := e.count(e.cfg.DLQStream), e.count(e.cfg.IngestStream); n != 1 || m != 0 {
		t.Errorf("DLQ holds %d, INGEST %d; want the dead letter kept and nothing published", n, m)
	}
}

// TestDLQPurgeEmptyFiltersRefused: every spelling of "no filter" (an
// empty value, -subject >, a -seq list of no sequence, -all=false) is a
// purge without a filter: refused with status 2, nothing deleted.
func TestDLQPurgeEmptyFiltersRefused(t *testing.T) {
	e := newDLQEnv(t)
	for _, id := range []string{"a.md", "b.md"} {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: []byte("# A\n"), Chunker: "nope"})
	}
	e.work(nil, 2)
	for _, args := range [][]string{
		{"-yes"}, {"-subject", ">", "-yes"}, {"-id-prefix", "", "-yes"}, {"-seq", "", "-yes"}, {"-seq", ",", "-yes"},
		{"-seq", " , ", "-yes"}, {"-tenant", "", "-yes"}, {"-kind", "", "-yes"}, {"-cause", "", "-yes"}, {"-subject", "", "-yes"},
		{"-all"}, {"-all=false", "-yes"},
	} {
		code, _, errOut := e.producer(append([]string{"dlq", "purge"}, args...)...)
		if n := e.count(e.cfg.DLQStream); n != 2 || code != 2 {
			t.Errorf("dlq purge %q = %d, DLQ holds %d (want 2 and both kept): %s", args, code, n, errOut)
		}
	}
}
