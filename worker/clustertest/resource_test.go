package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

// The resource scenarios (only with CHUNKSTREAM_TEST_PROCESSES=1 and
// CHUNKSTREAM_TEST_OUTAGES=1, minutes each) exhaust what the workers write
// to and give it back, with real processes and default settings:
//
//	CHUNKSTREAM_TEST_PROCESSES=1 CHUNKSTREAM_TEST_OUTAGES=1 go test -run 'Storage|Filesystem|FullChunks|Embedder' -v -timeout 90m ./worker/clustertest
//
// Each holds the fault for CHUNKSTREAM_OUTAGE_HANG (default 150s) and
// requires every request processed once or dead-lettered with its own
// cause: the documents' chunk records all stored, once each; the bad
// requests among them (no content) dead-lettered as no_content; nothing
// exhausted; INGEST empty.

// skipUnlessOutage skips a long real-process scenario unless asked for.
func skipUnlessOutage(t *testing.T) {
	t.Helper()
	testutil.OptIn(t, testutil.Processes, testutil.Outages)
}

// badRequests is how many requests without content a scenario adds to
// its documents: they are dead-lettered as no_content, during the fault.
const badRequests = 20

// publishBad publishes badRequests requests without content.
func (sc *scenario) publishBad() {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range badRequests {
		req := messages.IngestRequest{V: messages.Version, ID: fmt.Sprintf("bad/%03d.md", i)}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			sc.t.Fatal(err)
		}
		msg := &nats.Msg{Subject: "ingest.outage", Data: data, Header: nats.Header{}}
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		if _, err := sc.js.PublishMsg(ctx, msg); err != nil {
			sc.t.Fatal(err)
		}
	}
}

// reload makes the nats-server process read its configuration again.
func (sc *scenario) reload() {
	sc.t.Helper()
	if err := sc.srv.Process.Signal(syscall.SIGHUP); err != nil {
		sc.t.Fatal(err)
	}
}

// deadLetterCauses counts the dead letters by cause.
func (sc *scenario) deadLetterCauses() map[fault.Cause]int {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := sc.js.Stream(ctx, sc.cfg.DLQStream)
	if err != nil {
		sc.t.Fatal(err)
	}
	out := map[fault.Cause]int{}
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(">"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			sc.t.Fatal(err)
		}
		dl, _ := messages.ParseDeadLetter(m.Header)
		out[dl.Cause]++
		seq = m.Sequence + 1
	}
}

// redelivered returns the consumer's count of redelivered requests.
func (sc *scenario) redelivered() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := sc.js.Stream(ctx, sc.cfg.IngestStream)
	if err != nil {
		return -1
	}
	c, err := s.Consumer(ctx, sc.cfg.Consumer)
	if err != nil {
		return -1
	}
	return c.CachedInfo().NumRedelivered
}

// hold samples the workers' readiness every second for d.
func (sc *scenario) hold(d time.Duration) []readiness {
	ready := make([]readiness, len(sc.workers))
	for start := time.Now(); time.Since(start) < d; time.Sleep(time.Second) {
		for i, p := range sc.workers {
			ready[i].sample(p, time.Since(start))
		}
	}
	return ready
}

