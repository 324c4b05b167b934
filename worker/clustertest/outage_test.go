package clustertest

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// The outage scenarios run real processes with default settings and take
// minutes, so they run only with CHUNKSTREAM_TEST_PROCESSES=1 and
// CHUNKSTREAM_TEST_OUTAGES=1:
//
//	CHUNKSTREAM_TEST_PROCESSES=1 CHUNKSTREAM_TEST_OUTAGES=1 go test -run 'Processes' -v -timeout 60m ./worker/clustertest
//
// CHUNKSTREAM_OUTAGE_DOCS (default 3000) requests are published to a
// nats-server process and CHUNKSTREAM_OUTAGE_WORKERS (default 3) worker
// processes work on them. CHUNKSTREAM_TEST_WORKER_BIN runs another worker
// binary (an older build, to compare): the figures are reported and
// nothing is asserted.

// TestSinkOutageProcesses: the workers write to a Qdrant double process;
// once a tenth of the requests are done the double is stopped (SIGSTOP)
// for CHUNKSTREAM_OUTAGE_HANG (default 150s), then continued. It reports
// the dead letters (want 0), the workers' readiness during the hang and
// the time to drain after it, and requires every chunk stored.
func TestSinkOutageProcesses(t *testing.T) {
	skipUnlessOutage(t)
	hang := envDuration(t, "CHUNKSTREAM_OUTAGE_HANG", 150*time.Second)
	sc := newScenario(t)
	double, addr := startQdrantDouble(t)
	sc.publish()
	startedAt := time.Now()
	workers := sc.startWorkers(map[string]string{"CHUNKSTREAM_SINK": "qdrant", "CHUNKSTREAM_QDRANT_ADDR": addr})
	sc.waitDone(len(sc.docs) / 10)
	before := float64(len(sc.docs)-sc.leftAtStop) / time.Since(startedAt).Seconds()

	if err := double.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	hungAt := time.Now()
	stoppedWith := sc.ingestMsgs()
	ready := make([]readiness, len(workers))
	for time.Since(hungAt) < hang {
		for i, p := range workers {
			ready[i].sample(p, time.Since(hungAt))
		}
		time.Sleep(time.Second)
	}
	left, dlqDuring := sc.ingestMsgs(), sc.deadLetters()
	if err := double.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	contAt := time.Now()
	var drain, readyAgain time.Duration
	for drain == 0 || readyAgain == 0 {
		if time.Since(contAt) > 15*time.Minute {
			t.Fatalf("after SIGCONT: %d requests left, workers ready again after %v", sc.ingestMsgs(), readyAgain)
		}
		if readyAgain == 0 && allReady(workers) {
			readyAgain = time.Since(contAt)
		}
		if drain == 0 && sc.ingestMsgs() == 0 {
			drain = time.Since(contAt)
		}
		time.Sleep(100 * time.Millisecond)
	}

	points := countPoints(t, addr)
	want := sc.expectedChunks()
	dlq := sc.deadLetters()
	report := fmt.Sprintf("sink outage: %d docs, %d workers, Qdrant stopped %v with %d requests left (%d left at its end, %d dead letters by then); "+
		"after SIGCONT: all workers ready again after %v, INGEST drained after %v (%.0f docs/s; %.0f docs/s before the hang); dead letters %d; points %d of %d; worker log lines 'sink down' %d, 'dead-lettered' %d",
		len(sc.docs), len(workers), hang, stoppedWith, left, dlqDuring, readyAgain.Round(100*time.Millisecond), drain.Round(100*time.Millisecond), float64(left)/drain.Seconds(), before,
		dlq, points, want, sc.logCount("sink down"), sc.logCount("dead-lettered"))
	for i, r := range ready {
		report += fmt.Sprintf("\n  worker %d during the hang: %s", i+1, r)
	}
	for i, p := range workers {
		for _, line := range strings.Split(p.out.String(), "\n") {
			if strings.Contains(line, `"sink down`) || strings.Contains(line, `"sink up again`) {
				report += fmt.Sprintf("\n  worker %d: %s", i+1, line)
			}
		}
	}
	t.Log(report)
	fmt.Println(report)
	if sc.otherBinary {
		return
	}
	if dlq != 0 {
		t.Errorf("%d dead letters, want 0", dlq)
	}
	if points != want {
		t.Errorf("%d points stored, want %d", points, want)
	}
	for i, r := range ready {
		if r.last != http.StatusServiceUnavailable {
			t.Errorf("worker %d answered /readyz %d at the end of the hang, want 503", i+1, r.last)
		}
	}
}

