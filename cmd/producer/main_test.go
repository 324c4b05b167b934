package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

func TestProducer(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	defer ns.Shutdown()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	top, err := worker.Setup(ctx, js, worker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"a.md": "# A", "sub/b.mdx": "# B", ".hidden/c.md": "x", "notes.txt": "t"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := filepath.Join(dir, "notes.txt")
	var stderr bytes.Buffer
	lookup := func(k string) (string, bool) {
		if k == "NATS_URL" {
			return ns.ClientURL(), true
		}
		return "", false
	}
	if code := run(ctx, []string{"-subject", "ingest.test", dir, single}, &stderr, lookup); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "3 documents") {
		t.Errorf("summary = %q, want 3 documents", stderr.String())
	}
	info, _ := top.Ingest.Info(ctx)
	if info.State.Msgs != 3 {
		t.Fatalf("INGEST holds %d, want 3", info.State.Msgs)
	}
	ids := map[string]bool{}
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := top.Ingest.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil || req.Validate() != nil {
			t.Fatalf("request %d: %v", seq, err)
		}
		if m.Subject != "ingest.test" || !strings.HasPrefix(m.Header.Get(messages.HeaderMsgID), req.ID+"@"+messages.ContentVersion(req.Content)+"@") {
			t.Errorf("request %d: subject %s, msg id %s", seq, m.Subject, m.Header.Get(messages.HeaderMsgID))
		}
		ids[req.ID] = true
	}
	if !ids["a.md"] || !ids["sub/b.mdx"] || !ids[filepath.ToSlash(single)] {
		t.Errorf("document ids = %v", ids)
	}
	if code := run(ctx, []string{filepath.Join(dir, "missing")}, &stderr, lookup); code != 1 {
		t.Errorf("missing path: run = %d, want 1", code)
	}
	if code := run(ctx, nil, &stderr, lookup); code != 2 {
		t.Errorf("no path: run = %d, want 2", code)
	}
}