// drain waits until INGEST is empty, at most limit, and returns how long
// it took.
func (sc *scenario) drain(limit time.Duration) time.Duration {
	sc.t.Helper()
	start := time.Now()
	for sc.ingestMsgs() != 0 {
		if time.Since(start) > limit {
			sc.t.Fatalf("%d requests still in INGEST %v after the fault ended", sc.ingestMsgs(), limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// check requires every document's chunks stored once each (the chunk
// stream's duplicate window drops a record published twice, so a count
// equal to the chunks of the documents means none is missing), the bad
// requests dead-lettered as no_content and nothing else, and reports the
// figures with the readiness of the workers during the fault.
func (sc *scenario) check(name string, ready []readiness, extra string) {
	sc.t.Helper()
	causes := sc.deadLetterCauses()
	chunks, want := sc.streamMsgs(sc.cfg.ChunksStream), sc.expectedChunks()
	report := fmt.Sprintf("%s: %d docs + %d bad requests, %d workers; dead letters %v; chunk records %d of %d; redelivered %d; worker log lines 'sink down' %d, 'sink up again' %d, 'dead-lettered' %d, 'put back' %d%s",
		name, len(sc.docs), badRequests, len(sc.workers), causes, chunks, want, sc.redelivered(),
		sc.logCount(`"sink down`), sc.logCount(`"sink up again`), sc.logCount(`"dead-lettered`),
		sc.logCount(`below the consumer's ack floor`), extra)
	for i, r := range ready {
		report += fmt.Sprintf("\n  worker %d during the fault: %s", i+1, r)
	}
	sc.t.Log(report)
	fmt.Println(report)
	if sc.otherBinary {
		return
	}
	if causes[fault.CauseNoContent] != badRequests || len(causes) != 1 {
		sc.t.Errorf("dead letters by cause %v, want %d no_content and nothing else", causes, badRequests)
	}
	if sc.cfg.Sink == "subject" && chunks != want {
		sc.t.Errorf("%d chunk records stored, want %d", chunks, want)
	}
}

// accountStore returns the storage the connection's account uses.
func (sc *scenario) accountStore() uint64 {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := sc.js.AccountInfo(ctx)
	if err != nil {
		sc.t.Fatal(err)
	}
	return info.Store
}

// TestStorageQuotaProcesses: the account's JetStream quota is lowered to
// what the account uses once a tenth of the requests are done (a quota
// used up), held for the hang, then raised again (a configuration
// reload). The workers must be not ready during it, and afterwards every
// request processed or dead-lettered with its own cause.
func TestStorageQuotaProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	quota := func(maxFile string) {
		t.Helper()
		c := fmt.Sprintf("accounts {\n  APP {\n    jetstream { max_file: %s, max_mem: 256MB }\n    users: [{user: app, password: secret}]\n  }\n}\n", maxFile)
		if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	quota("10GB")
	sc := newScenario(t, func(sc *scenario) { sc.args, sc.user = []string{"-c", conf}, "app:secret@" })
	sc.publish()
	sc.publishBad()
	sc.startWorkers(nil)
	sc.waitDone(len(sc.docs) / 10)
	// The quota is what the account uses then: every document written
	// grows the store (its chunk records and record writes outweigh its
	// request, removed on ack), so the fault bites however fast the
	// workers drain the backlog (with a margin, fast workers finished the
	// rest within it and the fault never began).
	used := sc.accountStore()
	quota(fmt.Sprint(used))
	sc.reload()
	ready := sc.hold(hang)
	left, dlq := sc.ingestMsgs(), sc.deadLetters()
	quota("10GB")
	sc.reload()
	drain := sc.drain(15 * time.Minute)
	sc.check("storage quota", ready, fmt.Sprintf("; quota lowered to %d bytes (%d in use) for %v: %d requests left at its end, %d dead letters by then; drained %v after it was raised",
		used, used, hang, left, dlq, drain.Round(100*time.Millisecond)))
	for i, r := range ready {
		if r.last != http.StatusServiceUnavailable {
			t.Errorf("worker %d answered /readyz %d at the end of the fault, want 503", i+1, r.last)
		}
	}
}

// TestSmallFilesystemProcesses: the nats-server stores on a small tmpfs
// (mounted by the test: it needs root, and skips without); once a tenth
// of the requests are done a file fills the filesystem but for 256 KiB,
// for the hang; then the file is removed. A server that disabled
// JetStream when it ran out of space is restarted on its store, as an
// operator would (reported). Every request must be processed or
// dead-lettered with its own cause.
func TestSmallFilesystemProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	conf := filepath.Join(t.TempDir(), "nats.conf")
	// The server may use more than the disk holds, so the disk, not its
	// own limit, runs out.
	if err := os.WriteFile(conf, []byte("jetstream { max_file_store: 10GB }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := newScenario(t, func(sc *scenario) { sc.dir, sc.args = filepath.Join(dir, "store"), []string{"-c", conf} })
	sc.publish()
	sc.publishBad()
	sc.startWorkers(nil)
	sc.waitDone(len(sc.docs) / 10)
	filler := filepath.Join(dir, "filler")
	fill(t, dir, filler, 256<<10)
	ready := sc.hold(hang)
	left, dlq := sc.ingestMsgs(), sc.deadLetters()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freedAt := time.Now()
	restarted := "no"
	for progress := sc.ingestMsgs(); sc.ingestMsgs() != 0; time.Sleep(time.Second) {
		if time.Since(freedAt) > time.Minute && restarted == "no" && sc.ingestMsgs() >= progress {
			restarted = fmt.Sprintf("yes, %v after the room was given back", time.Since(freedAt).Round(time.Second))
			sc.killServer()
			sc.restartServer()
		}
		if time.Since(freedAt) > 15*time.Minute {
			t.Fatalf("%d requests still in INGEST 15 minutes after the room was given back", sc.ingestMsgs())
		}
	}
	sc.check("small filesystem", ready, fmt.Sprintf("; filesystem full for %v: %d requests left at its end, %d dead letters by then; drained %v after the room was given back; server restarted: %s",
		hang, left, dlq, time.Since(freedAt).Round(100*time.Millisecond), restarted))
}

// fill writes a file at path until the filesystem of dir has keep bytes
// free.
func fill(t *testing.T, dir, path string, keep int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for n := free - keep; n > 0; n -= int64(len(block)) {
		if _, err := f.Write(block[:min(int64(len(block)), n)]); err != nil {
			break // full already: the server wrote meanwhile
		}
	}
}

// TestFullChunksProcesses: the chunks stream gets a byte limit with
// discard new at what it holds once a tenth of the requests are done (a
// full stream), for the hang; then the limit is removed. The workers must
// stay paused without flapping: not ready, a "sink down" line or two per
// worker, no delivery spent; then every request processed or
// dead-lettered with its own cause.
func TestFullChunksProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	sc := newScenario(t)
	sc.publish()
	sc.publishBad()
	sc.startWorkers(nil)
	sc.waitDone(len(sc.docs) / 10)
	limit := func(maxBytes int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := sc.js.Stream(ctx, sc.cfg.ChunksStream)
		if err != nil {
			t.Fatal(err)
		}
		c := s.CachedInfo().Config
		c.MaxBytes, c.Discard = maxBytes, jetstream.DiscardNew
		if maxBytes <= 0 {
			c.MaxBytes = -1
		}
		if _, err := sc.js.UpdateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, err := sc.js.Stream(ctx, sc.cfg.ChunksStream)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	full := int64(s.CachedInfo().State.Bytes) + 64<<10
	limit(full)
	ready := sc.hold(hang)
	left, dlq, downs := sc.ingestMsgs(), sc.deadLetters(), sc.logCount(`"sink down`)
	limit(0)
	drain := sc.drain(15 * time.Minute)
	sc.check("full chunks stream", ready, fmt.Sprintf("; CHUNKS limited to %d bytes for %v: %d requests left at its end, %d dead letters and %d 'sink down' lines by then; drained %v after the limit was removed",
		full, hang, left, dlq, downs, drain.Round(100*time.Millisecond)))
	if sc.otherBinary {
		return
	}
	if downs > 2*len(sc.workers) {
		t.Errorf("%d 'sink down' lines during the fault, want at most 2 per worker (no flapping)", downs)
	}
	for i, r := range ready {
		if r.last != http.StatusServiceUnavailable {
			t.Errorf("worker %d answered /readyz %d at the end of the fault, want 503", i+1, r.last)
		}
	}
}

// TestEmbedderFaultProcesses: workers write to a Qdrant double process
// with an embedder (an embedtest server in the test, 20 ms + 0.2 ms per
// input); the embedder refuses the key (401), then serves vectors of
// another size, then hangs, each for the hang, with a stretch of work in
// between. Each fault must leave every worker not ready at its end, the
// workers with nothing in hand too (they pause on another worker's
// notice, confirmed by their own probe), with at most one "sink down"
// line per worker, and the backlog waiting, without dead letters; every
// document must end with its points. Then, with no work left, the
// embedder hangs once more: no worker sends it anything, so all stay
// ready (worker/doc.go, "Sink outages"). In the end each worker has
// logged one "sink up again" line per "sink down" line.
func TestEmbedderFaultProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	sc := newScenario(t)
	sc.cfg.Sink = "qdrant"
	_, addr := startQdrantDouble(t)
	api := embedtest.Start(t, embedtest.Config{Dims: 16, Fixed: 20 * time.Millisecond, PerInput: 200 * time.Microsecond})
	sc.publish()
	sc.publishBad()
	sc.startWorkers(map[string]string{"CHUNKSTREAM_SINK": "qdrant", "CHUNKSTREAM_QDRANT_ADDR": addr,
		"CHUNKSTREAM_EMBED_URL": api.URL(), "CHUNKSTREAM_EMBED_MODEL": "test-model"})
	var report []string
	var readyAll []readiness
	faults := []struct {
		name       string
		fail, heal func()
	}{
		{"401", func() { api.SetStatus(http.StatusUnauthorized) }, func() { api.SetStatus(0) }},
		{"another dimension", func() { api.SetDims(24) }, func() { api.SetDims(16) }},
		{"hang", api.Hold, api.Release},
	}
	for i, f := range faults {
		sc.waitDone(len(sc.docs) * (1 + 3*i) / 10)
		before, redelivered := api.Stats(), sc.redelivered()
		downs := make([]int, len(sc.workers))
		for j, p := range sc.workers {
			downs[j] = strings.Count(p.out.String(), `"sink down`)
		}
		f.fail()
		ready := sc.hold(hang)
		for j, p := range sc.workers {
			downs[j] = strings.Count(p.out.String(), `"sink down`) - downs[j]
		}
		during := api.Stats()
		left, dlq := sc.ingestMsgs(), sc.deadLetters()
		f.heal()
		for j, r := range ready {
			if r.last != http.StatusServiceUnavailable {
				t.Errorf("%s: worker %d answered /readyz %d at the end of the fault, want 503", f.name, j+1, r.last)
			}
			if downs[j] > 1 && !sc.otherBinary {
				t.Errorf("%s: worker %d logged %d 'sink down' lines during the fault, want at most one", f.name, j+1, downs[j])
			}
		}
		readyAll = append(readyAll, ready...)
		report = append(report, fmt.Sprintf("\n  %s for %v: %d requests left, %d dead letters by its end; the endpoint got %d requests (%.2f/s), redeliveries %d",
			f.name, hang, left, dlq, during.Requests-before.Requests, float64(during.Requests-before.Requests)/hang.Seconds(), sc.redelivered()-redelivered))
		for j, r := range ready {
			report = append(report, fmt.Sprintf("\n    worker %d: %s; 'sink down' lines %d", j+1, r, downs[j]))
		}
	}
	drain := sc.drain(15 * time.Minute)
	st := api.Stats()
	points, want := countPoints(t, addr), sc.expectedChunks()
	testutil.WaitFor(t, time.Minute, "every worker ready after the faults", func() bool { return allReady(sc.workers) })
	idleStart := api.Stats()
	api.Hold()
	idle := sc.hold(hang)
	api.Release()
	idleRequests := api.Stats().Requests - idleStart.Requests
	report = append(report, fmt.Sprintf("\n  hang with no work for %v: the endpoint got %d requests", hang, idleRequests))
	for j, r := range idle {
		report = append(report, fmt.Sprintf("\n    worker %d: %s", j+1, r))
	}
	sc.check("embedder faults", nil, fmt.Sprintf("; points %d of %d; inputs embedded %d (%.2f× the chunks); drained %v after the last fault%s",
		points, want, st.Inputs, float64(st.Inputs)/float64(want), drain.Round(100*time.Millisecond), strings.Join(report, "")))
	if sc.otherBinary {
		return
	}
	if points != want {
		t.Errorf("%d points stored, want %d", points, want)
	}
	if idleRequests != 0 {
		t.Errorf("the endpoint got %d requests while it hung with no work to do, want none", idleRequests)
	}
	for j, r := range idle {
		if r.notReady != 0 || r.last != http.StatusOK {
			t.Errorf("worker %d with no work during a hang: %s, want ready throughout", j+1, r)
		}
	}
	for j, p := range sc.workers {
		if down, up := strings.Count(p.out.String(), `"sink down`), strings.Count(p.out.String(), `"sink up again`); down != up {
			t.Errorf("worker %d logged %d 'sink down' and %d 'sink up again' lines, want as many of each", j+1, down, up)
		}
	}
}
