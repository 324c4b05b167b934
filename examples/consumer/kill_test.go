package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// request is one version published, and the chunks it must end as.
type request struct {
	id      string
	content []byte // nil: a delete
	options map[string]any
}

// TestConsumerUnderWorkerKills publishes versions of many documents
// (edits, deletes, empty ones and one of 2,500 chunks) to a nats-server
// process, where two worker processes write them with the subject sink
// while one of them is killed (SIGKILL) and started again 10 times. Then:
// every version's records in CHUNKS are complete and each of its batches
// is contiguous, in position order, stored once; and the example
// consumer, run as a process, rebuilds exactly the chunks of every
// document's newest version.
func TestConsumerUnderWorkerKills(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	natsBin := testutil.Binary(t, testutil.NATSServer)
	workerBin := testutil.Binary(t, "./cmd/worker")
	consumerBin := testutil.Binary(t, "./examples/consumer")
	dir, port := t.TempDir(), testutil.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	srv := exec.Command(natsBin, "-js", "-sd", dir, "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	var nc *nats.Conn
	testutil.WaitFor(t, 20*time.Second, "nats-server", func() (bool, string) {
		var err error
		nc, err = nats.Connect(url)
		return err == nil, fmt.Sprint(err)
	})
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NATS_URL": url, "CHUNKSTREAM_ACK_WAIT": "2s", "CHUNKSTREAM_LOG_LEVEL": "warn",
		"CHUNKSTREAM_CONCURRENCY": "4"}
	ports := testutil.FreePorts(t, 2)
	cfg := worker.DefaultConfig()
	cfg.AckWait = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := worker.Setup(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}

	reqs := versions()
	want := expected(t, reqs)
	var workers [2]*exec.Cmd
	start := func(i int) {
		cmd := exec.Command(workerBin)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
			fmt.Sprintf("CHUNKSTREAM_METRICS_ADDR=127.0.0.1:%d", ports[i])}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if testing.Verbose() {
			cmd.Stderr = os.Stderr
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		workers[i] = cmd
	}
	for i := range workers {
		start(i)
	}
	t.Cleanup(func() {
		for _, w := range workers {
			w.Process.Kill()
			w.Wait()
		}
	})
	go publish(ctx, t, js, reqs)
	for range 10 {
		time.Sleep(time.Duration(200+rand.IntN(800)) * time.Millisecond)
		i := rand.IntN(len(workers))
		workers[i].Process.Signal(syscall.SIGKILL)
		workers[i].Wait()
		start(i)
	}
	testutil.WaitFor(t, 5*time.Minute, "every request processed", func() (bool, string) {
		in, dlq := streamMsgs(ctx, js, cfg.IngestStream), streamMsgs(ctx, js, cfg.DLQStream)
		return in == 0 && dlq == 0 && published.Load() == int64(len(reqs)), fmt.Sprintf("INGEST %d, DLQ %d, published %d of %d", in, dlq, published.Load(), len(reqs))
	})

	checkStream(ctx, t, js, cfg.ChunksStream)

	out, err := exec.CommandContext(ctx, consumerBin, "-server", url).Output()
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	got := map[string]Version{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v Version
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("consumer line %q: %v", sc.Text(), err)
		}
		got[viewKey(v.Tenant, v.DocID)] = v
	}
	if len(got) != len(want) {
		t.Errorf("consumer shows %d documents, want %d", len(got), len(want))
	}
	for id, hashes := range want {
		v, ok := got[id]
		switch {
		case !ok:
			t.Errorf("%s: not shown by the consumer", id)
		case hashes == nil && !v.Deleted:
			t.Errorf("%s: %d chunks, want deleted", id, len(v.Chunks))
		case hashes != nil && fmt.Sprint(recordHashes(v.Chunks)) != fmt.Sprint(hashes):
			t.Errorf("%s: consumer shows %d chunks %v, want %d %v", id, len(v.Chunks), short(recordHashes(v.Chunks)), len(hashes), short(hashes))
		}
	}
	checkJSConsumer(ctx, t, url, got)
}

// checkJSConsumer runs the JavaScript example consumer (Node.js and its
// packages, installed by npm ci in examples/consumer/js) and requires the
// same documents, versions and chunk hashes as the Go consumer's.
func checkJSConsumer(ctx context.Context, t *testing.T, url string, goView map[string]Version) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node not found: the JavaScript consumer is not run")
		return
	}
	if _, err := os.Stat("js/node_modules/@nats-io/jetstream"); err != nil {
		t.Log("examples/consumer/js has no node_modules (npm ci there): the JavaScript consumer is not run")
		return
	}
	cmd := exec.CommandContext(ctx, node, "js/consumer.mjs", url)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("JavaScript consumer: %v", err)
	}
	type line struct {
		DocID     string `json:"doc_id"`
		Tenant    string `json:"tenant"`
		IngestSeq uint64 `json:"ingest_seq"`
		Deleted   bool   `json:"deleted"`
		Chunks    []struct {
			Hash string `json:"hash"`
		} `json:"chunks"`
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("JavaScript consumer line %q: %v", sc.Text(), err)
		}
		n++
		var hashes []string
		for _, c := range l.Chunks {
			hashes = append(hashes, c.Hash)
		}
		g := goView[viewKey(l.Tenant, l.DocID)]
		if g.IngestSeq != l.IngestSeq || g.Deleted != l.Deleted || fmt.Sprint(hashes) != fmt.Sprint(recordHashesOrNil(g.Chunks)) {
			t.Errorf("%s: JavaScript consumer shows version %d (deleted %v, %d chunks), Go %d (deleted %v, %d chunks)",
				l.DocID, l.IngestSeq, l.Deleted, len(hashes), g.IngestSeq, g.Deleted, len(g.Chunks))
		}
	}
	if n != len(goView) {
		t.Errorf("JavaScript consumer shows %d documents, Go %d", n, len(goView))
	}
}

