package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
)

// TestProducerWaitsForNATS: a producer started before any NATS server
// waits for one (-connect-timeout), then for INGEST, and sends once both
// are there; with no server it fails with an error naming the URL and the
// variables to check.
func TestProducerWaitsForNATS(t *testing.T) {
	dir := writeTree(t, map[string]string{"a.md": "# A"})
	port := testutil.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	stderr := &testutil.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"-connect-timeout", "2m", "-progress=false", dir}, nil,
			&bytes.Buffer{}, stderr, envOf(map[string]string{"NATS_URL": url}))
	}()
	testutil.WaitFor(t, 20*time.Second, "the producer to say it waits for NATS", func() (bool, string) {
		select {
		case code := <-done:
			t.Fatalf("producer exited with %d before a server started:\n%s", code, stderr.String())
		default:
		}
		return strings.Contains(stderr.String(), "waiting for NATS"), stderr.String()
	})
	jstest.Start(t, t.TempDir(), port)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	top, err := worker.Setup(context.Background(), js, worker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("producer exit = %d once the server started, want 0:\n%s", code, stderr.String())
	}
	if info, err := top.Ingest.Info(context.Background()); err != nil || info.State.Msgs != 1 {
		t.Errorf("INGEST holds %d requests (%v), want 1", info.State.Msgs, err)
	}

	// No server at all: a clear error once the time-out passes.
	none := fmt.Sprintf("nats://127.0.0.1:%d", testutil.FreePort(t))
	stderr = &testutil.SyncBuffer{}
	code := run(context.Background(), []string{"-connect-timeout", "300ms", "-progress=false", dir}, nil,
		&bytes.Buffer{}, stderr, envOf(map[string]string{"NATS_URL": none}))
	if code != 1 {
		t.Errorf("producer with no server exit = %d, want 1", code)
	}
	for _, want := range []string{"no NATS server answered at " + none, "NATS_URL", "CHUNKSTREAM_CONNECT_TIMEOUT"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("producer with no server: output does not say %q:\n%s", want, stderr.String())
		}
	}
}
