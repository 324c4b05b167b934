package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// TestEnvDefaultsMatch: the env defaults equal worker.DefaultConfig, and
// they validate.
func TestEnvDefaultsMatch(t *testing.T) {
	c, err := loadConfig(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := worker.DefaultConfig()
	if fmt.Sprintf("%+v", c.Config) != fmt.Sprintf("%+v", want) {
		t.Errorf("env defaults:\n %+v\nwant\n %+v", c.Config, want)
	}
	if c.NATS != natsconn.DefaultConfig() {
		t.Errorf("NATS env defaults = %+v, want %+v", c.NATS, natsconn.DefaultConfig())
	}
	if err := c.validate(nil); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	if fmt.Sprintf("%+v", c.Qdrant) != fmt.Sprintf("%+v", qdrantsink.DefaultConfig()) ||
		fmt.Sprintf("%+v", c.Embed) != fmt.Sprintf("%+v", embed.DefaultConfig()) {
		t.Errorf("sink env defaults: %+v %+v", c.Qdrant, c.Embed)
	}
}

// TestFlagBeatsEnv: environment variables are read, and a flag beats its
// variable.
func TestFlagBeatsEnv(t *testing.T) {
	envs := map[string]string{
		"NATS_URL":                    "nats://a:1",
		"CHUNKSTREAM_ACK_WAIT":        "45s",
		"CHUNKSTREAM_MAX_DELIVER":     "5",
		"CHUNKSTREAM_INGEST_SUBJECTS": "ingest.a.>,ingest.b.>",
		"CHUNKSTREAM_NATS_PASSWORD":   "secret",
		"CHUNKSTREAM_MAX_DOC_BYTES":   "1000",
	}
	lookup := func(k string) (string, bool) { v, ok := envs[k]; return v, ok }
	c, err := loadConfig(lookup)
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	bindFlags(fs, &c) // the chunker flags do not clash with the config flags
	if err := fs.Parse([]string{"-ack-wait", "2s", "-nats-url", "nats://b:2"}); err != nil {
		t.Fatal(err)
	}
	if c.AckWait != 2*time.Second || c.NATS.URL != "nats://b:2" {
		t.Errorf("flags did not win: AckWait=%v NATS URL=%s", c.AckWait, c.NATS.URL)
	}
	if c.MaxDeliver != 5 || c.NATS.Password != "secret" || c.MaxDocBytes != 1000 ||
		strings.Join(c.IngestSubjects, " ") != "ingest.a.> ingest.b.>" {
		t.Errorf("environment not read: %+v", c.Config)
	}
	if fs.Lookup("nats-password") != nil || fs.Lookup("nats-token") != nil || fs.Lookup("qdrant-api-key") != nil {
		t.Error("secrets must not be flags")
	}
	bad := func(k string) (string, bool) {
		if k == "CHUNKSTREAM_ACK_WAIT" {
			return "soon", true
		}
		return "", false
	}
	if _, err := loadConfig(bad); err == nil || !strings.Contains(err.Error(), "CHUNKSTREAM_ACK_WAIT") {
		t.Errorf("bad duration: err = %v, want it to name the variable", err)
	}
}

func TestValidateNamesField(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*worker.Config)
		name string
	}{
		{func(c *worker.Config) { c.AckWait = time.Millisecond }, "CHUNKSTREAM_ACK_WAIT"},
		{func(c *worker.Config) { c.MaxDeliver = 0 }, "CHUNKSTREAM_MAX_DELIVER"},
		{func(c *worker.Config) { c.Sink = "s3" }, "CHUNKSTREAM_SINK"},
		{func(c *worker.Config) { c.IngestStream = "a.b" }, "CHUNKSTREAM_INGEST_STREAM"},
		{func(c *worker.Config) { c.BackoffMax = 0 }, "CHUNKSTREAM_BACKOFF_BASE"},
		{func(c *worker.Config) { c.Replicas = 7 }, "CHUNKSTREAM_REPLICAS"},
		{func(c *worker.Config) { c.SetupTimeout = 0 }, "CHUNKSTREAM_SETUP_TIMEOUT"},
		{func(c *worker.Config) { c.ObjectsTTL = -time.Hour }, "CHUNKSTREAM_OBJECTS_TTL"},
		{func(c *worker.Config) { c.ChunksDuplicateWindow = 5 * time.Minute }, "CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW"},
	} {
		c := worker.DefaultConfig()
		tc.mut(&c)
		if err := envflag.Explain(c.Validate(), &c, nil); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("Validate() = %v, want an error naming %s", err, tc.name)
		}
	}
}

// TestServiceHealthcheck: a service-mode worker answers -healthcheck with
// 0 while running and 1 once stopped.
func TestServiceHealthcheck(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	port := testutil.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	lookup := tracingtest.Lookup(func(k string) (string, bool) {
		switch k {
		case "NATS_URL":
			return ns.ClientURL(), true
		case "CHUNKSTREAM_METRICS_ADDR":
			return addr, true
		case "CHUNKSTREAM_LOG_LEVEL":
			return "error", true
		}
		return "", false
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- run(ctx, nil, &bytes.Buffer{}, &bytes.Buffer{}, lookup) }()
	testutil.WaitFor(t, 20*time.Second, "healthy", func() bool {
		return run(context.Background(), []string{"-healthcheck"}, &bytes.Buffer{}, &bytes.Buffer{}, lookup) == 0
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("service exit = %d after cancel, want 0", code)
	}
	if code := run(context.Background(), []string{"-healthcheck"}, &bytes.Buffer{}, &bytes.Buffer{}, lookup); code != 1 {
		t.Errorf("healthcheck of a stopped worker = %d, want 1", code)
	}
}

// TestConfigErrorsSayTheirPrefixOnce: every line of a refused
// configuration starts with "worker: " once, then names the variable and
// its flag.
func TestConfigErrorsSayTheirPrefixOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-concurrency", "-1", "-backoff-base", "0"}, nil,
			"worker: config CHUNKSTREAM_CONCURRENCY (-concurrency): -1 is negative\n" +
				"worker: config CHUNKSTREAM_BACKOFF_BASE (-backoff-base): 0s with BackoffMax 1m0s, want 0 < base <= max\n"},
		{nil, map[string]string{"CHUNKSTREAM_ACK_WAIT": "1ms"}, "worker: config CHUNKSTREAM_ACK_WAIT (-ack-wait): 1ms, want at least 100ms\n"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, &bytes.Buffer{}, &stderr, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if code != 2 || stderr.String() != tc.want {
			t.Errorf("worker %q %v = %d\n%s\nwant 2 and\n%s", tc.args, tc.env, code, stderr.String(), tc.want)
		}
	}
}

// TestLocalRefusesASizeItWouldDeadLetter: local mode puts its chunker
// flags in every request, so a size the worker refuses (below
// CHUNKSTREAM_MIN_CHUNK_CHARS) is a usage error at start, not a run that
// dead-letters every document.
func TestLocalRefusesASizeItWouldDeadLetter(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\ntext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-local", dir, "-out", filepath.Join(t.TempDir(), "out.jsonl"), "-max-char", "20", "-min-char", "10", "-chunk-overlap", "0"},
		&bytes.Buffer{}, &stderr, func(string) (string, bool) { return "", false })
	if code != 2 || !strings.Contains(stderr.String(), "max_char 20 is below the smallest chunk size") || strings.Count(stderr.String(), "chunker markdown") != 1 {
		t.Errorf("worker -local -max-char 20 = %d\n%s\nwant 2, the size refused once", code, stderr.String())
	}
}
