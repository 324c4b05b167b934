package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

// The scenarios of the one delivery policy and the one outage machine
// (only with CHUNKSTREAM_TEST_PROCESSES=1 and CHUNKSTREAM_TEST_OUTAGES=1,
// minutes each), with real processes and default settings:
//
//	CHUNKSTREAM_TEST_PROCESSES=1 CHUNKSTREAM_TEST_OUTAGES=1 go test -run 'ProbesButHangs|RecordsBucketLost|ServerKills|ObjectsThroughRestart' -v -timeout 60m ./worker/clustertest

// batchHanger is an embeddings endpoint in front of embedtest that
// answers the workers' dimension probe (one input, no chunk of the
// scenario's documents) but, while it hangs, holds every request that
// carries a chunk until it is released: a dependency that answers probes
// and fails real work.
type batchHanger struct {
	srv     *httptest.Server
	proxy   *httputil.ReverseProxy
	mu      sync.Mutex
	held    chan struct{} // non-nil while hanging
	probes  atomic.Int64  // requests without a chunk
	batches atomic.Int64  // requests with chunks
	hung    atomic.Int64  // of which held
}

func startBatchHanger(t *testing.T, api *embedtest.Server) *batchHanger {
	target, err := url.Parse(api.URL())
	if err != nil {
		t.Fatal(err)
	}
	h := &batchHanger{proxy: httputil.NewSingleHostReverseProxy(target)}
	h.srv = httptest.NewServer(h)
	t.Cleanup(func() { h.release(); h.srv.Close() })
	return h
}

func (h *batchHanger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Input []string `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	if !slices.ContainsFunc(req.Input, func(s string) bool { return strings.Contains(s, "Sentence") }) {
		h.probes.Add(1)
		h.proxy.ServeHTTP(w, r)
		return
	}
	h.batches.Add(1)
	h.mu.Lock()
	held := h.held
	h.mu.Unlock()
	if held != nil {
		h.hung.Add(1)
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	h.proxy.ServeHTTP(w, r)
}

func (h *batchHanger) hang() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = make(chan struct{})
	}
}

func (h *batchHanger) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		close(h.held)
		h.held = nil
	}
}

// sinkDowns counts each worker's "sink down" lines.
func (sc *scenario) sinkDowns() []int {
	n := make([]int, len(sc.workers))
	for i, p := range sc.workers {
		n[i] = strings.Count(p.out.String(), `"sink down`)
	}
	return n
}

// TestEmbedderAnswersProbesButHangsProcesses: once a tenth of the
// requests are done, the embedder keeps answering the workers' probes but
// holds every request that carries chunks, for CHUNKSTREAM_OUTAGE_HANG
// (150 s), then answers again. Every worker finds the outage by its own
// writes and stays paused through it: at most one "sink down" line each
// (a passing probe lets one trial through, which hangs too, and the
// outage goes on), not ready at its end; afterwards every document ends
// with its points, the bad requests among them dead-lettered as
// no_content and nothing else, and each worker logged as many "sink up
// again" lines as "sink down" lines.
func TestEmbedderAnswersProbesButHangsProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	sc := newScenario(t)
	sc.cfg.Sink = "qdrant"
	_, addr := startQdrantDouble(t)
	api := embedtest.Start(t, embedtest.Config{Dims: 16, Fixed: 20 * time.Millisecond, PerInput: 200 * time.Microsecond})
	h := startBatchHanger(t, api)
	sc.publish()
	sc.publishBad()
	// A hung batch is an outage once the embedder's time-out passes; a
	// worker may need a few of them before one is not made stale by work
	// that succeeded meanwhile (30 s each by default: seen at 30, 60 and
	// 90 s), so the workers wait 10 s and the fault, however long it is
	// held, outlasts several.
	sc.startWorkers(map[string]string{"CHUNKSTREAM_SINK": "qdrant", "CHUNKSTREAM_QDRANT_ADDR": addr,
		"CHUNKSTREAM_EMBED_URL": h.srv.URL, "CHUNKSTREAM_EMBED_MODEL": "test-model", "CHUNKSTREAM_EMBED_TIMEOUT": "10s"})
	sc.waitDone(len(sc.docs) / 10)
	before := sc.sinkDowns()
	probes, batches := h.probes.Load(), h.batches.Load()
	h.hang()
	ready := sc.hold(hang)
	downs := sc.sinkDowns()
	left, dlq := sc.ingestMsgs(), sc.deadLetters()
	probes, batches, hung := h.probes.Load()-probes, h.batches.Load()-batches, h.hung.Load()
	h.release()
	drain := sc.drain(15 * time.Minute)
	testutil.WaitFor(t, time.Minute, "every worker ready after the fault", func() bool { return allReady(sc.workers) })
	st := api.Stats()
	points, want := countPoints(t, addr), sc.expectedChunks()
	extra := fmt.Sprintf("; points %d of %d; inputs embedded %d (%.2f× the chunks); during the %v fault: %d requests left, %d dead letters, the endpoint got %d probes and %d requests with chunks (%d held); drained %v after it",
		points, want, st.Inputs, float64(st.Inputs)/float64(want), hang, left, dlq, probes, batches, hung, drain.Round(100*time.Millisecond))
	for i := range sc.workers {
		extra += fmt.Sprintf("\n  worker %d: 'sink down' lines during the fault %d", i+1, downs[i]-before[i])
	}
	sc.check("embedder answering probes, hanging on batches", ready, extra)
	if sc.otherBinary {
		return
	}
	if points != want {
		t.Errorf("%d points stored, want %d", points, want)
	}
	for i, r := range ready {
		if n := downs[i] - before[i]; n > 1 {
			t.Errorf("worker %d logged %d 'sink down' lines during the fault, want at most one", i+1, n)
		}
		if r.last != http.StatusServiceUnavailable {
			t.Errorf("worker %d answered /readyz %d at the end of the fault, want 503", i+1, r.last)
		}
	}
	if probes == 0 {
		t.Error("the workers sent the endpoint no probe during the fault: the scenario did not test what it is for")
	}
	for j, p := range sc.workers {
		if down, up := strings.Count(p.out.String(), `"sink down`), strings.Count(p.out.String(), `"sink up again`); down != up {
			t.Errorf("worker %d logged %d 'sink down' and %d 'sink up again' lines, want as many of each", j+1, down, up)
		}
	}
}

