package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
)

// serverProcs is a cluster of nats-server processes on 127.0.0.1.
type serverProcs struct {
	procs []*process
	urls  []string
	mon   []string // monitoring addresses
}

// startServerCluster starts n clustered nats-server processes of bin with
// JetStream (file storage in t.TempDir()) and waits until each accepts
// connections and the JetStream meta group has a leader that sees every
// peer, so what follows starts on a fresh but formed cluster.
func startServerCluster(t *testing.T, bin string, n int) *serverProcs {
	t.Helper()
	ports := testutil.FreePorts(t, 3*n)
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]))
	}
	sp := &serverProcs{}
	for i := range n {
		args := []string{
			"-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", strconv.Itoa(ports[i]),
			"-n", fmt.Sprintf("n%d", i+1), "--cluster_name", "chunkstream-startup",
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]), "--routes", strings.Join(routes, ","),
			"-m", strconv.Itoa(ports[2*n+i]),
		}
		sp.procs = append(sp.procs, startCommand(t, bin, args, nil))
		sp.urls = append(sp.urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
		sp.mon = append(sp.mon, fmt.Sprintf("127.0.0.1:%d", ports[2*n+i]))
	}
	t.Cleanup(func() {
		for _, p := range sp.procs {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range sp.procs {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				p.cmd.Process.Kill()
			}
		}
	})
	testutil.WaitFor(t, 60*time.Second, "nats-server processes and their meta group", func() (bool, string) {
		state := "no meta leader"
		for i, addr := range sp.mon {
			select {
			case <-sp.procs[i].done:
				t.Fatalf("nats-server n%d exited: %v\n%s", i+1, sp.procs[i].exit, sp.procs[i].out.String())
			default:
			}
			ok, s := metaFormed(addr, fmt.Sprintf("n%d", i+1), n)
			if ok {
				return true, ""
			}
			if s != "" {
				state = s
			}
		}
		return false, state
	})
	return sp
}

