package clustertest

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// BenchmarkScaleOut is the scale-out benchmark (it takes minutes and both
// cores; one iteration is the whole measurement):
//
//	go test -run '^$' -bench ScaleOut -benchtime 1x -timeout 60m ./worker/clustertest
//
// For 1 and 2 worker processes (CHUNKSTREAM_BENCH_WORKERS, default "1,2")
// it starts a fresh nats-server process, publishes the Markdown corpus
// (../shared/corpus/markdown, the first CHUNKSTREAM_BENCH_MB megabytes in
// path order, default 40) as ingest requests, then starts the workers and
// times how long they take to drain INGEST; the CPU time of the workers
// and of the server (from /proc) is reported beside the throughput.
// CHUNKSTREAM_BENCH_CONCURRENCY sets each worker's CHUNKSTREAM_CONCURRENCY
// (default GOMAXPROCS). Documents over 900 KB are left out, and with
// CHUNKSTREAM_BENCH_DOC_KB=MIN-MAX those outside MIN to MAX KiB. Each row has
// documents/s, chunk records/s, MB/s and the CPU per document of the
// workers and of the server.
//
// CHUNKSTREAM_BENCH_BASELINE=FILE runs that other worker binary (an older
// release) through the same runs, each right after this build's, and
// prints the ratio of chunk records/s. With the nats CLI on PATH, each run
// is followed by `nats bench` on the same server: asynchronous publishes
// and atomic batches of as many records, of the records' mean size, with
// message ids, as a yardstick of what the server stores at most.
func BenchmarkScaleOut(b *testing.B) {
	for b.Loop() {
		scaleOut(b)
	}
}

// scaleOut is one run of BenchmarkScaleOut.
func scaleOut(t testing.TB) {
	corpus := testutil.SharedDir(t, "corpus", "markdown")
	limitMB := envInt(t, "CHUNKSTREAM_BENCH_MB", 40)
	minSize, maxSize := docSizes(t)
	docs := loadCorpus(t, corpus, limitMB<<20, minSize, maxSize)
	var bytes int
	for _, d := range docs {
		bytes += len(d.content)
	}
	t.Logf("corpus: %d documents, %.1f MB (GOMAXPROCS %d, %d CPUs)", len(docs), float64(bytes)/1e6, runtime.GOMAXPROCS(0), runtime.NumCPU())

	natsBin := testutil.Binary(t, testutil.NATSServer)
	workerBin := testutil.Binary(t, "./cmd/worker")
	counts := strings.Split(os.Getenv("CHUNKSTREAM_BENCH_WORKERS"), ",")
	if counts[0] == "" {
		counts = []string{"1", "2"}
	}
	baseline := os.Getenv("CHUNKSTREAM_BENCH_BASELINE")
	fmt.Printf("%-9s %-8s %7s %8s %8s %9s %7s %14s %14s %10s\n", "build", "workers", "docs", "seconds", "docs/s", "records/s", "MB/s",
		"worker ms/doc", "server ms/doc", "records")
	row := func(build string, n int, r scaleResult) {
		secs := r.wall.Seconds()
		fmt.Printf("%-9s %-8d %7d %8.2f %8.1f %9.0f %7.2f %14.3f %14.3f %10d\n", build, n, len(docs), secs,
			float64(len(docs))/secs, float64(r.chunks)/secs, float64(bytes)/1e6/secs,
			r.workerCPU.Seconds()*1e3/float64(len(docs)), r.serverCPU.Seconds()*1e3/float64(len(docs)), r.chunks)
	}
	for _, c := range counts {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Fatal(err)
		}
		r := runScaleOut(t, natsBin, workerBin, docs, n, true)
		row("this", n, r)
		if baseline != "" {
			b := runScaleOut(t, natsBin, baseline, docs, n, false)
			row("baseline", n, b)
			fmt.Printf("%-9s %-8d records/s this/baseline %.2f×\n", "ratio", n,
				(float64(r.chunks)/r.wall.Seconds())/(float64(b.chunks)/b.wall.Seconds()))
		}
		for _, y := range r.yardsticks {
			fmt.Printf("%-9s %-8d %s: %.0f records/s (this build's records/s are %.2f× it)\n", "nats", n, y.what, y.rate,
				float64(r.chunks)/r.wall.Seconds()/y.rate)
		}
	}
}

