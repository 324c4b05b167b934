package outage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

var errDown = errors.New("server down")

// logged is what a machine logged.
type logged struct{ testutil.SyncBuffer }

func (l *logged) count(s string) int { return strings.Count(l.String(), s) }

func machine(t *testing.T, o Options) (*Machine, *logged) {
	l := &logged{}
	o.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
	o.DownMessage, o.UpMessage = "thing down", "thing up again"
	if o.Base == 0 {
		o.Base, o.Max = time.Millisecond, 4*time.Millisecond
	}
	m := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go m.Run(ctx)
	return m, l
}

// retrier runs n goroutines that retry with turns against work that
// fails until up is set, as the producer's retries do.
type retrier struct {
	up                atomic.Bool
	attempts, whileDn atomic.Int64
	wg                sync.WaitGroup
	errs              chan error
}

func startRetrier(m *Machine, n int) *retrier {
	r := &retrier{errs: make(chan error, n)}
	m.Fail("server", errDown, time.Now())
	for range n {
		r.wg.Go(func() {
			for {
				if _, err := m.Await(context.Background(), true); err != nil {
					r.errs <- err
					return
				}
				start := time.Now()
				r.attempts.Add(1)
				if r.up.Load() {
					m.Succeed(start)
					return
				}
				r.whileDn.Add(1)
				m.Fail("server", errDown, start)
			}
		})
	}
	return r
}

// TestTurnsOneAtATime: while down, the retries of a whole window wait and
// only turns go out, one per wait; their number does not grow with the
// window; the first success lets every retry go, and the outage is
// logged once.
func TestTurnsOneAtATime(t *testing.T) {
	for _, n := range []int{1, 50, 500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, l := machine(t, Options{})
				r := startRetrier(m, n)
				for m.Stats().Turns < 6 {
					time.Sleep(time.Millisecond)
				}
				r.up.Store(true)
				r.wg.Wait()
				close(r.errs)
				for err := range r.errs {
					t.Errorf("retry: %v", err)
				}
				st := m.Stats()
				if got := r.whileDn.Load(); got > int64(st.Turns) {
					t.Errorf("%d attempts while down, but only %d turns", got, st.Turns)
				}
				if got := r.attempts.Load() - r.whileDn.Load(); got != int64(n) {
					t.Errorf("%d attempts after it came up, want one per retry (%d)", got, n)
				}
				if st.Outages != 1 || st.Down <= 0 || m.Err() != nil || m.Down() {
					t.Errorf("stats %+v, err %v, down %v; want one outage, over", st, m.Err(), m.Down())
				}
				if l.count("thing down") != 1 || l.count("thing up again") != 1 {
					t.Errorf("log:\n%s\nwant one down and one up line", l.String())
				}
				// Turns are spaced: at most one per half of the first wait.
				if limit := 2 + int(st.Down/(m.o.Base/2)); st.Turns > limit {
					t.Errorf("%d turns in %v, more than one per half wait (%d)", st.Turns, st.Down, limit)
				}
			})
		})
	}
}

// TestGivesUp: down for longer than GiveUpAfter: every retry and every
// new piece of work gets the give-up error, with the duration and the
// last error.
func TestGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errGone := errors.New("publishing stopped")
		m, _ := machine(t, Options{GiveUpAfter: 30 * time.Millisecond, GiveUpErr: errGone})
		r := startRetrier(m, 100)
		r.wg.Wait()
		close(r.errs)
		n := 0
		for err := range r.errs {
			n++
			if !errors.Is(err, errGone) || !errors.Is(err, errDown) || !strings.Contains(err.Error(), "nothing succeeded for") {
				t.Fatalf("retry error = %v, want the give-up error naming the time and the last error", err)
			}
		}
		if n != 100 {
			t.Errorf("%d retries gave up, want 100", n)
		}
		if _, err := m.Await(context.Background(), false); !errors.Is(err, errGone) {
			t.Errorf("Await after giving up = %v", err)
		}
	})
}

// TestRules: stale failures, giving up at once, a closed connection,
// Clear, and the RetryAfter floor of the first turn.
func TestRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		t1 := time.Now()
		time.Sleep(time.Millisecond)

		m, _ := machine(t, Options{})
		m.Succeed(t1)
		m.Fail("s", errDown, t0)
		if m.Down() {
			t.Error("a failure older than a success took the machine down")
		}
		m.Fail("s", errDown, time.Now())
		if !m.Down() || m.Stats().Outages != 1 {
			t.Error("a newer failure did not take it down")
		}
		short, stop := context.WithTimeout(ctx, 20*time.Millisecond)
		defer stop()
		if _, err := m.Await(short, false); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Await while down = %v, want to wait", err)
		}
		m.Succeed(t1) // work sent before the outage says nothing of now
		if !m.Down() {
			t.Error("a success of work older than the outage ended it")
		}
		m.Succeed(time.Now())
		if _, err := m.Await(ctx, false); err != nil || m.Down() {
			t.Errorf("Await after a success = %v", err)
		}

		m, _ = machine(t, Options{GiveUpAfter: -1})
		m.Fail("s", errDown, t0)
		if _, err := m.Await(ctx, true); !errors.Is(err, ErrStopped) {
			t.Errorf("Await with GiveUpAfter < 0 = %v, want ErrStopped", err)
		}
		m, _ = machine(t, Options{})
		m.GiveUp(errDown)
		if _, err := m.Await(ctx, true); !errors.Is(err, ErrStopped) || !errors.Is(err, errDown) {
			t.Errorf("Await after GiveUp = %v", err)
		}

		m, _ = machine(t, Options{})
		m.Hold("a", errDown)
		m.Hold("b", errDown)
		m.Clear("a")
		if !m.Down() {
			t.Error("down with b still down")
		}
		m.Clear("b")
		if m.Down() {
			t.Error("still down with nothing down")
		}

		// Resume ends an outage with nothing to try, and makes no failure
		// stale.
		m, _ = machine(t, Options{})
		before := time.Now()
		time.Sleep(time.Millisecond)
		m.Hold("a", errDown)
		m.Resume()
		if m.Down() {
			t.Error("down after Resume")
		}
		m.Fail("a", errDown, before)
		if !m.Down() {
			t.Error("a failure of work started before Resume was taken as stale")
		}

		m, _ = machine(t, Options{})
		start := time.Now()
		m.Fail("s", fault.RetryAfter(errDown, time.Second), start)
		if _, err := m.Await(context.Background(), true); err != nil || time.Since(start) < time.Second {
			t.Errorf("first turn after %v (%v), want the RetryAfter of a second first", time.Since(start), err)
		}
	})
}

