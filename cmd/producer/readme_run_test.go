package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestREADMECommandsRun runs every `producer` line of the README as
// written, in order, in a copy of the examples folder, against a test
// server with a worker: each exits 0.
func TestREADMECommandsRun(t *testing.T) {
	cmds := testutil.ReadmeCommands(t, "producer")
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(nc, js, top, worker.Options{Config: cfg, Sink: subjectsink.New(js, cfg.ChunksPrefix, 16)})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	testutil.CopyExamples(t)
	for _, c := range cmds {
		env := map[string]string{"NATS_URL": ns.ClientURL()}
		for k, v := range c.Env {
			env[k] = v
		}
		var stdout, stderr bytes.Buffer
		if code := run(ctx, c.Args, nil, &stdout, &stderr, envOf(env)); code != 0 {
			t.Errorf("%s\n= %d: %s", c.Line, code, stderr.String())
		}
	}
}