// yardstick is a nats bench figure measured on a run's server.
type yardstick struct {
	what string
	rate float64 // messages/s
}

// natsBenchRate reads the publish rate from nats bench's summary line
// ("Pub stats: …" in older CLIs, "NATS JetStream asynchronous publisher
// stats: …" in natscli 0.5).
var natsBenchRate = regexp.MustCompile(`(?m)^\s*(?:Pub|NATS Pub|NATS JetStream [a-z ]+publisher) stats: ([\d,]+) msgs/sec`)

// natsBench runs `nats bench js pub <mode>` against url with msgs messages
// of size bytes and returns its publish rate; ok is false without the nats
// CLI.
func natsBench(t testing.TB, url, mode string, msgs, size, batch int) (float64, bool) {
	t.Helper()
	bin, err := exec.LookPath("nats")
	if err != nil {
		return 0, false
	}
	args := []string{"bench", "js", "pub", mode, "bench.records", "--server", url, "--msgs", strconv.Itoa(msgs),
		"--size", strconv.Itoa(size), "--stream", "benchstream", "--create", "--purge", "--storage", "file", "--dedup", "--no-progress"}
	if batch > 0 {
		args = append(args, "--batch", strconv.Itoa(batch))
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Logf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		return 0, false
	}
	m := natsBenchRate.FindSubmatch(out)
	if m == nil {
		t.Logf("nats %s: no rate in\n%s", strings.Join(args, " "), out)
		return 0, false
	}
	rate, _ := strconv.ParseFloat(strings.ReplaceAll(string(m[1]), ",", ""), 64)
	return rate, true
}

type scaleResult struct {
	wall, workerCPU, serverCPU time.Duration
	chunks, chunkBytes         uint64
	yardsticks                 []yardstick
}

