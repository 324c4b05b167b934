package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestSettingsWithoutEffect: a setting that does nothing in the mode of
// the run is a usage error (status 2), before any connection.
func TestSettingsWithoutEffect(t *testing.T) {
	dir := writeTree(t, map[string]string{"a.md": "# A"})
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-stdin", "-force"}, nil, "-force has no effect with -stdin"},
		{[]string{"-stdin", "-chunker", "twostep"}, nil, "-chunker has no effect with -stdin"},
		{[]string{"-stdin", "-source", "wiki"}, nil, "-source has no effect with -stdin"},
		{[]string{"-stdin", "-max-char", "300"}, nil, "-max-char has no effect with -stdin"},
		{[]string{"-stdin", "-id-prefix", "kb/"}, nil, "-id-prefix has no effect with -stdin"},
		// A line names its own tenant (none: the untenanted document); a
		// -tenant or CHUNKSTREAM_TENANT that would not reach it is refused.
		{[]string{"-stdin", "-tenant", "acme"}, nil, "-tenant has no effect with -stdin"},
		{[]string{"-stdin"}, map[string]string{"CHUNKSTREAM_TENANT": "acme"}, "-tenant has no effect with -stdin"},
		{[]string{"-stdin"}, map[string]string{"CHUNKSTREAM_PRODUCER_RESEND_STALE": "true"}, "-resend-stale has no effect with -stdin"},
		{[]string{"-stdin"}, map[string]string{"CHUNKSTREAM_PRODUCER_CHUNKER": "twostep"}, "-chunker has no effect with -stdin"},
		{[]string{"-chunker", "email", "-ext", "mbox", dir}, nil, "-ext has no effect with -chunker email"},
		{[]string{"-chunker", "email", "-format", "eml", dir}, nil, "-format has no effect with -chunker email"},
		{[]string{"-dry-run", "-rate", "5", dir}, nil, "-rate has no effect with -dry-run"},
		{[]string{"-dry-run", "-json", dir}, nil, "-json has no effect with -dry-run"},
		{[]string{"-resend-stale", "-force", dir}, nil, "-force excludes -resend-stale"},
		{[]string{"-resend-stale", dir}, map[string]string{"CHUNKSTREAM_PRODUCER_DELETE_MISSING": "true"}, "-delete-missing excludes -resend-stale"},
	} {
		env := map[string]string{"NATS_URL": "nats://127.0.0.1:1", "CHUNKSTREAM_CONNECT_TIMEOUT": "10ms"}
		for k, v := range tc.env {
			env[k] = v
		}
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, strings.NewReader(""), &bytes.Buffer{}, &stderr, envOf(env))
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("producer %q with %v = %d, %q; want 2 and %q", tc.args, tc.env, code, stderr.String(), tc.want)
		}
	}
}

// TestRechunkCommands: through the command, a new chunker, options,
// source, collection or subject re-sends every document concerned, and
// after `producer defaults set` changes the fleet's defaults,
// -resend-stale sends exactly the documents processed under the old ones.
func TestRechunkCommands(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// process runs a worker with cfg until the INGEST stream is empty.
	process := func(cfg worker.Config) {
		t.Helper()
		w, err := worker.New(nc, js, top, worker.Options{Config: cfg, Sink: subjectsink.New(js, cfg.ChunksPrefix, 16)})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(rctx) }()
		defer func() {
			stop()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		testutil.WaitFor(t, time.Minute, "the worker to finish, under the fleet's defaults", func() bool {
			info, err := top.Ingest.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Msgs != 0 {
				return false
			}
			e, err := top.Docs.Get(ctx, messages.ChunkerDefaultsKey)
			if err != nil {
				return false
			}
			d, _ := messages.DecodeChunkerDefaults(e.Value())
			return d.Chunker == cfg.Chunker
		})
	}
	dir := writeTree(t, map[string]string{"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta", "c.mbox": testMbox})
	environ := envOf(map[string]string{"NATS_URL": ns.ClientURL(), "CHUNKSTREAM_PRODUCER_PROGRESS": "false", "CHUNKSTREAM_PRODUCER_EXT": "md,mbox"})
	producer := func(args ...string) string {
		t.Helper()
		var stderr bytes.Buffer
		if code := run(ctx, args, nil, &bytes.Buffer{}, &stderr, environ); code != 0 {
			t.Fatalf("producer %q = %d: %s", args, code, stderr.String())
		}
		return stderr.String()
	}
	steps := []struct {
		args []string
		cfg  func(*worker.Config) // the workers restart so, and the fleet's defaults are set to theirs
		want string
	}{
		{[]string{dir}, nil, "3 sent (0 deletes, 0 duplicates, 0 stale), 0 unchanged skipped"},
		{[]string{dir}, nil, "0 sent (0 deletes, 0 duplicates, 0 stale), 3 unchanged skipped"},
		{[]string{"-chunker", "twostep", "-ext", "md", dir}, nil, "2 sent (0 deletes, 0 duplicates, 2 stale), 0 unchanged skipped"},
		{[]string{"-chunker", "twostep", "-max-chunk-size", "100", "-ext", "md", dir}, nil, "2 sent (0 deletes, 0 duplicates, 2 stale), 0 unchanged skipped"},
		{[]string{"-chunker", "twostep", "-options", `{"max_chunk_size":100}`, "-ext", "md", dir}, nil, "0 sent (0 deletes, 0 duplicates, 0 stale), 2 unchanged skipped"},
		{[]string{"-source", "wiki", dir}, nil, "3 sent (0 deletes, 0 duplicates, 3 stale), 0 unchanged skipped"},
		{[]string{"-collection", "kb", dir}, nil, "3 sent (0 deletes, 0 duplicates, 3 stale), 0 unchanged skipped"},
		{[]string{"-subject", "ingest.kb", dir}, nil, "3 sent (0 deletes, 0 duplicates, 3 stale), 0 unchanged skipped"},
		{[]string{dir}, nil, "3 sent (0 deletes, 0 duplicates, 3 stale), 0 unchanged skipped"},
		// The workers' defaults change: the two Markdown files are stale,
		// the mailbox (the email chunker's) is not.
		{[]string{"-resend-stale", dir}, func(c *worker.Config) {
			c.Chunker, c.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
		}, "2 sent (0 deletes, 0 duplicates, 2 stale), 1 not stale skipped"},
		{[]string{"-resend-stale", dir}, nil, "0 sent (0 deletes, 0 duplicates, 0 stale), 3 not stale skipped"},
	}
	for _, st := range steps {
		if st.cfg != nil {
			st.cfg(&cfg)
			if out := producer("defaults", "set", "-chunker", "twostep", "-max-chunk-size", "300"); !strings.Contains(out, "every running worker follows them now") {
				t.Errorf("producer defaults set: %s", out)
			}
			process(cfg) // the new workers start first
		}
		if got := producer(st.args...); !strings.Contains(got, st.want) {
			t.Errorf("producer %q: %s, want %q", st.args, got, st.want)
		}
		process(cfg)
	}
}
