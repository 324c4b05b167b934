package producer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestPacer: without a rate waits return at once; at 100/s, 21 waits take
// exactly 200 ms of (fake) time, the first being free; a cancelled context
// ends a wait.
func TestPacer(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		n    int
		want time.Duration
	}{
		{0, 1000, 0},
		{100, 21, 200 * time.Millisecond},
		{50, 11, 200 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			p := newPacer(tc.rate)
			start := time.Now()
			for range tc.n {
				if err := p.wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if d := time.Since(start); d != tc.want {
				t.Errorf("rate %v: %d waits took %v, want %v", tc.rate, tc.n, d, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := newPacer(0.001)
	_ = p.wait(ctx) // the first is free
	if err := p.wait(ctx); err == nil {
		t.Error("wait with a cancelled context = nil, want its error")
	}
}

// TestBackfillRate: Backfill paces its publishes by Rate (TestPacer
// checks the pacer's waits on fake time). At one document per 1,000 s the
// first request goes out at once and the sender then waits in its pacer
// for the second; cancelled there, the run has published one request of
// 11, however fast or slow the machine is. The requests are counted on
// the subject: a fast-ingest batch is stored only when it is committed.
func TestBackfillRate(t *testing.T) {
	e := newEnv(t, nil)
	dir := t.TempDir()
	for i := range 11 {
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".md"), mdContent(i, 100), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var published atomic.Int32
	sub, err := e.nc.Subscribe("ingest.>", func(m *nats.Msg) {
		if m.Header.Get(nats.MsgIdHdr) != "" { // a request, not a batch's control message
			published.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Rate: 0.001})
		done <- err
	}()
	testutil.WaitFor(t, time.Minute, "a request published and the sender waiting in its pacer", func() (bool, string) {
		return published.Load() >= 1 && pacerWaiting(), fmt.Sprintf("%d published", published.Load())
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Backfill cancelled in its pacer = %v, want context.Canceled", err)
	}
	if err := e.nc.Flush(); err != nil { // every request the server saw has reached sub
		t.Fatal(err)
	}
	if err := sub.Drain(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, time.Minute, "the subscription to drain", func() bool { return !sub.IsValid() })
	if n := published.Load(); n != 1 {
		t.Errorf("%d requests published at 1 document per 1,000 s, want 1", n)
	}
}

// pacerWaiting reports whether a goroutine sleeps in pacer.wait, read from
// the goroutines' stacks (the first wait of a pacer returns at once).
func pacerWaiting() bool {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("producer.sleep(")) && bytes.Contains(g, []byte("producer.(*pacer).wait(")) {
			return true
		}
	}
	return false
}