// runScaleOut runs workers of workerBin over docs, published first as the
// producer's backfill does: in bulk requests with bulk (within the
// producer's bounds, messages.MaxBulkRequests and MaxBulkBytes), else one
// request per message (what a build before bulk requests reads).
func runScaleOut(t testing.TB, natsBin, workerBin string, docs []testDoc, workers int, bulk bool) scaleResult {
	t.Helper()
	port := testutil.FreePort(t)
	srv := exec.Command(natsBin, "-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var nc *nats.Conn
	testutil.WaitFor(t, 20*time.Second, "nats-server", func() (bool, string) {
		var err error
		nc, err = nats.Connect(url)
		return err == nil, fmt.Sprint(err)
	})
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cfg := worker.DefaultConfig()
	if _, err := worker.Setup(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	var entries []messages.BulkEntry
	size := 0
	sendBulk := func() {
		if len(entries) == 0 {
			return
		}
		data, err := messages.EncodeBulk(entries)
		if err != nil {
			t.Fatal(err)
		}
		msg := &nats.Msg{Subject: "ingest.bench.bulk", Data: data, Header: nats.Header{}}
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeBulk)
		msg.Header.Set(messages.HeaderMsgID, "bulk@"+entries[0].MsgID)
		if _, err := js.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
		entries, size = nil, 0
	}
	for _, d := range docs {
		req := messages.IngestRequest{V: messages.Version, ID: d.id, Content: d.content}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			t.Fatal(err)
		}
		msgID := messages.IngestMsgID("", d.id, messages.ContentVersion(d.content), "bench")
		if bulk {
			if len(entries) == messages.MaxBulkRequests || size+len(data)+512 > messages.MaxBulkBytes {
				sendBulk()
			}
			entries = append(entries, messages.BulkEntry{MsgID: msgID, ContentType: messages.ContentTypeMsgpack, Data: data})
			size += len(data) + 512
			continue
		}
		msg := &nats.Msg{Subject: d.subject, Data: data, Header: nats.Header{}}
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		msg.Header.Set(messages.HeaderMsgID, msgID)
		if _, err := js.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
	}
	sendBulk()
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("publishing timed out")
	}
	if info, err := js.Stream(ctx, cfg.IngestStream); err == nil && !bulk && info.CachedInfo().State.Msgs != uint64(len(docs)) {
		t.Logf("INGEST holds %d requests for %d documents", info.CachedInfo().State.Msgs, len(docs))
	}
	serverBefore := procCPU(t, srv.Process.Pid)

	start := time.Now()
	var procs []*exec.Cmd
	exited := make(chan error, workers)
	for _, mport := range testutil.FreePorts(t, workers) {
		cmd := exec.Command(workerBin)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NATS_URL=" + url,
			fmt.Sprintf("CHUNKSTREAM_METRICS_ADDR=127.0.0.1:%d", mport), "CHUNKSTREAM_LOG_LEVEL=error"}
		if c := os.Getenv("CHUNKSTREAM_BENCH_CONCURRENCY"); c != "" {
			cmd.Env = append(cmd.Env, "CHUNKSTREAM_CONCURRENCY="+c)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		go func() { exited <- cmd.Wait() }()
	}
	stream, err := js.Stream(ctx, cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.Consumer(ctx, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	lastLog := time.Now()
	for {
		ci, err := cons.Info(ctx)
		if err == nil && ci.NumPending == 0 && ci.NumAckPending == 0 && ci.Delivered.Consumer > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("a worker exited early: %v", err)
		case <-ctx.Done():
			t.Fatal("workers did not drain INGEST in time")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(lastLog) > 10*time.Second && err == nil {
			t.Logf("%d workers, %v: %d pending, %d ack pending, %d redelivered", workers, time.Since(start).Round(time.Second), ci.NumPending, ci.NumAckPending, ci.NumRedelivered)
			lastLog = time.Now()
		}
	}
	r := scaleResult{wall: time.Since(start)}
	for _, p := range procs {
		r.workerCPU += procCPU(t, p.Process.Pid)
	}
	r.serverCPU = procCPU(t, srv.Process.Pid) - serverBefore
	for _, p := range procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for range procs {
		<-exited
	}
	if chunks, err := js.Stream(ctx, cfg.ChunksStream); err != nil {
		t.Fatal(err)
	} else if info, err := chunks.Info(ctx); err == nil {
		r.chunks, r.chunkBytes = info.State.Msgs, info.State.Bytes
	}
	if r.chunks > 0 {
		size := int(r.chunkBytes / r.chunks)
		if rate, ok := natsBench(t, url, "async", int(r.chunks), size, 0); ok {
			r.yardsticks = append(r.yardsticks, yardstick{fmt.Sprintf("nats bench js pub async, %d msgs of %d B", r.chunks, size), rate})
		}
		perDoc := max(1, int(r.chunks)/len(docs))
		if rate, ok := natsBench(t, url, "atomic", int(r.chunks), size, perDoc); ok {
			r.yardsticks = append(r.yardsticks, yardstick{fmt.Sprintf("nats bench js pub atomic --batch %d", perDoc), rate})
		}
	}
	if dlq, err := js.Stream(ctx, cfg.DLQStream); err == nil {
		if info, err := dlq.Info(ctx); err == nil && info.State.Msgs > 0 {
			t.Logf("%d workers: %d dead letters", workers, info.State.Msgs)
		}
	}
	return r
}

// procCPU is a process's user + system CPU time from /proc/<pid>/stat.
func procCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 (1-based), in clock ticks (100 per second on Linux).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// loadCorpus reads Markdown files under dir in path order up to limit
// bytes, skipping files over 900 KB (above the server's 1 MB max payload
// they would go through the Object Store, which is not what is measured).
func loadCorpus(t testing.TB, dir string, limit, minSize, maxSize int) []testDoc {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	var docs []testDoc
	total := 0
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 900<<10 || len(b) < minSize || len(b) > maxSize {
			continue
		}
		rel, _ := filepath.Rel(dir, p)
		docs = append(docs, testDoc{id: filepath.ToSlash(rel), subject: fmt.Sprintf("ingest.bench.%d", i), content: b})
		total += len(b)
		if total >= limit {
			break
		}
	}
	return docs
}

// docSizes returns the document sizes BenchmarkScaleOut takes, in bytes:
// CHUNKSTREAM_BENCH_DOC_KB=MIN-MAX in KiB (every size when unset).
func docSizes(t testing.TB) (minSize, maxSize int) {
	t.Helper()
	s := os.Getenv("CHUNKSTREAM_BENCH_DOC_KB")
	if s == "" {
		return 0, math.MaxInt
	}
	lo, hi, ok := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if !ok || err1 != nil || err2 != nil || a < 0 || b < a {
		t.Fatalf("CHUNKSTREAM_BENCH_DOC_KB=%q, want MIN-MAX in KiB, such as 1-10", s)
	}
	return a << 10, b << 10
}

func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}
