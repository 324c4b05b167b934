package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
)

// TestOutageFigures measures the producer through real outages, with real
// processes, run only with CHUNKSTREAM_TEST_PROCESSES=1 and
// CHUNKSTREAM_TEST_OUTAGES=1 (it takes minutes):
//
//	CHUNKSTREAM_TEST_PROCESSES=1 CHUNKSTREAM_TEST_OUTAGES=1 go test -run TestOutageFigures -v -timeout 60m ./cmd/producer
//
// It builds nats-server (the go.mod version) and this command (or takes
// CHUNKSTREAM_TEST_NATS_BIN and CHUNKSTREAM_TEST_PRODUCER_BIN), writes
// 1,000 Markdown files and publishes them at full rate:
//
//   - single: one server process; undisturbed, then with the server
//     killed (SIGKILL) when a third of the documents are stored and
//     restarted on the same store 2 s later;
//   - cluster: three clustered server processes, INGEST at R3;
//     undisturbed, then with the INGEST leader killed when a third are
//     stored (an election; the node stays down).
//
// Each disturbed run must store every document exactly once (INGEST holds
// 1,000 requests, the summary says 1,000 sent, 0 failed); the figures
// (elapsed against the median undisturbed run of the same scenario, in
// the same session) are logged. CHUNKSTREAM_OUTAGE_BASELINE names a second
// producer binary (an older build) run through the same scenarios, after
// this one, for a before/after comparison.
func TestOutageFigures(t *testing.T) {
	testutil.OptIn(t, testutil.Processes, testutil.Outages)
	natsBin := testutil.Binary(t, testutil.NATSServer)
	bins := []struct{ name, path string }{{"this build", testutil.Binary(t, "./cmd/producer")}}
	if b := os.Getenv("CHUNKSTREAM_OUTAGE_BASELINE"); b != "" {
		bins = append(bins, struct{ name, path string }{"baseline", b})
	}
	const n = 1000
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%20), fmt.Sprintf("f%04d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# Document %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("Sentence %d of a paragraph worth chunking. ", i), 40))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var report []string
	for _, bin := range bins {
		t.Run("single/"+bin.name, func(t *testing.T) {
			c := startProcCluster(t, natsBin, 1)
			report = append(report, outageScenario(t, c, bin.name, bin.path, dir, n, "single node, server killed for 2 s", func(c *procCluster) string {
				start := time.Now()
				c.kill(0)
				time.Sleep(2 * time.Second)
				c.start(0)
				return fmt.Sprintf("server back after %v", time.Since(start).Round(time.Millisecond))
			})...)
		})
		t.Run("cluster/"+bin.name, func(t *testing.T) {
			c := startProcCluster(t, natsBin, 3)
			report = append(report, outageScenario(t, c, bin.name, bin.path, dir, n, "3-node cluster, INGEST leader killed", func(c *procCluster) string {
				old := c.ingestLeader(t)
				start := time.Now()
				c.kill(old)
				leader := c.waitNewLeader(t, old)
				return fmt.Sprintf("new INGEST leader %s after %v", leader, time.Since(start).Round(time.Millisecond))
			})...)
		})
	}
	for _, l := range report {
		t.Log(l)
	}
}