// TestHalfOpen: a dependency that answers every probe but fails every
// trial keeps the machine down, logged once, with turns ever further
// apart; a trial that succeeds ends the outage. Work that started before
// the outage and fails meanwhile changes nothing.
func TestHalfOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var probes atomic.Int64
		m, l := machine(t, Options{Base: time.Second, Max: 8 * time.Second,
			Probe: func(context.Context, string) error { probes.Add(1); return nil }})
		before := time.Now()
		time.Sleep(time.Millisecond)
		m.Fail("embedder", errDown, time.Now())
		var turns []time.Time
		for range 6 {
			if _, err := m.Await(context.Background(), true); err != nil {
				t.Fatal(err)
			}
			turns = append(turns, time.Now())
			time.Sleep(30 * time.Second) // the trial hangs until its time-out
			m.Fail("embedder", errDown, turns[len(turns)-1])
			m.Fail("embedder", errDown, before) // in flight before the outage
		}
		for i := 2; i < len(turns); i++ {
			if gap := turns[i].Sub(turns[i-1]); gap < 30*time.Second+2*time.Second {
				t.Errorf("turn %d came %v after the one before, want the trial's 30 s and a growing wait", i, gap)
			}
		}
		if n := l.count("thing down"); n != 1 {
			t.Errorf("%d down lines, want 1", n)
		}
		if _, err := m.Await(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		m.Succeed(time.Now())
		if m.Down() || l.count("thing up again") != 1 || m.Stats().Outages != 1 || probes.Load() < 6 {
			t.Errorf("down %v, log %q, stats %+v, probes %d", m.Down(), l.String(), m.Stats(), probes.Load())
		}
	})
}

// TestProbeGatesTurns: no turn while a probe fails; the first probe that
// passes opens one.
func TestProbeGatesTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ok atomic.Bool
		var failed atomic.Int64
		m, _ := machine(t, Options{Probe: func(context.Context, string) error {
			if ok.Load() {
				return nil
			}
			failed.Add(1)
			return errDown
		}})
		m.Fail("q", errDown, time.Now())
		got := make(chan struct{})
		go func() { m.Await(context.Background(), true); close(got) }()
		for failed.Load() < 5 {
			time.Sleep(time.Millisecond)
		}
		select {
		case <-got:
			t.Fatal("a turn while the probe fails")
		default:
		}
		ok.Store(true)
		<-got
	})
}

// board is Notices in memory: what each member announced.
type board struct {
	mu        sync.Mutex
	announced []string
	watches   int
	ch        chan string
}

func (b *board) Announce(_ context.Context, dep string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.announced = append(b.announced, dep)
	return nil
}

func (b *board) Watch(context.Context) (<-chan string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.watches++
	b.ch = make(chan string)
	return b.ch, nil
}

func (b *board) state() (int, []string, chan string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watches, append([]string(nil), b.announced...), b.ch
}

// TestNotices: an outage found here is announced, and again while it
// lasts; one announced by another member is probed and held when the
// probe fails here too (not announced again); a watch that ends is
// started again.
func TestNotices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &board{}
		var fail atomic.Bool
		m, _ := machine(t, Options{Base: time.Second, Max: time.Second, Notices: b,
			Probe: func(context.Context, string) error {
				if fail.Load() {
					return errDown
				}
				return nil
			}})
		synctest.Wait()
		m.Fail("nats", errDown, time.Now())
		time.Sleep(6500 * time.Millisecond)
		if _, ann, _ := b.state(); len(ann) < 2 || ann[0] != "nats" {
			t.Errorf("announced %v, want nats, and again after NoticeEvery", ann)
		}
		m.Succeed(time.Now())

		_, _, ch := b.state()
		ch <- "qdrant" // answers here
		synctest.Wait()
		if m.Down() {
			t.Error("down on a notice whose probe passed here")
		}
		fail.Store(true)
		time.Sleep(2 * time.Second)
		_, before, _ := b.state()
		ch <- "qdrant"
		synctest.Wait()
		if deps := m.deps(); len(deps) != 1 || deps[0] != "qdrant" {
			t.Errorf("down %v after a notice whose probe failed here too, want qdrant", deps)
		}
		if _, after, _ := b.state(); len(after) != len(before) {
			t.Errorf("announced %v after holding on a notice, want nothing more", after[len(before):])
		}
		close(ch)
		time.Sleep(2 * time.Second)
		if watches, _, _ := b.state(); watches != 2 {
			t.Errorf("%d watches, want the ended one started again", watches)
		}
	})
}
