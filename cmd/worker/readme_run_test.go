package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// TestREADMECommandsRun runs every `worker` line of the README as
// written, in a copy of the examples folder: local mode to its end;
// service mode against a test server (and the Qdrant double for
// CHUNKSTREAM_SINK=qdrant), until the worker pulls, then stopped. Each
// exits 0.
func TestREADMECommandsRun(t *testing.T) {
	cmds := testutil.ReadmeCommands(t, "worker")
	testutil.CopyExamples(t)
	for _, c := range cmds {
		ns := jstest.Start(t, t.TempDir(), -1)
		qd := qdranttest.Start(t)
		env := map[string]string{"NATS_URL": ns.ClientURL(), "CHUNKSTREAM_QDRANT_ADDR": qd.Addr(), "CHUNKSTREAM_METRICS_ADDR": "127.0.0.1:0"}
		for k, v := range c.Env {
			env[k] = v
		}
		lookup := tracingtest.Lookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		ctx, cancel := context.WithCancel(context.Background())
		var stderr testutil.SyncBuffer
		done := make(chan int, 1)
		go func() { done <- run(ctx, c.Args, &stderr, &stderr, lookup) }()
		local := len(c.Args) > 0 && c.Args[0] == "-local"
		if !local {
			_, js := jstest.Connect(t, ns.ClientURL())
			testutil.WaitFor(t, time.Minute, "the worker pulling: "+c.Line, func() bool { return pulling(ctx, js) })
			cancel()
		}
		if code := <-done; code != 0 {
			t.Errorf("%s\n= %d: %s", c.Line, code, stderr.String())
		}
		cancel()
	}
}

// pulling reports whether a worker's presence says it pulls.
func pulling(ctx context.Context, js jetstream.JetStream) bool {
	kv, err := js.KeyValue(ctx, "CHUNKSTREAM_DOCS")
	if err != nil {
		return false
	}
	keys, err := kv.ListKeysFiltered(ctx, messages.WorkerKeyPrefix+">")
	if err != nil {
		return false
	}
	defer func() { _ = keys.Stop() }()
	for key := range keys.Keys() {
		if e, err := kv.Get(ctx, key); err == nil {
			if p, err := messages.DecodeWorkerPresence(e.Value()); err == nil && p.Pulling(time.Now()) {
				return true
			}
		}
	}
	return false
}
