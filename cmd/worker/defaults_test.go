package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
)

// longDoc is one section of n paragraphs of 100 words: a few chunks under
// twostep's default budget of 512 words, more under smaller ones.
func longDoc(n int) []byte {
	var b strings.Builder
	b.WriteString("# Settings\n\n")
	for p := range n {
		for w := range 100 {
			fmt.Fprintf(&b, "w%d.%d ", p, w)
		}
		b.WriteString("ends here.\n\n")
	}
	return []byte(b.String())
}

// hashesOf chunks content with the chunker name and raw options.
func hashesOf(t *testing.T, id string, content []byte, name string, opts map[string]any) []string {
	t.Helper()
	c, err := registry.Default().NewChunker(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: id, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, ch := range chunks {
		hs = append(hs, ch.Hash())
	}
	return hs
}

// TestServiceChunkerDefaults: a service worker's -chunker and chunker
// flags (or their variables) are the defaults of requests that name
// none; a request's own chunker and options win; the record holds the
// fingerprint of the settings used, and the defaults are advertised.
func TestServiceChunkerDefaults(t *testing.T) {
	content := longDoc(8)
	byDefault := hashesOf(t, "a.md", content, "twostep", nil)
	with300 := hashesOf(t, "a.md", content, "twostep", map[string]any{"max_chunk_size": 300})
	with100 := hashesOf(t, "a.md", content, "twostep", map[string]any{"max_chunk_size": 100})
	markdown := hashesOf(t, "a.md", content, "markdown", nil)
	if slices.Equal(byDefault, with300) || slices.Equal(with300, with100) || slices.Equal(with300, markdown) {
		t.Fatalf("test document does not tell the settings apart: %d, %d, %d, %d chunks", len(byDefault), len(with300), len(with100), len(markdown))
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"flags", []string{"-chunker", "twostep", "-max-chunk-size", "300"}, nil},
		{"variables", nil, map[string]string{"CHUNKSTREAM_CHUNKER": "twostep", "CHUNKSTREAM_CHUNKER_OPTIONS": `{"max_chunk_size": 300}`}},
		{"flag beats the options variable", []string{"-max-chunk-size", "300"},
			map[string]string{"CHUNKSTREAM_CHUNKER": "twostep", "CHUNKSTREAM_CHUNKER_OPTIONS": `{"max_chunk_size": 40}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := jstest.Start(t, t.TempDir(), -1)
			env := map[string]string{"NATS_URL": ns.ClientURL(), "CHUNKSTREAM_METRICS_ADDR": "127.0.0.1:0", "CHUNKSTREAM_LOG_LEVEL": "error"}
			for k, v := range tc.env {
				env[k] = v
			}
			lookup := tracingtest.Lookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			var stderr testutil.SyncBuffer
			go func() { done <- run(ctx, tc.args, &bytes.Buffer{}, &stderr, lookup) }()
			defer func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("worker exit %d: %s", code, stderr.String())
				}
			}()
			_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
			var kv jetstream.KeyValue
			testutil.WaitFor(t, 20*time.Second, "defaults advertised", func() bool {
				var err error
				if kv, err = js.KeyValue(ctx, "CHUNKSTREAM_DOCS"); err != nil {
					return false
				}
				_, err = kv.Get(ctx, messages.ChunkerDefaultsKey)
				return err == nil
			})
			e, _ := kv.Get(ctx, messages.ChunkerDefaultsKey)
			adv, err := messages.DecodeChunkerDefaults(e.Value())
			if err != nil || adv.Chunker != "twostep" || fmt.Sprint(adv.Options["max_chunk_size"]) != "300" || len(adv.Options) != 6 {
				t.Errorf("advertised %s (%v), want twostep with every option resolved, max_chunk_size 300", e.Value(), err)
			}
			reqs := []messages.IngestRequest{
				{ID: "none.md"},
				{ID: "own-options.md", Options: map[string]any{"max_chunk_size": 100}},
				{ID: "own-chunker.md", Chunker: "markdown"},
			}
			for _, r := range reqs {
				r.V, r.Content = messages.Version, content
				data, err := messages.EncodeIngest(&r, "")
				if err != nil {
					t.Fatal(err)
				}
				m := nats.NewMsg("ingest.docs")
				m.Data = data
				if _, err := js.PublishMsg(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			testutil.WaitFor(t, 30*time.Second, "requests processed", func() bool {
				for _, r := range reqs {
					e, err := kv.Get(ctx, messages.DocRecordKey(r.ID))
					if err != nil {
						return false
					}
					if rec, _ := messages.DecodeDocRecord(e.Value()); rec.State != messages.StateDone {
						return false
					}
				}
				return true
			})
			got := map[string][]string{}
			for _, rec := range streamRecords(t, js, "CHUNKS") {
				got[rec.DocID] = append(got[rec.DocID], rec.Hash)
			}
			for id, want := range map[string][]string{
				"none.md":        hashesOf(t, "none.md", content, "twostep", map[string]any{"max_chunk_size": 300}),
				"own-options.md": hashesOf(t, "own-options.md", content, "twostep", map[string]any{"max_chunk_size": 100}),
				"own-chunker.md": hashesOf(t, "own-chunker.md", content, "markdown", nil),
			} {
				if !slices.Equal(got[id], want) {
					t.Errorf("%s: %d chunks %v, want %d %v", id, len(got[id]), got[id], len(want), want)
				}
			}
			// The record holds what was used.
			e, err = kv.Get(ctx, messages.DocRecordKey("none.md"))
			if err != nil {
				t.Fatal(err)
			}
			rec, _ := messages.DecodeDocRecord(e.Value())
			opts, _ := registry.Default().Resolve("twostep", map[string]any{"max_chunk_size": 300})
			want, _ := messages.Settings{Chunker: "twostep", Options: opts, Subject: "ingest.docs"}.Fingerprint()
			if rec.Fingerprint != want || rec.Chunks != len(with300) {
				t.Errorf("record %+v, want fingerprint %s and %d chunks", rec, want, len(with300))
			}
		})
	}
}

// TestStartupErrors: bad chunker settings stop the worker at start
// (status 2) with an error naming the option or variable, before any
// connection.
func TestStartupErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-chunker", "twostep", "-max-char", "300"}, nil, "-max-char does not apply to chunker twostep"},
		{[]string{"-chunker", "twostep", "-max-chunk-size", "many"}, nil, `max_chunk_size: want an integer, got the string "many"`},
		{[]string{"-chunker", "nope"}, nil, `unknown chunker "nope"`},
		{[]string{"-chunker-options", `{"max_chunk_size":300}`}, nil, `option "max_chunk_size" belongs to chunker twostep, not markdown`},
		{nil, map[string]string{"CHUNKSTREAM_CHUNKER": "twostep", "CHUNKSTREAM_CHUNKER_OPTIONS": `{"max_chunk_size":0}`}, "CHUNKSTREAM_CHUNKER_OPTIONS"},
		{nil, map[string]string{"CHUNKSTREAM_CHUNKER_OPTIONS": `[1]`}, "CHUNKSTREAM_CHUNKER_OPTIONS"},
		{nil, map[string]string{"CHUNKSTREAM_CHUNKER_OPTIONS": `{"max_char":"x"}`}, `max_char: want an integer, got the string "x"`},
	} {
		lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, &bytes.Buffer{}, &stderr, lookup)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("worker %q with %v = %d, %q; want 2 and an error containing %q", tc.args, tc.env, code, stderr.String(), tc.want)
		}
	}
}

// TestFlagsWithoutEffect: a flag that does nothing in the mode chosen is
// a usage error, never accepted and ignored.
func TestFlagsWithoutEffect(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "x.jsonl"}, "-out has no effect without -local"},
		{[]string{"-workers", "2"}, "-workers has no effect without -local"},
		{[]string{"-no-progress"}, "-no-progress has no effect without -local"},
		{[]string{"-local", dir, "-out", "x.jsonl", "-nats-url", "nats://x:4222"}, "-nats-url has no effect in local mode"},
		{[]string{"-local", dir, "-out", "x.jsonl", "-metrics-addr", ":9"}, "-metrics-addr has no effect in local mode"},
		{[]string{"-local", dir, "-out", "x.jsonl", "-sink", "qdrant"}, "-sink has no effect in local mode"},
		{[]string{"-local", dir, "-out", "x.jsonl", "-qdrant-addr", "q:6334"}, "-qdrant-addr has no effect in local mode"},
		{[]string{"-local", dir, "-out", "x.jsonl", "-workers", "2", "-concurrency", "4"}, "-concurrency has no effect with -workers"},
		{[]string{"-healthcheck", "-ack-wait", "1s"}, "-ack-wait has no effect with -healthcheck"},
		{[]string{"-qdrant-collection", "kb"}, "-qdrant-collection has no effect with -sink subject"},
		{[]string{"-embed-url", "http://e"}, "-embed-url has no effect with -sink subject"},
		{[]string{"-sink", "qdrant", "-record-format", "json"}, "-record-format has no effect with -sink qdrant"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, &bytes.Buffer{}, &stderr, noEnv)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("worker %q = %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestMetricsAddrInUse: two workers on one host with the same metrics
// address: the second stops at once with an error naming the variable
// and the flag.
func TestMetricsAddrInUse(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(testutil.FreePort(t)))
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
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, &bytes.Buffer{}, &bytes.Buffer{}, lookup) }()
	defer func() { cancel(); <-done }()
	testutil.WaitFor(t, 20*time.Second, "first worker healthy", func() bool {
		return run(context.Background(), []string{"-healthcheck"}, &bytes.Buffer{}, &bytes.Buffer{}, lookup) == 0
	})
	var stderr bytes.Buffer
	code := run(context.Background(), nil, &bytes.Buffer{}, &stderr, lookup)
	for _, want := range []string{"CHUNKSTREAM_METRICS_ADDR", "-metrics-addr", addr, "another worker"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("second worker's error %q does not name %q", stderr.String(), want)
		}
	}
	if code != 1 {
		t.Errorf("second worker exit %d, want 1", code)
	}
}
