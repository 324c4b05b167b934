package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
)

// TestServiceWaitsForNATS: a worker started before any NATS server waits
// for one (-connect-timeout) and becomes ready once it starts; with none
// it fails with an error naming the URL and the variables to check.
func TestServiceWaitsForNATS(t *testing.T) {
	port := testutil.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(testutil.FreePort(t)))
	lookup := tracingtest.Lookup(func(k string) (string, bool) {
		switch k {
		case "NATS_URL":
			return url, true
		case "CHUNKSTREAM_METRICS_ADDR":
			return addr, true
		case "CHUNKSTREAM_LOG_LEVEL":
			return "info", true
		}
		return "", false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testutil.SyncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-connect-timeout", "2m"}, &bytes.Buffer{}, stderr, lookup) }()
	testutil.WaitFor(t, 20*time.Second, "the worker to wait for NATS", func() bool {
		select {
		case code := <-done:
			t.Fatalf("worker exited with %d before a server started:\n%s", code, stderr.String())
		default:
		}
		return strings.Contains(stderr.String(), "waiting for NATS")
	})
	jstest.Start(t, t.TempDir(), port)
	testutil.WaitFor(t, 60*time.Second, "the worker to be ready", func() bool {
		return run(context.Background(), []string{"-healthcheck"}, &bytes.Buffer{}, &bytes.Buffer{}, lookup) == 0
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("worker exit = %d after cancel, want 0:\n%s", code, stderr.String())
	}

	// No server at all: a clear error once the time-out passes.
	stderr = &testutil.SyncBuffer{}
	none := fmt.Sprintf("nats://127.0.0.1:%d", testutil.FreePort(t))
	code := run(context.Background(), []string{"-connect-timeout", "300ms", "-nats-url", none}, &bytes.Buffer{}, stderr, lookup)
	if code != 1 {
		t.Errorf("worker with no server exit = %d, want 1", code)
	}
	for _, want := range []string{"no NATS server answered at " + none, "NATS_URL", "CHUNKSTREAM_CONNECT_TIMEOUT"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("worker with no server: output does not say %q:\n%s", want, stderr.String())
		}
	}
}