// metaFormed reports whether the server at monAddr, named name, leads
// the JetStream meta group and sees its n-1 peers current; only the
// leader's view of its peers is up to date. The state says why not, empty
// when the server is simply not the leader.
func metaFormed(monAddr, name string, n int) (bool, string) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + monAddr + "/jsz")
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var jsz struct {
		Meta *struct {
			Leader   string `json:"leader"`
			Replicas []struct {
				Current bool `json:"current"`
				Offline bool `json:"offline"`
			} `json:"replicas"`
		} `json:"meta_cluster"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jsz); err != nil {
		return false, err.Error()
	}
	if jsz.Meta == nil || jsz.Meta.Leader != name {
		return false, ""
	}
	current := 0
	for _, r := range jsz.Meta.Replicas {
		if r.Current && !r.Offline {
			current++
		}
	}
	if current < n-1 {
		return false, fmt.Sprintf("meta leader %s sees %d of %d peers current", name, current, n-1)
	}
	return true, ""
}

// TestWorkersStartTogetherOnFreshR3Cluster starts eight worker processes
// at once against a fresh three-node cluster of nats-server processes with
// CHUNKSTREAM_REPLICAS=3 (what the production overlay does): every one
// must become ready (its -healthcheck passes), and the topology must be
// at R3. The in-process cluster does not show the races this guards
// against (a stream update arriving while a clustered create of the same
// stream is in flight goes unanswered; the first read of the records
// bucket right after its creation finding no responders while its leader
// is elected), so real processes are used.
func TestWorkersStartTogetherOnFreshR3Cluster(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	natsBin := testutil.Binary(t, testutil.NATSServer)
	workerBin := testutil.Binary(t, "./cmd/worker")
	sp := startServerCluster(t, natsBin, 3)
	url := strings.Join(sp.urls, ",")

	const workers = 8
	const deadline = 2 * time.Minute
	start := time.Now()
	var procs []*process
	for _, mport := range testutil.FreePorts(t, workers) {
		procs = append(procs, startCommand(t, workerBin, nil, map[string]string{
			"NATS_URL":                 url,
			"CHUNKSTREAM_REPLICAS":     "3",
			"CHUNKSTREAM_METRICS_ADDR": fmt.Sprintf("127.0.0.1:%d", mport),
			"CHUNKSTREAM_LOG_LEVEL":    "info",
			"CHUNKSTREAM_CONCURRENCY":  "1",
		}))
	}
	var wg sync.WaitGroup
	readyAfter := make([]time.Duration, workers)
	failed := make([]string, workers)
	for i, p := range procs {
		wg.Go(func() {
			end := start.Add(deadline)
			for time.Now().Before(end) {
				select {
				case <-p.done:
					failed[i] = fmt.Sprintf("worker %d exited (%v) after %v:\n%s", i+1, p.exit, time.Since(start).Round(time.Millisecond), p.out.String())
					return
				default:
				}
				if ok, _ := p.healthy(); ok {
					readyAfter[i] = time.Since(start)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			failed[i] = fmt.Sprintf("worker %d not ready after %v:\n%s", i+1, deadline, p.out.String())
		})
	}
	wg.Wait()
	for _, f := range failed {
		if f != "" {
			t.Error(f)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d workers ready on a fresh R3 cluster after %v (each: %v)", workers, time.Since(start).Round(time.Millisecond), readyAfter)

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := worker.DefaultConfig()
	for _, name := range []string{cfg.IngestStream, cfg.ChunksStream, cfg.DLQStream, "KV_" + cfg.DocsBucket, "OBJ_" + cfg.ObjectsBucket} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Errorf("stream %s: %v", name, err)
			continue
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}
	s, err := js.Stream(ctx, cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Consumer(ctx, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.CachedInfo().Config.Replicas; r != 3 {
		t.Errorf("consumer has %d replicas, want 3", r)
	}
}

// TestEnsureConvergesOnFreshR3Cluster runs three topology.Ensure at once,
// each on its own connection, against a fresh three-node in-process
// cluster at R3: all must succeed and leave every stream, bucket and the
// consumer at R3. Run again, Ensure changes nothing; with one setting
// changed, it updates that stream.
func TestEnsureConvergesOnFreshR3Cluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	c := newCluster(t, 3)
	cfg := topology.DefaultConfig()
	cfg.Replicas = 3
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const n = 3
	var jss []jetstream.JetStream
	for range n {
		_, js := c.connect(t)
		jss = append(jss, js)
	}
	start := time.Now()
	go1 := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, js := range jss {
		wg.Go(func() {
			<-go1
			_, errs[i] = topology.Ensure(ctx, js, cfg)
		})
	}
	close(go1)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Ensure %d of %d started at once: %v", i+1, n, err)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d concurrent Ensure on a fresh R3 cluster done after %v", n, time.Since(start).Round(time.Millisecond))

	nc, js := c.connect(t)
	for _, name := range []string{cfg.IngestStream, cfg.ChunksStream, cfg.DLQStream, "KV_" + cfg.DocsBucket, "OBJ_" + cfg.ObjectsBucket} {
		testutil.WaitFor(t, 30*time.Second, "stream "+name+" current at R3", func() (bool, string) { return streamCurrent(ctx, js, name, 3) })
	}
	s, err := js.Stream(ctx, cfg.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := s.Consumer(ctx, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if got := cons.CachedInfo().Config; got.Replicas != 3 || got.AckWait != cfg.AckWait || got.MaxDeliver != -1 {
		t.Errorf("consumer = %+v, want R3 with the configured AckWait and MaxDeliver unlimited (the workers keep the limit)", got)
	}

	writes := jstest.WatchAPIWrites(t, nc)
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatalf("Ensure on the existing topology: %v", err)
	}
	if got := writes(); len(got) != 0 {
		t.Errorf("Ensure on the existing topology wrote %q, want nothing", got)
	}
	cfg.DuplicateWindow = 3 * time.Minute
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatalf("Ensure with a changed duplicate window: %v", err)
	}
	if got := writes(); len(got) != 1 || got[0] != "$JS.API.STREAM.UPDATE."+cfg.IngestStream {
		t.Errorf("Ensure with a changed duplicate window wrote %q, want one update of %s", got, cfg.IngestStream)
	}
	if info, err := s.Info(ctx); err != nil || info.Config.Duplicates != 3*time.Minute || info.Config.Replicas != 3 {
		t.Errorf("INGEST after the update: %+v, %v; want a 3m window at R3", info.Config, err)
	}
}
