package producer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestMailboxPerThread publishes an mbox of the shared corpus one request
// per thread: as many requests as threads, and the worker's chunks of the
// threads equal the chunks of the mailbox chunked whole. Structure only
// (hashes, ids, counts): no mail text is asserted.
func TestMailboxPerThread(t *testing.T) {
	path := testutil.SharedDir(t, "corpus", "email", "linux-man-01450-01749.mboxrd")
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	mb, _, err := email.ReadMailbox(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	threads, _ := email.Threads(mb)
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{path}, Split: email.SplitThreads, Template: Document{Chunker: "email"}, IDPrefix: "lists/"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != len(threads) || s.Failed != 0 {
		t.Fatalf("Backfill = %+v, want %d requests (one per thread)", s.Stats, len(threads))
	}
	if got := e.pendingIngest(ctx); got != len(threads) {
		t.Fatalf("INGEST holds %d requests, want %d threads", got, len(threads))
	}
	st, _ := e.js.Stream(ctx, e.cfg.IngestStream)
	m, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
	if err != nil {
		t.Fatal(err)
	}
	mailboxID := "lists/linux-man-01450-01749.mboxrd"
	if req.ID != PartID(mailboxID, threads[0].ThreadID) || req.Format != "mbox" || req.Chunker != "email" {
		t.Errorf("first request: id %q format %q chunker %q; want %q, mbox, email", req.ID, req.Format, req.Chunker, PartID(mailboxID, threads[0].ThreadID))
	}

	results := e.runWorker(ctx, len(threads))
	for id, rs := range results {
		if len(rs) != 1 || rs[0].Outcome != worker.OutcomeAcked {
			t.Fatalf("thread %s: %+v", id, rs)
		}
	}

	// The whole mailbox chunked at once, grouped by thread.
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := email.New(email.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := c.Chunk(chunking.Document{Path: path, Format: "mbox", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, ch := range whole {
		tid, _ := ch.Metadata().Get("thread_id")
		id := PartID(mailboxID, tid.(string))
		want[id] = append(want[id], ch.Hash())
	}
	got := e.view(ctx)
	compareViews(t, got, want)
	n := 0
	for _, hs := range got {
		n += len(hs)
	}
	if n != len(whole) {
		t.Errorf("%d chunks from the threads, %d from the whole mailbox", n, len(whole))
	}

	// Re-running skips every thread; a thread that disappears is deleted.
	s, err = e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{path}, Split: email.SplitThreads, Template: Document{Chunker: "email"}, IDPrefix: "lists/", DeleteMissing: true})
	if err != nil || s.Sent != 0 || s.Skipped != len(threads) {
		t.Fatalf("re-run = %+v, %v; want every thread skipped", s.Stats, err)
	}
	// A smaller copy of the mailbox: its first messages only.
	short := t.TempDir() + "/linux-man-01450-01749.mboxrd"
	kept := mb.Messages[:len(mb.Messages)/2]
	var buf strings.Builder
	if err := email.WriteMbox(&buf, kept); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var planned []Planned
	if _, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{short}, Split: email.SplitThreads, Template: Document{Chunker: "email"}, IDPrefix: "lists/",
		DeleteMissing: true, DryRun: true, OnDryRun: func(p Planned) { planned = append(planned, p) }}); err != nil {
		t.Fatal(err)
	}
	shortThreads, _ := email.Threads(&email.Mailbox{Messages: kept})
	kept2 := map[string]bool{}
	for _, th := range shortThreads {
		kept2[PartID(mailboxID, th.ThreadID)] = true
	}
	var deletes []string
	for _, p := range planned {
		if p.Op == messages.OpDelete {
			deletes = append(deletes, p.ID)
			if kept2[p.ID] {
				t.Errorf("delete planned for %s, which the smaller mailbox still has", p.ID)
			}
		}
	}
	var wantDeletes []string
	for _, th := range threads {
		if id := PartID(mailboxID, th.ThreadID); !kept2[id] {
			wantDeletes = append(wantDeletes, id)
		}
	}
	slices.Sort(wantDeletes)
	if len(wantDeletes) == 0 || len(shortThreads) == 0 {
		t.Fatalf("the smaller mailbox keeps %d threads and drops %d: not a test", len(shortThreads), len(wantDeletes))
	}
	t.Logf("%d messages, %d threads, %d chunks; half the mailbox drops %d threads", len(mb.Messages), len(threads), len(whole), len(wantDeletes))
	if !slices.Equal(deletes, wantDeletes) {
		t.Errorf("planned %d deletes, want %d", len(deletes), len(wantDeletes))
	}
}

// TestSplitInputIDWithHashRefused: a split input (a mailbox) whose id,
// prefix + base name, holds '#' is refused (ErrInputIDHash) before
// anything is sent. The scope of a mailbox's DeleteMissing is the ids
// starting with "<input id>#", and thread ids (Message-IDs) may hold '#':
// mailbox "team#archive"'s threads would be in mailbox "team"'s scope,
// deleted by its DeleteMissing as gone from it.
func TestSplitInputIDWithHashRefused(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	mbox := "From a@example.com Mon Jan  1 00:00:00 2024\nFrom: a@example.com\nMessage-ID: <x#1@example.com>\nSubject: topic\n" +
		"Date: Mon, 1 Jan 2024 00:00:00 +0000\n\nBody.\n"
	for _, tc := range []struct {
		prefix, name string
		refused      bool
	}{
		{"lists/", "team#archive", true},
		{"lists#/", "team", true},
		{"lists/", "team", false}, // its thread id "x#1@example.com" holds '#': allowed
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(mbox), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{path}, Split: email.SplitThreads,
			Template: Document{Chunker: "email"}, IDPrefix: tc.prefix, DeleteMissing: true})
		if got := errors.Is(err, ErrInputIDHash); got != tc.refused || tc.refused && s.Sent != 0 || !tc.refused && (err != nil || s.Sent != 1) {
			t.Errorf("mailbox %s%s: Backfill = %+v, %v; want refused %v", tc.prefix, tc.name, s.Stats, err, tc.refused)
		}
	}
	if n := e.streamCount(e.cfg.IngestStream); n != 1 {
		t.Errorf("INGEST holds %d, want the one thread of the mailbox allowed", n)
	}
}
