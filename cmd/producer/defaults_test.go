package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestDefaultsCommand: producer defaults shows the fleet's chunker
// defaults and the workers started with others; set replaces them (and
// says what they were), checked as a worker checks its own; usage errors
// exit 2 and change nothing.
func TestDefaultsCommand(t *testing.T) {
	e := newDLQEnv(t)
	if code, out, errOut := e.producer("defaults"); code != 0 || out != "fleet chunker defaults: none set (the first worker to start sets them)\n" {
		t.Errorf("defaults before any worker = %d, %q, %q", code, out, errOut)
	}
	e.startWorker() // the first worker sets the fleet's defaults: its own, markdown's
	testutil.WaitFor(t, 20*time.Second, "the first worker to set the fleet's defaults", func() bool {
		_, err := e.top.Docs.Get(context.Background(), messages.ChunkerDefaultsKey)
		return err == nil
	})
	e.cfg.Chunker, e.cfg.ChunkerOptions = "twostep", worker.ChunkerOptions{"max_chunk_size": 300}
	e.startWorker()
	var shown struct {
		Fleet *messages.ChunkerDefaults            `json:"fleet"`
		Own   map[string]*messages.ChunkerDefaults `json:"workers_with_other_own_defaults"`
	}
	testutil.WaitFor(t, 20*time.Second, "producer defaults -json to list the twostep worker", func() bool {
		code, out, _ := e.producer("defaults", "-json")
		if code != 0 || json.Unmarshal([]byte(out), &shown) != nil {
			return false
		}
		return len(shown.Own) == 1
	})
	for _, d := range shown.Own {
		if shown.Fleet == nil || shown.Fleet.Chunker != "markdown" || d.Chunker != "twostep" {
			t.Errorf("defaults -json: fleet %+v, own %+v; want markdown and twostep", shown.Fleet, d)
		}
	}
	code, out, _ := e.producer("defaults")
	if code != 0 || !strings.HasPrefix(out, "fleet chunker defaults: markdown {\"chunk_overlap\":128,\"max_char\":2048,\"min_char\":1024}\n  worker ") ||
		!strings.Contains(out, `was started with twostep {"add_headers":false,`) || !strings.HasSuffix(out, ": it follows the fleet's\n") {
		t.Errorf("defaults = %d\n%s", code, out)
	}

	for _, tc := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{"defaults", "set"}, 2, "defaults set needs -chunker NAME"},
		{[]string{"defaults", "set", "-chunker", "nope"}, 2, `unknown chunker "nope"`},
		{[]string{"defaults", "set", "-chunker", "twostep", "-max-char", "300"}, 2, "-max-char does not apply to chunker twostep"},
		{[]string{"defaults", "set", "-chunker", "twostep", "-options", `{"max_chunk_size":0}`}, 2, "max_chunk_size"},
		{[]string{"defaults", "now"}, 2, `unexpected arguments ["now"]`},
		{[]string{"defaults", "-chunker", "twostep"}, 2, "flag provided but not defined: -chunker"},
		{[]string{"defaults", "set", "-h"}, 0, "-max-chunk-size"},
	} {
		code, _, errOut := e.producer(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.text) {
			t.Errorf("producer %q = %d, %q; want %d and %q", tc.args, code, errOut, tc.code, tc.text)
		}
	}

	code, out, errOut := e.producer("defaults", "set", "-chunker", "twostep", "-options", `{"word_overlap":5}`, "-max-chunk-size", "300")
	if code != 0 || !strings.HasPrefix(out, `fleet chunker defaults: twostep {"add_headers":false,"headers_to_split_on":[1,2,3,4,5,6],"max_chunk_size":300,"merge_small_chunks":true,"word_overlap":5} (were markdown {"chunk_overlap":128,"max_char":2048,"min_char":1024})`) ||
		!strings.Contains(errOut, "every running worker follows them now") {
		t.Errorf("defaults set = %d\n%s\n%s", code, out, errOut)
	}
}

// startWorker runs a worker with e.cfg until the test ends.
func (e *dlqEnv) startWorker() {
	e.t.Helper()
	w, err := worker.New(e.nc, e.js, e.top, worker.Options{Config: e.cfg, Sink: subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes)})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Error(err)
		}
	})
}

// TestDefaultsSetBeforeAnyWorker: before any worker created the records
// bucket, set exits 1, saying so with one prefix.
func TestDefaultsSetBeforeAnyWorker(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"defaults", "set", "-chunker", "twostep"}, nil, &stdout, &stderr, envOf(map[string]string{"NATS_URL": ns.ClientURL()}))
	want := "producer: no bucket of document records yet (CHUNKSTREAM_DOCS): start a worker first (the first one sets the fleet's defaults from its own)\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("defaults set before any worker = %d\n%s\nwant 1 and\n%s", code, stderr.String(), want)
	}
}