// outageScenario runs the producer three times undisturbed, then once with
// disturb called when a third of the documents are stored; it checks
// that every run stored each document once and returns the figures.
func outageScenario(t *testing.T, c *procCluster, label, bin, dir string, n int, what string, disturb func(*procCluster) string) []string {
	t.Helper()
	nc, js := c.connect(t)
	defer nc.Close()
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.Replicas = len(c.nodes)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := worker.Setup(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	stored := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, cfg.IngestStream)
		if err != nil {
			return -1
		}
		info, err := s.Info(ctx)
		if err != nil {
			return -1
		}
		return int(info.State.Msgs)
	}
	purge := func() {
		deadline := time.Now().Add(time.Minute)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s, err := js.Stream(ctx, cfg.IngestStream)
			if err == nil {
				err = s.Purge(ctx)
			}
			cancel()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("purge INGEST: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	run := func(disturb func()) (time.Duration, string) {
		purge()
		cmd := exec.Command(bin, "-s", c.urls(), "-progress=false", "-force", dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if disturb != nil {
			for stored() < n/3 {
				select {
				case err := <-exited:
					t.Fatalf("producer exited (%v) before a third was stored: %s", err, stderr.String())
				case <-time.After(2 * time.Millisecond):
				}
			}
			disturb()
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(20 * time.Minute):
			_ = cmd.Process.Kill()
			t.Fatalf("producer still running after 20 minutes: %s", stderr.String())
		}
		elapsed := time.Since(start)
		summary := lastLine(stderr.String())
		// This build must store every document once; a baseline's
		// failures are figures to report.
		strict := label == "this build" || disturb == nil
		if err != nil || !strings.Contains(summary, fmt.Sprintf("%d documents: %d sent", n, n)) || !strings.Contains(summary, " 0 failed") {
			if strict {
				t.Fatalf("producer: %v; stderr:\n%s", err, stderr.String())
			}
			summary = fmt.Sprintf("exit %v: %s", err, summary)
		}
		deadline := time.Now().Add(30 * time.Second)
		got := stored()
		for ; got != n && time.Now().Before(deadline); got = stored() {
			time.Sleep(200 * time.Millisecond)
		}
		if got != n {
			if strict {
				t.Fatalf("INGEST holds %d requests after the run, want %d", got, n)
			}
			summary += fmt.Sprintf("\n    INGEST holds %d requests, want %d", got, n)
		}
		return elapsed, summary
	}
	var quiet []time.Duration
	for range 3 {
		d, _ := run(nil)
		quiet = append(quiet, d)
	}
	slices.Sort(quiet)
	base := quiet[1]
	var event string
	d, summary := run(func() { event = disturb(c) })
	return []string{fmt.Sprintf("%s, %s (%s): %d docs in %v, undisturbed median %v (runs %v): ratio %.1f, %v over\n    %s",
		label, what, event, n, d.Round(time.Millisecond), base.Round(time.Millisecond), quiet,
		d.Seconds()/base.Seconds(), (d - base).Round(time.Millisecond), summary)}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// procCluster is n nats-server processes, clustered when n > 1, each on a
// fixed port and store folder so a node can be killed and restarted.
type procCluster struct {
	t     *testing.T
	bin   string
	nodes []*procNode
}

type procNode struct {
	name string
	args []string
	port int
	cmd  *exec.Cmd
}

func freeTCPPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		ns := testutil.FreePort(t)
		if !slices.Contains(ports, ns) {
			ports = append(ports, ns)
		}
	}
	return ports
}

func startProcCluster(t *testing.T, bin string, n int) *procCluster {
	t.Helper()
	ports := freeTCPPorts(t, 2*n)
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]))
	}
	c := &procCluster{t: t, bin: bin}
	for i := range n {
		nd := &procNode{name: fmt.Sprintf("n%d", i+1), port: ports[i]}
		nd.args = []string{"-n", nd.name, "-a", "127.0.0.1", "-p", strconv.Itoa(nd.port), "-js", "-sd", t.TempDir()}
		if n > 1 {
			nd.args = append(nd.args, "--cluster_name", "outage", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]),
				"--routes", strings.Join(routes, ","))
		}
		c.nodes = append(c.nodes, nd)
	}
	for i := range c.nodes {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.kill(i)
		}
	})
	// Wait until JetStream answers (a meta leader, in a cluster).
	nc, js := c.connect(t)
	defer nc.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *procCluster) start(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.cmd = exec.Command(c.bin, nd.args...)
	if err := nd.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", nd.port), nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("server %s not ready: %v", nd.name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL to node i and waits for it to exit.
func (c *procCluster) kill(i int) {
	nd := c.nodes[i]
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGKILL)
	_ = nd.cmd.Wait()
	nd.cmd = nil
}

func (c *procCluster) urls() string {
	var us []string
	for _, nd := range c.nodes {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", nd.port))
	}
	return strings.Join(us, ",")
}

func (c *procCluster) connect(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(c.urls(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// waitNewLeader waits until a node other than old (killed) reports an
// INGEST leader and returns its name.
func (c *procCluster) waitNewLeader(t *testing.T, old int) string {
	t.Helper()
	var url string
	for i, nd := range c.nodes {
		if i != old {
			url = fmt.Sprintf("nats://127.0.0.1:%d", nd.port)
			break
		}
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s, err := js.Stream(ctx, worker.DefaultConfig().IngestStream)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = s.Info(ctx); err == nil && info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != c.nodes[old].name {
				cancel()
				return info.Cluster.Leader
			}
		}
		cancel()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no new INGEST leader in 2 minutes")
	return ""
}

// ingestLeader returns the index of the node leading INGEST.
func (c *procCluster) ingestLeader(t *testing.T) int {
	t.Helper()
	nc, js := c.connect(t)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, worker.DefaultConfig().IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("INGEST cluster info: %v", err)
	}
	for i, nd := range c.nodes {
		if nd.name == info.Cluster.Leader {
			return i
		}
	}
	t.Fatalf("INGEST leader %q is none of the nodes", info.Cluster.Leader)
	return -1
}
