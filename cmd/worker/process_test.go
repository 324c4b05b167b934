package main

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
)

// workerProc is a worker process built from this command.
type workerProc struct {
	cmd    *exec.Cmd
	stderr *testutil.SyncBuffer
	done   chan error
}

// processEnv is the environment of the worker processes of these tests.
func processEnv(url string) []string {
	return append(os.Environ(),
		"NATS_URL="+url,
		"CHUNKSTREAM_ACK_WAIT=1s",
		"CHUNKSTREAM_CONCURRENCY=2",
		"CHUNKSTREAM_DRAIN_TIMEOUT=5s",
		"CHUNKSTREAM_LOG_LEVEL=warn",
	)
}

func startWorkerProc(t *testing.T, bin, url string) *workerProc {
	t.Helper()
	return startWorker(t, bin, processEnv(url), "-metrics-addr", "127.0.0.1:0")
}

// startWorker starts the worker binary bin with the environment env and
// the arguments args; it is killed when the test ends, and its stderr
// logged when the test failed.
func startWorker(t *testing.T, bin string, env []string, args ...string) *workerProc {
	t.Helper()
	p := &workerProc{stderr: &testutil.SyncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("worker stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// testWorkerConfig matches processEnv, for the test's own Setup.
func testWorkerConfig() worker.Config {
	c := worker.DefaultConfig()
	c.AckWait = time.Second
	return c
}

// TestKillWorker: a worker process SIGKILLed at several points mid-run
// and restarted loses nothing and stores no chunk twice.
func TestKillWorker(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	bin := testutil.Binary(t, "./cmd/worker")
	ns := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	if _, err := worker.Setup(context.Background(), js, testWorkerConfig()); err != nil {
		t.Fatal(err)
	}
	docs := markdownDocs(400)
	publishDocs(t, js, docs)
	var total uint64
	for _, killAt := range []uint64{1, 300, 900} {
		p := startWorkerProc(t, bin, ns.ClientURL())
		testutil.WaitFor(t, 60*time.Second, "chunk records", func() bool {
			return streamState(t, js, "CHUNKS").Msgs >= killAt || streamState(t, js, "INGEST").Msgs == 0
		})
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.done
		total = streamState(t, js, "CHUNKS").Msgs
		t.Logf("killed at %d chunk records, %d requests left", total, streamState(t, js, "INGEST").Msgs)
	}
	p := startWorkerProc(t, bin, ns.ClientURL())
	testutil.WaitFor(t, 120*time.Second, "INGEST drained", func() bool { return streamState(t, js, "INGEST").Msgs == 0 })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p.done; err != nil {
		t.Errorf("worker exit after SIGTERM: %v", err)
	}
	checkComplete(t, streamRecords(t, js, "CHUNKS"), docs)
	if n := streamState(t, js, "DLQ").Msgs; n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
}

// TestSigterm: SIGTERM during work: exit 0 within the grace period, and
// nothing is lost (the next worker finishes the rest).
func TestSigterm(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	bin := testutil.Binary(t, "./cmd/worker")
	ns := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	if _, err := worker.Setup(context.Background(), js, testWorkerConfig()); err != nil {
		t.Fatal(err)
	}
	docs := markdownDocs(300)
	publishDocs(t, js, docs)
	p := startWorkerProc(t, bin, ns.ClientURL())
	testutil.WaitFor(t, 60*time.Second, "work under way", func() bool { return streamState(t, js, "CHUNKS").Msgs >= 50 })
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("worker still running 10s after SIGTERM (drain timeout 5s)")
	}
	t.Logf("stopped in %v; %d requests left", time.Since(start), streamState(t, js, "INGEST").Msgs)
	p2 := startWorkerProc(t, bin, ns.ClientURL())
	testutil.WaitFor(t, 120*time.Second, "INGEST drained", func() bool { return streamState(t, js, "INGEST").Msgs == 0 })
	_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	<-p2.done
	checkComplete(t, streamRecords(t, js, "CHUNKS"), docs)
}