// TestServerRestartProcesses: the nats-server process is killed (SIGKILL)
// once a tenth of the requests are done and restarted on the same store 2
// s later; the restarted server has forgotten the latest deliveries and
// does not answer their acks. It reports the time to drain after the
// restart and the acks that went unconfirmed, and requires no dead letter.
func TestServerRestartProcesses(t *testing.T) {
	skipUnlessOutage(t)
	sc := newScenario(t)
	sc.publish()
	workers := sc.startWorkers(nil)
	sc.waitDone(len(sc.docs) / 10)
	sc.killServer()
	time.Sleep(2 * time.Second)
	restartAt := time.Now()
	sc.restartServer()
	drained := sc.waitDone(len(sc.docs))
	drain := drained.Sub(restartAt)
	dlq := sc.deadLetters()
	report := fmt.Sprintf("server restart: %d docs, %d workers, killed with %d requests left, restarted after 2s: drained %v after the restart; "+
		"dead letters %d; worker log lines 'ack not confirmed' %d, 'ack failed' %d",
		len(sc.docs), len(workers), sc.leftAtStop, drain.Round(100*time.Millisecond), dlq,
		sc.logCount("ack not confirmed"), sc.logCount("ack failed"))
	t.Log(report)
	fmt.Println(report)
	if !sc.otherBinary && dlq != 0 {
		t.Errorf("%d dead letters, want 0", dlq)
	}
}

// scenario is a nats-server process with the worker's topology, a set of
// documents and the worker processes on them.
type scenario struct {
	t           *testing.T
	natsBin     string
	workerBin   string
	otherBinary bool
	dir         string
	port        int
	args        []string // more nats-server arguments (a configuration file)
	user        string   // "user:password@" of the URLs, when the server has accounts
	srv         *exec.Cmd
	srvDone     chan struct{}
	nc          *nats.Conn
	js          jetstream.JetStream
	cfg         worker.Config
	docs        []testDoc
	workers     []*process
	leftAtStop  int
	nDocs       int                 // documents (0: CHUNKSTREAM_OUTAGE_DOCS, default 3000)
	nWorkers    int                 // worker processes (0: CHUNKSTREAM_OUTAGE_WORKERS, default 3)
	jaeger      *tracingtest.Jaeger // where the workers export their spans (traced); nil: tracing off
}