// TestRecordsBucketLostProcesses: once a tenth of the requests are done,
// the bucket of document records is deleted under the running workers.
// They pause at the first record write that fails, the first to probe
// creates the bucket again and says so by name, and all resume without
// a restart: every request processed (every chunk record stored once,
// the bad requests dead-lettered as no_content and nothing else), no
// worker exited, every worker ready again, and the fleet's chunker
// defaults written again.
func TestRecordsBucketLostProcesses(t *testing.T) {
	skipUnlessOutage(t)
	sc := newScenario(t)
	sc.publish()
	sc.publishBad()
	sc.startWorkers(nil)
	sc.waitDone(len(sc.docs) / 10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := sc.js.DeleteKeyValue(ctx, sc.cfg.DocsBucket); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	leftAtDelete := sc.ingestMsgs()
	var kv jetstream.KeyValue
	testutil.WaitFor(t, 5*time.Minute, "the records bucket back", func() (bool, string) {
		var err error
		kv, err = sc.js.KeyValue(ctx, sc.cfg.DocsBucket)
		return err == nil, fmt.Sprint(err)
	})
	back := time.Since(deleted)
	drain := sc.drain(15 * time.Minute)
	testutil.WaitFor(t, time.Minute, "every worker ready", func() bool { return allReady(sc.workers) })
	gone := sc.logCount("records bucket KV_" + sc.cfg.DocsBucket + " is gone: recreating it")
	_, defaultsErr := kv.Get(ctx, messages.ChunkerDefaultsKey)
	sc.check("records bucket lost", nil, fmt.Sprintf("; deleted with %d requests left, back after %v, INGEST drained %v after the deletion; 'is gone: recreating' lines %d",
		leftAtDelete, back.Round(100*time.Millisecond), drain.Round(100*time.Millisecond), gone))
	if sc.otherBinary {
		return
	}
	for i, p := range sc.workers {
		select {
		case <-p.done:
			t.Errorf("worker %d exited: %v", i+1, p.exit)
		default:
		}
	}
	if gone == 0 {
		t.Error("no worker said that the records bucket was gone")
	}
	if defaultsErr != nil {
		t.Errorf("the fleet's chunker defaults in the new bucket: %v", defaultsErr)
	}
}

// TestServerKillsProcesses: the nats-server process is killed (SIGKILL)
// three times while the backlog is in flight, each time restarted on its
// store 2 s later, with workers that give a request two deliveries
// (CHUNKSTREAM_MAX_DELIVER=2), so that acks the restarted server forgot
// bring requests past their last delivery. No processed request is
// dead-lettered: every dead letter names a version whose record is not
// done, and is cause max_deliveries (its deliveries cut short by the
// kills); every other document is done, its chunk records stored once;
// INGEST drains.
func TestServerKillsProcesses(t *testing.T) {
	skipUnlessOutage(t)
	sc := newScenario(t)
	sc.publish()
	sc.startWorkers(map[string]string{"CHUNKSTREAM_MAX_DELIVER": "2"})
	for i := range 3 {
		sc.waitDone(len(sc.docs) * (1 + 2*i) / 10)
		sc.killServer()
		time.Sleep(2 * time.Second)
		sc.restartServer()
	}
	sc.waitDone(len(sc.docs))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kv, err := sc.js.KeyValue(ctx, sc.cfg.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	record := func(id string) messages.DocRecord {
		e, err := kv.Get(ctx, messages.DocRecordKey(id))
		if err != nil {
			return messages.DocRecord{}
		}
		rec, _ := messages.DecodeDocRecord(e.Value())
		return rec
	}
	// The dead letters, and whether their version was processed.
	dlq, err := sc.js.Stream(ctx, sc.cfg.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	deadLettered := map[string]bool{}
	causes := map[fault.Cause]int{}
	processed := 0
	for seq := uint64(1); ; {
		m, err := dlq.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(">"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seq = m.Sequence + 1
		dl, _ := messages.ParseDeadLetter(m.Header)
		causes[dl.Cause]++
		id, _ := messages.PeekIngestID(m.Header.Get(messages.HeaderContentType), m.Data)
		deadLettered[id] = true
		if rec := record(id); rec.IngestSeq == dl.IngestSeq && rec.State == messages.StateDone {
			processed++
			t.Errorf("%s (ingest seq %d) was processed and dead-lettered: %s: %s", id, dl.IngestSeq, dl.Cause, dl.Reason)
		}
	}
	ch, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, notDone := 0, 0
	for _, d := range sc.docs {
		if deadLettered[d.id] {
			continue
		}
		if rec := record(d.id); rec.State != messages.StateDone {
			notDone++
			t.Errorf("%s: record %+v, neither done nor dead-lettered", d.id, rec)
		}
		out, _, err := ch.Chunk(chunking.Document{Path: d.id, Content: d.content})
		if err != nil {
			t.Fatal(err)
		}
		want += len(out)
	}
	chunks := sc.streamMsgs(sc.cfg.ChunksStream)
	report := fmt.Sprintf("server kills: %d docs, %d workers (MAX_DELIVER 2), 3 kills of 2 s: dead letters %v, of processed requests %d; documents neither done nor dead-lettered %d; chunk records %d of %d; redelivered %d; worker log lines 'ack not confirmed' %d",
		len(sc.docs), len(sc.workers), causes, processed, notDone, chunks, want, sc.redelivered(), sc.logCount("ack not confirmed"))
	t.Log(report)
	fmt.Println(report)
	if sc.otherBinary {
		return
	}
	for cause := range causes {
		if cause != fault.CauseMaxDeliveries {
			t.Errorf("dead letters by cause %v, want max_deliveries only", causes)
		}
	}
	if chunks != want {
		t.Errorf("%d chunk records stored, want %d", chunks, want)
	}
}

// TestBackfillObjectsThroughRestartProcesses: cmd/producer backfills the
// scenario's documents as files, each made larger than 4 KiB, against a
// server whose maximum payload (64 KiB) sends every document over 4 KiB
// through the Object Store, so that its readers are writing objects all
// along; once a third of the requests are stored the server is killed
// and restarted on its store 2 s later. The producer exits 0, having
// ridden out the outage (its summary counts one), INGEST holds every
// request once, and the Object Store every document.
func TestBackfillObjectsThroughRestartProcesses(t *testing.T) {
	skipUnlessOutage(t)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("max_payload: 65536\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := newScenario(t, func(sc *scenario) { sc.args = []string{"-c", conf} })
	dir := t.TempDir()
	for _, d := range sc.docs {
		// Over the producer's inline limit: the max payload less 64 KiB,
		// at least 4 KiB.
		content := bytes.Repeat(d.content, 1+4096/len(d.content))
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(d.id)), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startCommand(t, testutil.Binary(t, "./cmd/producer"), []string{dir},
		map[string]string{"NATS_URL": sc.url(), "CHUNKSTREAM_LOG_LEVEL": "info"})
	var stored int // nothing consumes INGEST: it holds what was sent
	testutil.WaitFor(t, 5*time.Minute, "a third of the documents sent", func() bool {
		stored = sc.ingestMsgs()
		return stored >= len(sc.docs)/3
	})
	select {
	case <-p.done:
		t.Fatalf("the producer ended before the restart\n%s", p.out.String())
	default:
	}
	sc.killServer()
	time.Sleep(2 * time.Second)
	sc.restartServer()
	code := p.waitExit(t, 10*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := sc.js.ObjectStore(ctx, sc.cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	objects := 0
	if list, err := obs.List(ctx); err == nil {
		objects = len(list)
	}
	ingest, summary := sc.ingestMsgs(), lastLine(p.out.String())
	report := fmt.Sprintf("backfill through a restart: %d documents through the Object Store, server killed with %d requests stored, back after 2s: exit %d; INGEST %d requests, %d objects; %s",
		len(sc.docs), stored, code, ingest, objects, summary)
	t.Log(report)
	fmt.Println(report)
	if code != 0 {
		t.Errorf("producer exit status %d, want 0:\n%s", code, p.out.String())
	}
	if ingest != len(sc.docs) {
		t.Errorf("INGEST holds %d requests, want %d", ingest, len(sc.docs))
	}
	if objects != len(sc.docs) {
		t.Errorf("the Object Store holds %d objects, want %d", objects, len(sc.docs))
	}
	if strings.Contains(summary, " 0 outages") {
		t.Error("the producer met no outage: the restart did not test what it is for")
	}
}

// lastLine is the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
