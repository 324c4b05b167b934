package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestWaitAndStatus runs through the command what a backfill Job and an
// operator run: -wait over a run with a success, a dead letter and a
// superseded version (exit 1, the failure's cause and reason listed),
// -wait over good documents (exit 0), -wait with no worker (exit 1 at
// -wait-timeout, the pending listed), then status in its forms.
func TestWaitAndStatus(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(nc, js, top, worker.Options{Config: cfg, Sink: subjectsink.New(js, cfg.ChunksPrefix, 16)})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	stop := func() {
		if stopWorker != nil {
			stopWorker()
			stopWorker = nil
			if err := <-workerDone; err != nil {
				t.Error(err)
			}
		}
	}
	defer stop()

	environ := envOf(map[string]string{"NATS_URL": ns.ClientURL(), "CHUNKSTREAM_PRODUCER_PROGRESS": "false"})
	producerRun := func(stdin string, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr, environ)
		return code, stdout.String(), stderr.String()
	}
	good := writeTree(t, map[string]string{"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
	mixed := t.TempDir()
	if err := os.WriteFile(filepath.Join(mixed, "bad.md"), []byte("# Bad\n\n\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two versions of one document in one stream: the first is
	// superseded, or done before the second started.
	lines := `{"v":1,"id":"twice.md","content":"# one"}` + "\n" + `{"v":1,"id":"twice.md","content":"# two"}` + "\n"

	code, _, errOut := producerRun("", "-wait", good)
	if code != 0 || !strings.Contains(errOut, "for 2 requests: 2 done, 0 failed, 0 superseded, 0 pending") {
		t.Fatalf("producer -wait over good documents = %d:\n%s", code, errOut)
	}
	code, _, errOut = producerRun(lines, "-wait", "-stdin")
	if code != 0 || !regexp.MustCompile(`for 2 requests: [12] done, 0 failed, [01] superseded, 0 pending`).MatchString(errOut) {
		t.Fatalf("producer -wait -stdin with two versions = %d:\n%s", code, errOut)
	}
	// The producer refuses a text file that is not UTF-8, naming where;
	// sent on purpose, the worker dead-letters it, naming where too.
	code, _, errOut = producerRun("", "-wait", mixed)
	if code != 1 || !regexp.MustCompile(`producer: failed: \S*bad\.md \(markdown\): invalid UTF-8 at byte \d+: not sent`).MatchString(errOut) ||
		!strings.Contains(errOut, "1 failed") {
		t.Fatalf("producer -wait over a file that is not UTF-8 = %d:\n%s", code, errOut)
	}
	code, _, errOut = producerRun("", "-wait", "-send-invalid-utf8", mixed)
	if code != 1 || !strings.Contains(errOut, "for 1 requests: 0 done, 1 failed") ||
		!regexp.MustCompile(`failed: bad\.md \(ingest seq \d+( to \d+)?\): not_utf8: .*content: invalid UTF-8 at byte \d+`).MatchString(errOut) {
		t.Fatalf("producer -wait with a dead letter = %d:\n%s", code, errOut)
	}

	// status, with the worker idle (its acks confirmed).
	cons, err := js.Consumer(ctx, cfg.IngestStream, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, time.Minute, "the worker idle", func() (bool, string) {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumAckPending == 0 && info.NumPending == 0, fmt.Sprintf("%d pending, %d ack pending", info.NumPending, info.NumAckPending)
	})
	code, out, errOut := producerRun("", "status")
	for _, want := range []string{
		"documents: 4: 3 done, 0 pending, 1 dead-lettered, 0 deleted",
		"backlog: consumer chunkers on INGEST: 0 pending, 0 ack pending, 0 redelivered",
		"dead letters: 1 in DLQ",
		`fleet chunker defaults: markdown {"chunk_overlap":128,"max_char":2048,"min_char":1024}`,
		"workers: 1 pulling, 0 not pulling",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("producer status = %d, %q (%s); want it to say %q", code, out, errOut, want)
		}
	}
	code, out, _ = producerRun("", "status", "-json")
	var st producer.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Documents.DeadLettered != 1 || st.DeadLetters != 1 || st.Backlog == nil {
		t.Errorf("producer status -json = %d, %q, %v", code, out, err)
	}
	code, out, _ = producerRun("", "status", "-id", "bad.md")
	if code != 0 || !regexp.MustCompile(`(?m)^state +dead_lettered$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^last_failure +not_utf8 at \S+ \(ingest seq \d+\): .*UTF-8`).MatchString(out) {
		t.Errorf("producer status -id bad.md = %d:\n%s", code, out)
	}
	code, out, _ = producerRun("", "status", "-id", "a.md", "-json")
	var rec struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		Fingerprint string `json:"fingerprint"`
		Chunks      int    `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil || rec.ID != "a.md" || rec.State != "done" || len(rec.Fingerprint) != 64 || rec.Chunks != 1 {
		t.Errorf("producer status -id a.md -json = %d, %q (%v)", code, out, err)
	}
	code, out, _ = producerRun("", "status", "-failed")
	if fields := strings.Split(strings.TrimSpace(out), "\t"); code != 0 || strings.Count(out, "\n") != 1 || len(fields) != 6 ||
		fields[0] != "bad.md" || fields[3] != "not_utf8" || fields[5] != "-" {
		t.Errorf("producer status -failed = %d, %q", code, out)
	}
	// A tenant's documents are apart: a.md of tenant t9 has no record,
	// and t9 has no failed document.
	code, out, errOut = producerRun("", "status", "-id", "a.md", "-tenant", "t9")
	if code != 1 || !strings.Contains(errOut, `no record of "a.md" of tenant t9`) {
		t.Errorf("producer status -id a.md -tenant t9 = %d, %q, %q", code, out, errOut)
	}
	if code, out, _ = producerRun("", "status", "-failed", "-tenant", "t9"); code != 0 || out != "" {
		t.Errorf("producer status -failed -tenant t9 = %d, %q", code, out)
	}
	if code, _, _ = producerRun("", "status", "-tenant", "t9"); code != 2 {
		t.Errorf("producer status -tenant t9 (without -id or -failed) = %d, want 2", code)
	}
	if code, _, errOut := producerRun("", "status", "-id", "never.md"); code != 1 || !strings.Contains(errOut, `no record of "never.md"`) {
		t.Errorf("producer status -id never.md = %d, %s", code, errOut)
	}
	if code, _, _ := producerRun("", "status", "-id", "a.md", "-failed"); code != 2 {
		t.Errorf("producer status -id -failed = %d, want 2", code)
	}

	// No worker: the wait says no worker pulls, then times out when no
	// request finished for -wait-timeout, listing what is pending.
	stop()
	late := writeTree(t, map[string]string{"late.md": "# Late\n"})
	code, _, errOut = producerRun("", "-wait", "-wait-timeout", "4s", late)
	if code != 1 || !strings.Contains(errOut, "0 done, 0 failed, 0 superseded, 1 pending") ||
		!regexp.MustCompile(`still pending: late\.md \(ingest seq \d+( to \d+)?\)`).MatchString(errOut) ||
		!strings.Contains(errOut, "no worker is pulling requests from consumer chunkers on INGEST") ||
		!strings.Contains(errOut, "no request finished for 4s (-wait-timeout)") {
		t.Errorf("producer -wait -wait-timeout 4s without a worker = %d:\n%s", code, errOut)
	}
	code, out, _ = producerRun("", "status")
	if code != 0 || !strings.Contains(out, "backlog: consumer chunkers on INGEST: 1 pending") || !strings.Contains(out, "workers: 0 pulling, 0 not pulling") {
		t.Errorf("producer status with a backlog and no worker = %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"-wait-timeout", "1s", good}, {"-wait", "-dry-run", good}} {
		if code, _, errOut := producerRun("", args...); code != 2 || !strings.Contains(errOut, "no effect") {
			t.Errorf("producer %q = %d, %s; want a usage error", args, code, errOut)
		}
	}
}

// TestPrintWorkers: the workers line counts the running workers, pulling
// or not, and the gone ones apart; each running worker gets a line, with
// its own chunker defaults when they differ from the fleet's, and each
// gone one a line saying so.
func TestPrintWorkers(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	started := now.Add(-time.Hour)
	ws := []messages.WorkerPresence{
		{ID: "A", Host: "h1", Started: started, Seen: now.Add(-time.Second), LastPull: now.Add(-200 * time.Millisecond), Ready: true, InFlight: 2},
		{ID: "B", Host: "h2", Started: started, Seen: now.Add(-time.Second), LastPull: now.Add(-time.Minute), Held: 3,
			OwnDefaults: &messages.ChunkerDefaults{Chunker: "twostep", Options: map[string]any{"max_chunk_size": 300}}},
	}
	gone := []messages.WorkerPresence{{ID: "C", Host: "h3", Started: started, Seen: now.Add(-42 * time.Minute), LastPull: now.Add(-42 * time.Minute)}}
	var b strings.Builder
	printWorkers(&b, ws, gone, now)
	want := `workers: 1 pulling, 1 not pulling; 1 gone (no heartbeat for over 15s)
  A on h1: pulling, ready, last pull 200ms ago, 2 in flight, 0 held, up 1h0m0s
  B on h2: not pulling, not ready, last pull 1m0s ago, 0 in flight, 3 held, up 1h0m0s, own chunker defaults twostep {"max_chunk_size":300} (follows the fleet's)
  C on h3: gone, last heartbeat 42m0s ago
`
	if b.String() != want {
		t.Errorf("printWorkers:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestStatusGoneWorkers: presences left by workers killed more than three
// heartbeats ago are reported as gone, not as workers that do not pull;
// the next worker to start removes them.
func TestStatusGoneWorkers(t *testing.T) {
	e := newDLQEnv(t)
	ctx := context.Background()
	kv := e.top.Docs
	put := func(id string, seen time.Time) {
		t.Helper()
		val, _ := messages.EncodeWorkerPresence(messages.WorkerPresence{ID: id, Host: "pod-" + id, Started: seen.Add(-time.Hour), Seen: seen, LastPull: seen, Ready: true})
		if _, err := kv.Put(ctx, messages.WorkerKey(id), val); err != nil {
			t.Fatal(err)
		}
	}
	// Two killed workers, one an hour ago and one just past the TTL, and
	// a running one (its clock ahead of ours: it cannot be gone while the
	// test runs, however slow the machine).
	put("killed1", time.Now().Add(-time.Hour))
	put("killed2", time.Now().Add(-messages.PresenceTTL-time.Second))
	put("alive", time.Now().Add(time.Hour))
	code, out, errOut := e.producer("status")
	if code != 0 || !strings.Contains(out, "workers: 1 pulling, 0 not pulling; 2 gone (no heartbeat for over 15s)\n") ||
		!regexp.MustCompile(`(?m)^  killed1 on pod-killed1: gone, last heartbeat 1h0m\S* ago$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  killed2 on pod-killed2: gone, last heartbeat \S+ ago$`).MatchString(out) {
		t.Errorf("status = %d\n%s%s", code, out, errOut)
	}
	code, out, _ = e.producer("status", "-json")
	var st producer.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st.Workers) != 1 || st.Workers[0].ID != "alive" || len(st.Gone) != 2 {
		t.Errorf("status -json = %d, %s (%v)", code, out, err)
	}

	// A worker starting removes what the killed ones left, and nothing else.
	e.startWorker()
	testutil.WaitFor(t, 20*time.Second, "the killed workers' presences removed", func() bool {
		_, err1 := kv.Get(ctx, messages.WorkerKey("killed1"))
		_, err2 := kv.Get(ctx, messages.WorkerKey("killed2"))
		return errors.Is(err1, jetstream.ErrKeyNotFound) && errors.Is(err2, jetstream.ErrKeyNotFound)
	})
	if _, err := kv.Get(ctx, messages.WorkerKey("alive")); err != nil {
		t.Errorf("the running worker's presence: %v", err)
	}
	if _, out, _ := e.producer("status"); strings.Contains(out, "gone") {
		t.Errorf("status after the sweep:\n%s", out)
	}
}
