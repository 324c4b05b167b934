package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/topology"
)

// TestSenderRetriesThroughOutage: the server stopped and restarted under
// a full-rate send: every request settles in order without error, the
// failed ones were retried with their message and stored once, the
// retries went concurrently, and the probes (the only waits in sequence)
// are bounded by the outage's length, not by the window.
// countingPublisher counts the synchronous publishes (the sender's
// retries) in flight at once.
type countingPublisher struct {
	publisher
	inFlight, max atomic.Int64
}

func (c *countingPublisher) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for hi := c.max.Load(); n > hi && !c.max.CompareAndSwap(hi, n); hi = c.max.Load() {
	}
	return c.publisher.PublishMsg(ctx, m, opts...)
}

func TestSenderRetriesThroughOutage(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := 3000
	if raceEnabled {
		n = 1000
	}
	p := e.producer(Options{})
	var mu sync.Mutex
	var settled []*outgoing
	var count atomic.Int64
	retry := RetryOptions{Wait: 20 * time.Millisecond, MaxWait: 100 * time.Millisecond, AckTimeout: 2 * time.Second}
	// The server stops when a third of the requests have settled (in the
	// settle callback, so the send cannot get further first) and is back
	// 300 ms later.
	restarted := make(chan struct{})
	js := &countingPublisher{publisher: e.js}
	snd := newSender(ctx, js, 256, 0, 0, retry, func(o *outgoing) {
		mu.Lock()
		settled = append(settled, o)
		mu.Unlock()
		if count.Add(1) == int64(n/3) {
			e.stop()
			go func() {
				defer close(restarted)
				time.Sleep(300 * time.Millisecond)
				e.start()
			}()
		}
	}, nil)
	for i := range n {
		id := fmt.Sprintf("doc-%05d.md", i)
		content := mdContent(i, 200)
		req, msgID, err := p.Request(ctx, Document{ID: id, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.message(req, msgID, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := snd.send(ctx, &outgoing{msg: m, id: id, bytes: len(content)}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	snd.close(ctx)
	<-restarted
	if err := snd.failed(); err != nil {
		t.Fatalf("sender gave up: %v", err)
	}
	retried, retries := 0, 0
	for i, o := range settled {
		if want := fmt.Sprintf("doc-%05d.md", i); o.id != want {
			t.Fatalf("settled #%d is %s, want %s (publish order)", i, o.id, want)
		}
		if o.err != nil || o.ack == nil {
			t.Fatalf("%s: %v", o.id, o.err)
		}
		if o.retries > 0 {
			retried++
			retries += o.retries
		}
	}
	if len(settled) != n {
		t.Fatalf("%d settled, want %d", len(settled), n)
	}
	checkIngestOnce(t, e, n)
	outages, down, probes := snd.outages()
	maxInFlight := js.max.Load()
	t.Logf("%d requests retried (%d retries), at most %d retries in flight at once; %d outages, %v down, %d probes",
		retried, retries, maxInFlight, outages, down, probes)
	if retried == 0 || outages == 0 {
		t.Fatalf("no publish failed across the outage (%d retried, %d outages)", retried, outages)
	}
	if retried >= 2 && maxInFlight < 2 {
		t.Errorf("%d requests were retried one at a time, want them concurrent", retried)
	}
	if limit := 2*outages + int(down/(retry.Wait/2)); probes > limit {
		t.Errorf("%d probes over %d outages of %v in all, more than %d: waits in sequence grew with the window", probes, outages, down, limit)
	}
}

// TestBackfillMessageFault: a request the stream refuses for itself (over
// its maximum message size) fails alone, without retries or an outage;
// the other documents go.
func TestBackfillMessageFault(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "SMALL", Subjects: []string{"small.>"}, MaxMsgSize: 2048}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, size := range map[string]int{"a.md": 300, "big.md": 5000, "c.md": 300} {
		if err := os.WriteFile(filepath.Join(dir, name), mdContent(1, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := e.producer(Options{Subject: "small.docs"}).Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil || s.Sent != 2 || s.Failed != 1 || s.Retries != 0 || s.Outages != 0 || s.GaveUp != 0 {
		t.Fatalf("Backfill = %+v (outages %d), %v; want 2 sent, big.md failed alone", s.Stats, s.Outages, err)
	}
	var apiErr *jetstream.APIError
	if f := s.Failures[0]; f.ID != "big.md" || !errors.As(f.Err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamMessageExceedsMaximum {
		t.Errorf("failure = %+v, want big.md over the maximum message size", f)
	}
}

// TestRefuseTooLarge: a document over MaxDocBytes is refused before
// anything is stored (no Object Store bucket created) or published, with
// an error naming it, its file, its size and the limit; the others go; a
// dry run and a stdin line are refused the same way.
func TestRefuseTooLarge(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if err := e.js.DeleteObjectStore(ctx, topology.DefaultConfig().ObjectsBucket); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.md")
	for name, size := range map[string]int{"a.md": 300, "big.md": 2500, "c.md": 300} {
		if err := os.WriteFile(filepath.Join(dir, name), mdContent(1, size)[:size], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := e.producer(Options{MaxInline: 500, MaxDocBytes: 2000})
	check := func(what string, s Summary, sent int) {
		t.Helper()
		if s.Sent != sent || s.Failed != 1 || len(s.Failures) != 1 {
			t.Fatalf("%s = %+v, want %d sent and big.md failed", what, s.Stats, sent)
		}
		f := s.Failures[0]
		if !errors.Is(f.Err, ErrTooLarge) || f.ID != "big.md" {
			t.Fatalf("%s: failure %+v, want ErrTooLarge for big.md", what, f)
		}
		for _, want := range []string{`"big.md"`, "2500 bytes", "limit of 2000 bytes"} {
			if !strings.Contains(f.Err.Error(), want) {
				t.Errorf("%s: %q does not say %s", what, f.Err, want)
			}
		}
	}
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	check("dry run", s, 2)
	s, err = p.Backfill(ctx, BackfillOptions{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	check("backfill", s, 2)
	if !strings.Contains(s.Failures[0].Err.Error(), big) {
		t.Errorf("%q does not name the file %s", s.Failures[0].Err, big)
	}
	checkIngestOnce(t, e, 2)
	if _, err := e.js.ObjectStore(ctx, topology.DefaultConfig().ObjectsBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("objects bucket after refusing the only large document: %v, want none created", err)
	}
	// The limit also holds for a file that grows while read, and for
	// content in memory.
	if _, err := readFile(os.DirFS(dir), "big.md", nil, 1000); err == nil {
		t.Error("readFile over the limit = nil error")
	}
	line := func(id string, size int) string {
		return fmt.Sprintf(`{"v":1,"id":%q,"content":%q}`, id, mdContent(1, size)[:size])
	}
	in := strings.Join([]string{line("a.md", 300), line("big.md", 2500), line("c.md", 300)}, "\n")
	var bad []Failure
	s, err = p.SendLines(ctx, strings.NewReader(in), StreamOptions{OnBadLine: func(f Failure) { bad = append(bad, f) }})
	if err != nil {
		t.Fatal(err)
	}
	check("stdin", s, 2)
	if len(bad) != 1 || bad[0].Line != 2 {
		t.Errorf("bad lines = %+v, want line 2", bad)
	}
	if _, err := e.js.ObjectStore(ctx, topology.DefaultConfig().ObjectsBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("objects bucket after stdin: %v, want none created", err)
	}
	if _, _, err := p.Request(ctx, Document{ID: "x", Content: make([]byte, 2001)}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Request over the limit = %v, want ErrTooLarge", err)
	}
}

func TestClassify(t *testing.T) {
	api := func(code int, ec jetstream.ErrorCode) error {
		return fmt.Errorf("nats: %w", &jetstream.APIError{Code: code, ErrorCode: ec, Description: "x"})
	}
	for _, tc := range []struct {
		err  error
		want outcome
	}{
		{nil, published},
		{api(400, jetstream.JSErrCodeStreamMessageExceedsMaximum), refused},
		{api(400, 10097), refused},
		{api(400, 10109), refused},
		{nats.ErrMaxPayload, refused},
		{api(409, 10158), busy},
		{api(429, 10167), busy},
		{api(503, 10008), unanswered},
		{api(400, 10202), unanswered},
		{api(500, 10049), unanswered},
		{nats.ErrTimeout, unanswered},
		{nats.ErrDisconnected, unanswered},
		{jetstream.ErrNoStreamResponse, unanswered},
		{jetstream.ErrAsyncPublishTimeout, unanswered},
		{errNoPubAck, unanswered},
		{context.DeadlineExceeded, unanswered},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestSenderPresumesLostPubAcks: publishes the server takes but never
// acknowledges (a core subscriber holds the subject, no stream stores it
// yet: what a dying stream leader does to the PubAcks of the requests it
// had). With AckTimeout far beyond the test's deadline, the run completes
// only because PubAcks are presumed lost when none comes for
// StallTimeout: the server is marked down, probes go out one per
// interval, and once the stream exists every request is stored once.
func TestSenderPresumesLostPubAcks(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := e.nc.SubscribeSync("lost.>")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	const n = 300
	p := e.producer(Options{Subject: "lost.docs"})
	var settled []*outgoing
	// No async publish timeout either: nothing but the stall rule ends
	// the wait for a PubAck that never comes.
	plain, err := jetstream.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	js := &countingPublisher{publisher: plain}
	retry := RetryOptions{Wait: 20 * time.Millisecond, MaxWait: 100 * time.Millisecond, AckTimeout: time.Hour, StallTimeout: 200 * time.Millisecond}
	snd := newSender(ctx, js, 256, 0, 0, retry, func(o *outgoing) { settled = append(settled, o) }, nil)
	// The first 256 fill the window; the rest wait for the server.
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			id := fmt.Sprintf("doc-%05d.md", i)
			req, msgID, err := p.Request(ctx, Document{ID: id, Content: mdContent(i, 200)})
			if err == nil {
				var m *nats.Msg
				if m, err = p.message(req, msgID, ""); err == nil {
					err = snd.send(ctx, &outgoing{msg: m, id: id})
				}
			}
			if err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for {
		if outages, _, probes := snd.outages(); outages > 0 && probes > 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the server was never marked down: PubAcks that never come were waited for")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "LOST", Subjects: []string{"lost.>"}, Duplicates: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	snd.close(ctx)
	if len(settled) != n {
		t.Fatalf("%d settled, want %d", len(settled), n)
	}
	retried := 0
	for _, o := range settled {
		if o.err != nil {
			t.Fatalf("%s: %v", o.id, o.err)
		}
		if o.retries > 0 {
			retried++
		}
	}
	outages, down, probes := snd.outages()
	t.Logf("%d requests retried, at most %d retries in flight; %d outages, %v down, %d probes", retried, js.max.Load(), outages, down, probes)
	if retried < 2 || js.max.Load() < 2 {
		t.Errorf("%d requests retried, at most %d at once; want the window retried concurrently", retried, js.max.Load())
	}
	checkStreamOnce(t, e.js, "LOST", n)
}