func recordHashesOrNil(rs []messages.ChunkRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Hash)
	}
	return out
}

func short(s []string) []string { return s[:min(len(s), 4)] }

func recordHashes(rs []messages.ChunkRecord) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Hash)
	}
	if len(out) == 0 {
		return []string{}
	}
	return out
}

// versions returns the requests to publish: 600 documents, a second
// version of every third, a delete of every tenth, an empty one, and one
// document of 2,500 chunks.
func versions() []request {
	var out []request
	doc := func(i, v int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d, version %d\n\n", i, v)
		for s := range 1 + (i+v)%4 {
			fmt.Fprintf(&b, "## Part %d\n\n%s\n\n", s, strings.Repeat(fmt.Sprintf("Sentence %d of part %d. ", s+v, s), 30+i%70))
		}
		return []byte(b.String())
	}
	for i := range 600 {
		out = append(out, request{id: fmt.Sprintf("docs/%03d.md", i), content: doc(i, 1)})
	}
	for i := 0; i < 600; i += 3 {
		out = append(out, request{id: fmt.Sprintf("docs/%03d.md", i), content: doc(i, 2)})
	}
	for i := 0; i < 600; i += 10 {
		out = append(out, request{id: fmt.Sprintf("docs/%03d.md", i)})
	}
	out = append(out, request{id: "docs/empty.md", content: []byte{}})
	var big strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&big, "Paragraph %04d of the big document, long enough to be one chunk.\n\n", i)
	}
	out = append(out, request{id: "docs/big.md", content: []byte(big.String()), options: map[string]any{"max_char": 100, "chunk_overlap": 0}})
	return out
}

var published atomic.Int64

// publish sends the requests in order, each after the previous one's
// PubAck, so a document's versions get increasing sequences.
func publish(ctx context.Context, t *testing.T, js jetstream.JetStream, reqs []request) {
	for i, r := range reqs {
		req := messages.IngestRequest{V: messages.Version, ID: r.id, Content: r.content, Options: r.options}
		version := "delete"
		if r.content == nil {
			req.Op = messages.OpDelete
		} else {
			version = messages.ContentVersion(r.content)
		}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			t.Error(err)
			return
		}
		msg := nats.NewMsg("ingest.docs")
		msg.Data = data
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		msg.Header.Set(messages.HeaderMsgID, messages.IngestMsgID("", r.id, version, strconv.Itoa(i)))
		for {
			_, err := js.PublishMsg(ctx, msg)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Error(err)
				return
			}
		}
		published.Store(int64(i + 1))
	}
}

func streamMsgs(ctx context.Context, js jetstream.JetStream, name string) int {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return -1
	}
	info, err := s.Info(ctx)
	if err != nil {
		return -1
	}
	return int(info.State.Msgs)
}

// expected returns, per document, the hashes of its newest version's
// chunks (nil for a delete).
func expected(t *testing.T, reqs []request) map[string][]string {
	t.Helper()
	reg := registry.Default()
	out := map[string][]string{}
	for _, r := range reqs {
		if r.content == nil {
			out[r.id] = nil
			continue
		}
		c, err := reg.NewChunker("markdown", r.options)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: r.id, Content: r.content})
		if err != nil {
			t.Fatal(err)
		}
		hashes := make([]string, 0, len(chunks))
		for _, ch := range chunks {
			hashes = append(hashes, ch.Hash())
		}
		out[r.id] = hashes
		if r.id == "docs/big.md" && len(chunks) < 2500 {
			t.Fatalf("the big document gives %d chunks, want at least 2500", len(chunks))
		}
	}
	return out
}

// checkStream reads CHUNKS in order and checks that every batch of every
// version (its records at positions [k·MaxBatch, (k+1)·MaxBatch)) is one
// contiguous run in position order, stored once, and that every version
// stored is complete.
func checkStream(ctx context.Context, t *testing.T, js jetstream.JetStream, stream string) {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		doc   string
		seq   uint64
		batch int
	}
	runs := map[key]int{}
	positions := map[string]map[int]bool{}
	counts := map[string]int{}
	var prev *messages.ChunkRecord
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		version := fmt.Sprintf("%s@%d", r.DocID, r.IngestSeq)
		k := key{r.DocID, r.IngestSeq, r.Position / subjectsink.MaxBatch}
		continues := prev != nil && prev.DocID == r.DocID && prev.IngestSeq == r.IngestSeq && prev.Position+1 == r.Position &&
			r.Position%subjectsink.MaxBatch != 0
		if !continues {
			if r.Position%subjectsink.MaxBatch != 0 {
				t.Fatalf("record %d: %s position %d starts a run inside a batch", seq, version, r.Position)
			}
			if prev != nil && prev.Op == messages.OpUpsert && prev.Position+1 < prev.Count && (prev.Position+1)%subjectsink.MaxBatch != 0 {
				t.Fatalf("record %d: %s@%d stops at position %d of %d inside a batch", seq, prev.DocID, prev.IngestSeq, prev.Position, prev.Count)
			}
			runs[k]++
			if runs[k] > 1 {
				t.Errorf("record %d: batch %d of %s stored twice", seq, k.batch, version)
			}
		}
		if positions[version] == nil {
			positions[version] = map[int]bool{}
		}
		positions[version][r.Position] = true
		counts[version] = max(r.Count, 1)
		prev = &r
	}
	for v, n := range counts {
		if len(positions[v]) != n {
			t.Errorf("%s: %d records of %d in CHUNKS", v, len(positions[v]), n)
		}
	}
	t.Logf("CHUNKS: %d records, %d versions, every batch contiguous and stored once", info.State.Msgs, len(counts))
}