// newScenario starts the nats-server process, after configure changes
// the scenario, and makes the documents. With CHUNKSTREAM_TEST_TRACING=1
// the scenario is traced.
func newScenario(t *testing.T, configure ...func(*scenario)) *scenario {
	t.Helper()
	sc := &scenario{t: t, natsBin: testutil.Binary(t, testutil.NATSServer), workerBin: testutil.Binary(t, "./cmd/worker"), dir: t.TempDir(),
		port: testutil.FreePort(t), cfg: worker.DefaultConfig()}
	sc.otherBinary = os.Getenv("CHUNKSTREAM_TEST_WORKER_BIN") != ""
	if tracingtest.On() {
		configure = append(configure, traced)
	}
	for _, c := range configure {
		c(sc)
	}
	sc.restartServer()
	t.Cleanup(func() {
		for _, p := range sc.workers {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range sc.workers {
			select {
			case <-p.done:
			case <-time.After(40 * time.Second):
			}
		}
		sc.killServer()
	})
	var err error
	testutil.WaitFor(t, 20*time.Second, "nats-server", func() (bool, string) {
		sc.nc, err = nats.Connect(sc.url(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
		return err == nil, fmt.Sprint(err)
	})
	t.Cleanup(sc.nc.Close)
	if sc.js, err = jetstream.New(sc.nc, jetstream.WithPublishAsyncMaxPending(512)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := worker.Setup(ctx, sc.js, sc.cfg); err != nil {
		t.Fatal(err)
	}
	if sc.nDocs == 0 {
		sc.nDocs = envInt(t, "CHUNKSTREAM_OUTAGE_DOCS", 3000)
	}
	for i := range sc.nDocs {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for s := range 1 + i%4 {
			fmt.Fprintf(&b, "## Part %d\n\n%s\n\n", s, strings.Repeat(fmt.Sprintf("Sentence %d of part %d in document %d. ", s*7+i%13, s, i), 20+i%60))
		}
		sc.docs = append(sc.docs, testDoc{id: fmt.Sprintf("outage/%05d.md", i), subject: "ingest.outage", content: []byte(b.String())})
	}
	return sc
}

// url is the server's client URL.
func (sc *scenario) url() string { return fmt.Sprintf("nats://%s127.0.0.1:%d", sc.user, sc.port) }

// restartServer starts the nats-server process on the scenario's port and
// store.
func (sc *scenario) restartServer() {
	sc.t.Helper()
	sc.srv = exec.Command(sc.natsBin, append([]string{"-js", "-sd", sc.dir, "-a", "127.0.0.1", "-p", strconv.Itoa(sc.port)}, sc.args...)...)
	if serverLog() {
		sc.srv.Stderr = os.Stderr
	}
	if err := sc.srv.Start(); err != nil {
		sc.t.Fatal(err)
	}
	done := make(chan struct{})
	sc.srvDone = done
	srv := sc.srv
	go func() { srv.Wait(); close(done) }()
}

func (sc *scenario) killServer() {
	if sc.srv == nil {
		return
	}
	sc.srv.Process.Kill()
	<-sc.srvDone
	sc.srv = nil
}

func (sc *scenario) publish() {
	sc.t.Helper()
	for _, d := range sc.docs {
		req := messages.IngestRequest{V: messages.Version, ID: d.id, Content: d.content}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			sc.t.Fatal(err)
		}
		msg := &nats.Msg{Subject: d.subject, Data: data, Header: nats.Header{}}
		msg.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		msg.Header.Set(messages.HeaderMsgID, messages.IngestMsgID("", d.id, messages.ContentVersion(d.content), "outage"))
		// A loaded machine's server can be 512 PubAcks behind: wait for
		// room rather than fail after the default 200 ms.
		if _, err := sc.js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute)); err != nil {
			sc.t.Fatal(err)
		}
	}
	select {
	case <-sc.js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		sc.t.Fatal("publishing timed out")
	}
	if n := sc.ingestMsgs(); n != len(sc.docs) {
		sc.t.Fatalf("INGEST holds %d requests, want %d", n, len(sc.docs))
	}
}

// startWorkers starts the worker processes with default settings plus env
// (and the OTEL_* variables of a traced scenario).
func (sc *scenario) startWorkers(env map[string]string) []*process {
	sc.t.Helper()
	if sc.nWorkers == 0 {
		sc.nWorkers = envInt(sc.t, "CHUNKSTREAM_OUTAGE_WORKERS", 3)
	}
	for _, port := range testutil.FreePorts(sc.t, sc.nWorkers) {
		e := map[string]string{
			"NATS_URL":                 sc.url(),
			"CHUNKSTREAM_METRICS_ADDR": fmt.Sprintf("127.0.0.1:%d", port),
			"CHUNKSTREAM_LOG_LEVEL":    "info",
		}
		if sc.jaeger != nil {
			maps.Copy(e, sc.jaeger.Env())
		}
		for k, v := range env {
			e[k] = v
		}
		p := startCommand(sc.t, sc.workerBin, nil, e)
		sc.workers = append(sc.workers, p)
	}
	for _, p := range sc.workers {
		p.waitRunning(sc.t, "worker ready")
	}
	return sc.workers
}

// waitDone waits until at least n requests have left INGEST (acked or
// dead-lettered) and returns when. The first call records how many were
// left (leftAtStop).
func (sc *scenario) waitDone(n int) time.Time {
	sc.t.Helper()
	deadline := time.Now().Add(15 * time.Minute)
	for {
		left := sc.ingestMsgs()
		if left >= 0 && len(sc.docs)-left >= n {
			if sc.leftAtStop == 0 {
				sc.leftAtStop = left
			}
			return time.Now()
		}
		if time.Now().After(deadline) {
			sc.t.Fatalf("%d requests still in INGEST after 15 minutes", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// streamMsgs returns the number of messages in a stream, -1 when it
// cannot be read.
func (sc *scenario) streamMsgs(name string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := sc.js.Stream(ctx, name)
	if err != nil {
		return -1
	}
	return int(s.CachedInfo().State.Msgs)
}

func (sc *scenario) ingestMsgs() int  { return sc.streamMsgs(sc.cfg.IngestStream) }
func (sc *scenario) deadLetters() int { return sc.streamMsgs(sc.cfg.DLQStream) }

// logCount counts the workers' log lines containing s.
func (sc *scenario) logCount(s string) int {
	n := 0
	for _, p := range sc.workers {
		n += strings.Count(p.out.String(), s)
	}
	return n
}

// expectedChunks is the number of chunks the documents make.
func (sc *scenario) expectedChunks() int {
	sc.t.Helper()
	c, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		sc.t.Fatal(err)
	}
	n := 0
	for _, d := range sc.docs {
		out, _, err := c.Chunk(chunking.Document{Path: d.id, Content: d.content})
		if err != nil {
			sc.t.Fatal(err)
		}
		n += len(out)
	}
	return n
}

// readiness tallies a worker's /readyz answers.
type readiness struct {
	ok, notReady, failed int
	firstNotReady        time.Duration
	last                 int
}

func (r *readiness) sample(p *process, at time.Duration) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + p.health + "/readyz")
	if err != nil {
		r.failed++
		r.last = 0
		return
	}
	resp.Body.Close()
	r.last = resp.StatusCode
	switch resp.StatusCode {
	case http.StatusOK:
		r.ok++
	default:
		if r.notReady == 0 {
			r.firstNotReady = at
		}
		r.notReady++
	}
}

func (r readiness) String() string {
	s := fmt.Sprintf("/readyz 200 ×%d, 503 ×%d, no answer ×%d", r.ok, r.notReady, r.failed)
	if r.notReady > 0 {
		s += fmt.Sprintf("; first 503 after %v", r.firstNotReady.Round(time.Second))
	}
	return s
}

func allReady(ps []*process) bool {
	for _, p := range ps {
		if !p.ready() {
			return false
		}
	}
	return true
}

func (p *process) ready() bool {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + p.health + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startQdrantDouble builds and starts testdata/qdrantdouble, a process
// serving the Qdrant test double, and returns it with its address.
func startQdrantDouble(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t, "./worker/clustertest/testdata/qdrantdouble"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("qdrantdouble: %v", err)
	}
	return cmd, strings.TrimSpace(line)
}

// countPoints counts the points of the default collection.
func countPoints(t *testing.T, addr string) int {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "chunks", Exact: qdrant.PtrOf(true)})
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}
