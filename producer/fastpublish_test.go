package producer

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/chunkstream/chunkstream/messages"
)

// batchWatch counts, on the core subjects under ingest.>, the messages
// published as part of a fast-ingest batch (their reply in the batch
// protocol) and the others.
type batchWatch struct {
	batched, single atomic.Int64
}

func watchBatches(t *testing.T, e *env, subject string) *batchWatch {
	t.Helper()
	w := &batchWatch{}
	sub, err := e.nc.Subscribe(subject, func(m *nats.Msg) {
		if len(m.Data) == 0 {
			return // a batch's end, no request
		}
		if strings.HasSuffix(m.Reply, ".$FI") {
			w.batched.Add(1)
		} else {
			w.single.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const fallbackLine = "publishing one request at a time"

// TestFastBackfill: on a stream that allows fast-ingest batches, a
// backfill publishes every request in batches, none on its own, and
// INGEST holds each document once; OnSent reports each request with
// bounds that hold its INGEST sequence, and its version. On a stream
// without allow_batched it publishes one request at a time, saying why in
// one log line, stores each document once too, and OnSent reports each
// request's sequence. The same send again within the duplicate window
// stores nothing.
func TestFastBackfill(t *testing.T) {
	n := 3000
	if raceEnabled {
		n = 1000
	}
	tests := []struct {
		name     string
		subject  string // "" the default, on INGEST
		fast     bool
		logMatch string
	}{
		{name: "fast-ingest batches", fast: true},
		{name: "stream without allow_batched", subject: "old.docs", logMatch: "stream OLD does not allow fast-ingest batches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			stream, subject := e.cfg.IngestStream, "ingest.>"
			if tt.subject != "" {
				// Made as an older release or server would: no allow_batched.
				if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "OLD", Subjects: []string{"old.>"},
					Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
					t.Fatal(err)
				}
				stream, subject = "OLD", "old.>"
			}
			dir := t.TempDir()
			writeFiles(t, dir, n, 1000)
			w := watchBatches(t, e, subject)
			var logs lockedBuffer
			var sent []Sent
			o := BackfillOptions{Paths: []string{dir}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				OnSent: func(s Sent) { sent = append(sent, s) }}
			p := e.producer(Options{Subject: tt.subject})
			s, err := p.Backfill(ctx, o)
			if err != nil || s.Sent != n || s.Failed != 0 || s.Retries != 0 {
				t.Fatalf("Backfill = %+v, %v (%v); want %d sent, no retries", s.Stats, err, s.Failures, n)
			}
			checkStreamOnce(t, e.js, stream, n)
			if err := e.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			batched, single := w.batched.Load(), w.single.Load()
			if tt.fast && (batched != int64(n) || single != 0) {
				t.Errorf("%d requests published in batches, %d alone; want all %d in batches", batched, single, n)
			}
			if !tt.fast && (batched != 0 || single != int64(n)) {
				t.Errorf("%d requests published in batches, %d alone; want all %d alone", batched, single, n)
			}
			if got := strings.Count(logs.String(), fallbackLine); tt.fast && got != 0 || !tt.fast && got != 1 {
				t.Errorf("log has %d lines saying %q, want %d:\n%s", got, fallbackLine, map[bool]int{true: 0, false: 1}[tt.fast], logs.String())
			}
			if tt.logMatch != "" && !strings.Contains(logs.String(), tt.logMatch) {
				t.Errorf("log does not say %q:\n%s", tt.logMatch, logs.String())
			}
			if got, want := checkSent(t, e.js, stream, sent, n), map[bool]int{true: n}[tt.fast]; got != want {
				t.Errorf("OnSent reported %d requests batched, want %d", got, want)
			}
			sent = nil
			// The same send again, within the duplicate window: nothing
			// stored twice.
			if s, err = p.Backfill(ctx, o); err != nil || s.Sent != n || s.Failed != 0 {
				t.Fatalf("Backfill again = %+v, %v; want %d sent", s.Stats, err, n)
			}
			checkStreamOnce(t, e.js, stream, n)
		})
	}
}

// allowBatches sets stream's allow_batched: off, it refuses fast-ingest
// batches as an older server's would.
func allowBatches(tb testing.TB, js jetstream.JetStream, stream string, on bool) {
	tb.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.AllowBatchPublish = on
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		tb.Fatal(err)
	}
}

// checkSent checks that OnSent reported each of the n requests stored on
// stream once: with its sequence, or, batched, with bounds holding it
// and its Nats-Msg-Id's version. It returns how many were batched.
func checkSent(t *testing.T, js jetstream.JetStream, stream string, sent []Sent, n int) (batched int) {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != n {
		t.Errorf("OnSent reported %d requests, want %d", len(sent), n)
	}
	seen := map[string]bool{}
	for _, s := range sent {
		if seen[s.ID] {
			t.Errorf("OnSent reported %s twice", s.ID)
		}
		seen[s.ID] = true
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bySeq := map[string]uint64{}
	version := map[string]string{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		bySeq[req.ID] = seq
		version[req.ID] = messages.ContentVersion(req.Content)
	}
	for _, s := range sent {
		seq := bySeq[s.ID]
		if s.Batched {
			batched++
		}
		switch {
		case !s.Batched && s.Seq != seq:
			t.Errorf("Sent(%s).Seq = %d, want %d", s.ID, s.Seq, seq)
		case s.Batched && (s.After >= seq || s.Seq < seq || s.Version != version[s.ID]):
			t.Errorf("Sent(%s) = seq in (%d, %d], version %s; stored at %d, version %s", s.ID, s.After, s.Seq, s.Version, seq, version[s.ID])
		}
	}
	return batched
}

// TestFastBackfillServerRestart: the server stopped when a third of the
// documents settled and back 300 ms later, under a backfill through
// fast-ingest batches: every document is stored once (the duplicate
// window dropped the re-sent copies the server had stored), none failed,
// and only the requests after the last acknowledged one were re-sent, not
// the batch. OnSent reports every request with its sequence or bounds
// that hold it, across the failed batch.
func TestFastBackfillServerRestart(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := 3000
	if raceEnabled {
		n = 1200
	}
	dir := t.TempDir()
	writeFiles(t, dir, n, 300)
	w := watchBatches(t, e, "ingest.>")
	restarted := make(chan struct{})
	var outage sync.Once
	var sent []Sent
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{
		Paths:  []string{dir},
		OnSent: func(s Sent) { sent = append(sent, s) },
		Retry:  RetryOptions{Wait: 50 * time.Millisecond, MaxWait: 200 * time.Millisecond, AckTimeout: time.Second},
		OnProgress: func(st Stats) {
			if st.Done >= n/3 {
				outage.Do(func() {
					e.stop()
					go func() {
						defer close(restarted)
						time.Sleep(300 * time.Millisecond)
						e.start()
					}()
				})
			}
		},
	})
	<-restarted
	if err != nil || s.Sent != n || s.Failed != 0 || s.GaveUp != 0 {
		t.Fatalf("Backfill across a restart = %+v, %v (%v)", s.Stats, err, s.Failures)
	}
	checkIngestOnce(t, e, n)
	if batched := checkSent(t, e.js, "INGEST", sent, n); batched == 0 || batched == n {
		t.Errorf("%d of %d requests reported batched, want some batched and the re-sent ones with their sequence", batched, n)
	}
	t.Logf("%d sent, %d re-sent (%d acknowledged as duplicates), %d outages (%v); %d published in batches, %d alone",
		s.Sent, s.Retries, s.Duplicates, s.Outages, s.Unavailable, w.batched.Load(), w.single.Load())
	if s.Retries == 0 {
		t.Errorf("no request re-sent across the restart")
	}
	// At the stop at least n/3 requests had gone in the first batch: a
	// re-send of the batch would re-send them all.
	if s.Retries >= n/4 {
		t.Errorf("%d requests re-sent, want only those after the last acknowledgement (under %d)", s.Retries, n/4)
	}
	if w.batched.Load() < int64(n/2) {
		t.Errorf("%d requests published in batches, want the run back on batches after the restart", w.batched.Load())
	}
}

// TestFastBatchDeduplicates: the server applies the duplicate window to
// fast-ingest batches. A batch holding a request stored before, and one
// request twice, stores only the new ones, and its PubAck counts every
// message; the producer's fast sender re-sending requests already stored
// (a batch starting with one) settles them all without error and stores
// nothing twice.
func TestFastBatchDeduplicates(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := e.producer(Options{})
	msgs := make([]*nats.Msg, 6)
	for i := range msgs {
		req, msgID, err := p.Request(ctx, Document{ID: fmt.Sprintf("doc-%d.md", i), Content: mdContent(i, 200)})
		if err != nil {
			t.Fatal(err)
		}
		if msgs[i], err = p.message(req, msgID, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.js.PublishMsg(ctx, msgs[1]); err != nil {
		t.Fatal(err)
	}
	fp, err := jetstreamext.NewFastPublisher(e.js)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*nats.Msg{msgs[0], msgs[1], msgs[2], msgs[0], msgs[3]} {
		if _, err := fp.AddMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := fp.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ack.BatchSize != 5 {
		t.Errorf("batch PubAck counts %d messages, want 5", ack.BatchSize)
	}
	checkIngestOnce(t, e, 4)

	// Through the fast sender: all six again, a batch starting with a
	// duplicate (the server answers it as a single publish, and the
	// sender re-sends it on its own).
	var settled []*outgoing
	fs := newSender(ctx, e.js, 256, 0, 0, RetryOptions{}, func(o *outgoing) { settled = append(settled, o) }, nil)
	info, err := e.js.Stream(ctx, "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	fs.batched(e.js, info.CachedInfo(), 256, 0, 0, nil, slog.New(slog.DiscardHandler))
	for i, m := range msgs {
		if err := fs.send(ctx, &outgoing{msg: m, id: fmt.Sprintf("doc-%d.md", i)}); err != nil {
			t.Fatal(err)
		}
	}
	fs.close(ctx)
	if len(settled) != len(msgs) {
		t.Fatalf("%d settled, want %d", len(settled), len(msgs))
	}
	for i, o := range settled {
		if want := fmt.Sprintf("doc-%d.md", i); o.id != want || o.err != nil {
			t.Errorf("settled #%d = %s, %v; want %s without error", i, o.id, o.err, want)
		}
	}
	checkIngestOnce(t, e, 6)
}
