package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/messages"
)

const testMbox = `From alice@example.org Mon Jan  1 10:00:00 2024
Message-ID: <a@example.org>
From: Alice <alice@example.org>
Subject: Question
Date: Mon, 1 Jan 2024 10:00:00 +0000

Is this on?

From bob@example.org Mon Jan  1 11:00:00 2024
Message-ID: <b@example.org>
In-Reply-To: <a@example.org>
From: Bob <bob@example.org>
Subject: Re: Question
Date: Mon, 1 Jan 2024 11:00:00 +0000

Yes.
>From the desk of Bob.

From carol@example.org Tue Jan  2 10:00:00 2024
Message-ID: <c@example.org>
From: Carol <carol@example.org>
Subject: Other topic
Date: Tue, 2 Jan 2024 10:00:00 +0000

Unrelated.
`

// TestMailbox: -chunker email sends one request per thread.
func TestMailbox(t *testing.T) {
	url, ingest := testServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	box := filepath.Join(dir, "box.mbox")
	if err := os.WriteFile(box, []byte(testMbox), 0o644); err != nil {
		t.Fatal(err)
	}
	environ := envOf(map[string]string{"NATS_URL": url, "CHUNKSTREAM_PRODUCER_PROGRESS": "false"})
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"-chunker", "email", "-id-prefix", "lists/", "-dry-run", box}, nil, &stdout, &stderr, environ); code != 0 {
		t.Fatalf("dry run = %d: %s", code, stderr.String())
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		ids = append(ids, strings.Split(l, "\t")[1])
	}
	if strings.Join(ids, " ") != "lists/box.mbox#a@example.org lists/box.mbox#c@example.org" {
		t.Fatalf("dry run lists %q", stdout.String())
	}
	if code := run(ctx, []string{"-chunker", "email", "-id-prefix", "lists/", box}, nil, &stdout, &stderr, environ); code != 0 {
		t.Fatalf("run = %d: %s", code, stderr.String())
	}
	m, err := ingest.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if req.ID != ids[0] || req.Format != "mbox" || req.Chunker != "email" ||
		!bytes.Contains(req.Content, []byte("\n>From the desk")) || bytes.Contains(req.Content, []byte("Carol")) {
		t.Errorf("first thread request: id %q format %q chunker %q content %q", req.ID, req.Format, req.Chunker, req.Content)
	}
	if info, _ := ingest.Info(ctx); info.State.Msgs != 2 {
		t.Errorf("INGEST holds %d requests, want 2 threads", info.State.Msgs)
	}
}

// TestMailboxIDWithHashRefused: a mailbox whose id (-id-prefix + its name)
// holds '#' is a usage error before any connection: its threads' ids
// would fall in the -delete-missing scope of another mailbox ("team#" +
// "archive#…"), thread ids being Message-IDs, which may hold '#'.
func TestMailboxIDWithHashRefused(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"team#archive", "team"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(testMbox), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	environ := envOf(map[string]string{"NATS_URL": "nats://127.0.0.1:1", "CHUNKSTREAM_CONNECT_TIMEOUT": "10ms"})
	for _, args := range [][]string{
		{"-chunker", "email", "-id-prefix", "lists/", filepath.Join(dir, "team#archive")},
		{"-chunker", "email", "-id-prefix", "lists#/", filepath.Join(dir, "team")},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr, environ)
		if code != 2 || !strings.Contains(stderr.String(), "holds '#', which ends a mailbox's name in its threads' ids") {
			t.Errorf("producer %q = %d, %q; want 2 and the mailbox's id refused", args, code, stderr.String())
		}
	}
}
