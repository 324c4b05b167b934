package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a SendFunc that records each batch's items and, while held,
// blocks every batch until released or cancelled. Results are the items
// upper-cased; an item starting with "bad" fails.
type recorder struct {
	mu        sync.Mutex
	batches   [][]string
	inflight  int
	most      int
	hold      chan struct{} // nil: no hold
	cancelled int
}

func (r *recorder) send(ctx context.Context, b *Batch[string]) ([]string, []error) {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(b.Items))
	r.inflight++
	r.most = max(r.most, r.inflight)
	hold := r.hold
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight--
		r.mu.Unlock()
	}()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			r.mu.Lock()
			r.cancelled++
			r.mu.Unlock()
			errs := make([]error, len(b.Items))
			for k := range errs {
				errs[k] = ctx.Err()
			}
			return nil, errs
		}
	}
	out := make([]string, len(b.Items))
	var errs []error
	for k, it := range b.Items {
		if strings.HasPrefix(it, "bad") {
			if errs == nil {
				errs = make([]error, len(b.Items))
			}
			errs[k] = fmt.Errorf("refused %s", it)
			continue
		}
		out[k] = strings.ToUpper(it)
	}
	return out, errs
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.batches {
		out = append(out, len(b))
	}
	return out
}

func (r *recorder) sent() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

func newBatcher(t *testing.T, cfg Config, r *recorder) *Batcher[string, string] {
	t.Helper()
	b, err := New(cfg, r.send, func(s string) int { return len(s) })
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// result is one call's outcome.
type result struct {
	out []string
	err error
}

// do starts a call in the background.
func do(ctx context.Context, b *Batcher[string, string], c Call[string]) chan result {
	ch := make(chan result, 1)
	go func() {
		out, err := b.Do(ctx, c)
		ch <- result{out, err}
	}()
	return ch
}

func items(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// checkOwn requires a call's results to be its own items upper-cased.
func checkOwn(t *testing.T, ch chan result, in []string) {
	t.Helper()
	r := <-ch
	if r.err != nil {
		t.Fatalf("Do(%v) = %v", in, r.err)
	}
	for i, s := range in {
		if r.out[i] != strings.ToUpper(s) {
			t.Fatalf("Do(%v) = %v, want each item's own result", in, r.out)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{{Size: 0, InFlight: 1}, {Size: 1, InFlight: 0}, {Size: 1, InFlight: 1, Bytes: -1}, {Size: 1, InFlight: 1, Linger: -1}} {
		if _, err := New(cfg, (&recorder{}).send, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// TestSizeAndSharing: calls queued behind a busy batch share full batches
// of Size items, each call getting exactly its own results.
func TestSizeAndSharing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 4, InFlight: 1, Linger: time.Hour}, r)
		first := do(t.Context(), b, Call[string]{Items: items("x", 4)})
		synctest.Wait()
		var calls []chan result
		var ins [][]string
		for c := range 5 {
			in := items(fmt.Sprintf("c%d-", c), 1+c%3)
			ins = append(ins, in)
			calls = append(calls, do(t.Context(), b, Call[string]{Items: in}))
			synctest.Wait() // queue in a known order
		}
		close(r.hold)
		checkOwn(t, first, items("x", 4))
		for k, ch := range calls {
			checkOwn(t, ch, ins[k])
		}
		// 9 items after the first batch: 4, 4 (full at once), then the last
		// one after its linger.
		if got := r.sizes(); !slices.Equal(got, []int{4, 4, 4, 1}) {
			t.Errorf("batch sizes %v, want [4 4 4 1]", got)
		}
	})
}

// TestLinger: a batch that is not full leaves when its oldest item has
// waited Linger, not a moment before (the bubble's clock, not the
// machine's).
func TestLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := newBatcher(t, Config{Size: 10, InFlight: 1, Linger: 100 * time.Millisecond}, r)
		a := do(t.Context(), b, Call[string]{Items: items("a", 2)})
		time.Sleep(60 * time.Millisecond)
		c := do(t.Context(), b, Call[string]{Items: items("c", 2)})
		time.Sleep(39 * time.Millisecond)
		synctest.Wait()
		if n := len(r.sent()); n != 0 {
			t.Fatalf("%d batches sent before the oldest item's linger ended, want 0", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		checkOwn(t, a, items("a", 2))
		checkOwn(t, c, items("c", 2))
		if got := r.sizes(); !slices.Equal(got, []int{4}) {
			t.Errorf("batch sizes %v, want [4]: the younger items ride with the oldest", got)
		}
	})
}

// TestBytes: a batch holds at most Bytes bytes; a heavier item goes alone.
func TestBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := newBatcher(t, Config{Size: 10, Bytes: 10, InFlight: 1}, r)
		in := []string{"aaaa", "bbbb", "cccc", "dddddddddddd", "eeee"}
		checkOwn(t, do(t.Context(), b, Call[string]{Items: in}), in)
		if got := fmt.Sprint(r.sizes()); got != "[2 1 1 1]" {
			t.Errorf("batch sizes %s, want [2 1 1 1]", got)
		}
	})
}

// TestInFlight: however many calls, at most InFlight batches are sent at
// once.
func TestInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 2, InFlight: 3}, r)
		var calls []chan result
		for c := range 12 {
			calls = append(calls, do(t.Context(), b, Call[string]{Items: items(fmt.Sprintf("c%d-", c), 2)}))
		}
		synctest.Wait()
		if n := len(r.sent()); n != 3 {
			t.Errorf("%d batches sent while all are held, want InFlight = 3", n)
		}
		close(r.hold)
		for c, ch := range calls {
			checkOwn(t, ch, items(fmt.Sprintf("c%d-", c), 2))
		}
		if r.most != 3 || len(r.sent()) != 12 {
			t.Errorf("%d batches, at most %d at once; want 12, 3", len(r.sent()), r.most)
		}
	})
}

// TestKeysApart: a batch holds the items of one key.
func TestKeysApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := newBatcher(t, Config{Size: 10, InFlight: 2, Linger: time.Second}, r)
		x := do(t.Context(), b, Call[string]{Key: "x", Items: items("x", 3)})
		y := do(t.Context(), b, Call[string]{Key: "y", Items: items("y", 3)})
		checkOwn(t, x, items("x", 3))
		checkOwn(t, y, items("y", 3))
		for _, batch := range r.sent() {
			if batch[0][0] != batch[len(batch)-1][0] {
				t.Errorf("batch %v mixes keys", batch)
			}
		}
	})
}

// TestCut: the cut stops before a call of another revision of a series
// already in the batch; calls of the same revision share it.
func TestCut(t *testing.T) {
	b := &Batcher[string, string]{cfg: Config{Size: 64, InFlight: 1}}
	a1 := &call[string, string]{series: "a", rev: 1}
	a1again := &call[string, string]{series: "a", rev: 1}
	b1 := &call[string, string]{series: "b", rev: 1}
	a2 := &call[string, string]{series: "a", rev: 2}
	q := []entry[string, string]{{c: a1}, {c: a1}, {c: b1}, {c: a1again}, {c: a2}, {c: b1}}
	if n, full := b.cut("", q); n != 4 || !full {
		t.Errorf("cut(a@1 a@1 b@1 a@1 a@2 b@1) = %d, %v; want 4, true", n, full)
	}
	if n, full := b.cut("", q[4:]); n != 2 || full {
		t.Errorf("cut(a@2 b@1) = %d, %v; want 2, false", n, full)
	}
	b.cfg.Whole, b.cfg.Size = true, 3
	x := &call[string, string]{}
	y := &call[string, string]{}
	q = []entry[string, string]{{c: x}, {c: x}, {c: y}, {c: y}}
	if n, full := b.cut("", q); n != 2 || !full {
		t.Errorf("whole cut(x x y y) with Size 3 = %d, %v; want 2, true", n, full)
	}
	q = []entry[string, string]{{c: x}, {c: x}, {c: x}, {c: x}, {c: y}}
	if n, full := b.cut("", q); n != 4 || !full {
		t.Errorf("whole cut(x x x x y) with Size 3 = %d, %v; want 4 (a call over Size alone), true", n, full)
	}
}

// TestLimits: a key's own limits cap its batches below the Config's: fewer
// items, fewer calls; other keys keep the Config's.
func TestLimits(t *testing.T) {
	b := &Batcher[string, string]{cfg: Config{Size: 64, InFlight: 1}, limits: map[string]Limits{}}
	b.Limit("small", Limits{Size: 3})
	b.Limit("few", Limits{Calls: 2})
	x, y, z := &call[string, string]{}, &call[string, string]{}, &call[string, string]{}
	q := []entry[string, string]{{c: x}, {c: x}, {c: y}, {c: y}, {c: z}}
	for _, tc := range []struct {
		key  string
		n    int
		full bool
	}{{"small", 3, true}, {"few", 4, true}, {"other", 5, false}} {
		if n, full := b.cut(tc.key, q); n != tc.n || full != tc.full {
			t.Errorf("cut for %s = %d, %v; want %d, %v", tc.key, n, full, tc.n, tc.full)
		}
	}
}

// TestWhole: with Whole, calls are never split across batches.
func TestWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 5, InFlight: 1, Whole: true}, r)
		first := do(t.Context(), b, Call[string]{Items: items("x", 1)})
		synctest.Wait()
		var calls []chan result
		for c := range 4 {
			calls = append(calls, do(t.Context(), b, Call[string]{Items: items(fmt.Sprintf("c%d-", c), 3)}))
			synctest.Wait()
		}
		close(r.hold)
		checkOwn(t, first, items("x", 1))
		for c, ch := range calls {
			checkOwn(t, ch, items(fmt.Sprintf("c%d-", c), 3))
		}
		if got := r.sizes(); !slices.Equal(got, []int{1, 3, 3, 3, 3}) {
			t.Errorf("batch sizes %v, want [1 3 3 3 3]: calls of 3 whole in batches of at most 5", got)
		}
	})
}

// TestItemErrorFailsOnlyItsCall: an item the send refuses fails its call
// with the item's error and drops the call's queued items; the other calls
// of the batch get their results.
func TestItemErrorFailsOnlyItsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 3, InFlight: 1}, r)
		first := do(t.Context(), b, Call[string]{Items: items("x", 1)})
		synctest.Wait()
		a := do(t.Context(), b, Call[string]{Items: []string{"a0"}})
		synctest.Wait()
		bad := do(t.Context(), b, Call[string]{Items: []string{"b0", "bad1", "b2", "b3", "b4"}})
		synctest.Wait()
		close(r.hold)
		checkOwn(t, first, items("x", 1))
		checkOwn(t, a, []string{"a0"})
		if res := <-bad; res.err == nil || !strings.Contains(res.err.Error(), "refused bad1") {
			t.Fatalf("Do with a bad item = %v, want its error", res.err)
		}
		synctest.Wait()
		if got := fmt.Sprint(r.sent()); got != "[[x0] [a0 b0 bad1]]" {
			t.Errorf("batches %s, want the failed call's queued items dropped", got)
		}
	})
}

// TestCancelledWhileQueued: a call whose context ends while its items wait
// returns at once, and they are never sent.
func TestCancelledWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 4, InFlight: 1}, r)
		first := do(t.Context(), b, Call[string]{Items: items("x", 1)})
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		a := do(ctx, b, Call[string]{Items: items("a", 2)})
		synctest.Wait()
		if n := b.Queued(""); n != 2 {
			t.Fatalf("Queued = %d, want 2", n)
		}
		cancel()
		if res := <-a; !errors.Is(res.err, context.Canceled) {
			t.Fatalf("cancelled Do = %v, want context.Canceled", res.err)
		}
		if n := b.Queued(""); n != 0 {
			t.Fatalf("%d items still queued after their call left", n)
		}
		close(r.hold)
		checkOwn(t, first, items("x", 1))
		if got := fmt.Sprint(r.sent()); got != "[[x0]]" {
			t.Errorf("batches %s, want the cancelled call's items never sent", got)
		}
	})
}

// TestCancelledInFlight: a batch is cancelled once every call waiting for
// it has left, not before.
func TestCancelledInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		defer close(r.hold)
		b := newBatcher(t, Config{Size: 2, InFlight: 1}, r)
		ctxA, cancelA := context.WithCancel(t.Context())
		ctxB, cancelB := context.WithCancel(t.Context())
		a := do(ctxA, b, Call[string]{Items: []string{"a0"}})
		synctest.Wait()
		bb := do(ctxB, b, Call[string]{Items: []string{"b0"}})
		synctest.Wait()
		if got := fmt.Sprint(r.sent()); got != "[[a0] [b0]]" && got != "[[a0]]" {
			t.Fatalf("batches %s", got)
		}
		cancelA()
		<-a
		synctest.Wait()
		if r.cancelled != 1 {
			t.Fatalf("%d batches cancelled after a's call left, want its own", r.cancelled)
		}
		cancelB()
		if res := <-bb; !errors.Is(res.err, context.Canceled) {
			t.Fatalf("Do = %v, want context.Canceled", res.err)
		}
	})
}

// TestSharedBatchCancelledWhenNobodyWaits: a batch shared by two calls
// goes on while one of them waits.
func TestSharedBatchCancelledWhenNobodyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		defer close(r.hold)
		b := newBatcher(t, Config{Size: 2, InFlight: 1, Linger: time.Hour}, r)
		ctxA, cancelA := context.WithCancel(t.Context())
		ctxB, cancelB := context.WithCancel(t.Context())
		a := do(ctxA, b, Call[string]{Items: []string{"a0"}})
		bb := do(ctxB, b, Call[string]{Items: []string{"b0"}})
		synctest.Wait()
		if n := len(r.sent()); n != 1 {
			t.Fatalf("%d batches, want one shared", n)
		}
		cancelA()
		<-a
		synctest.Wait()
		if r.cancelled != 0 {
			t.Fatal("the batch was cancelled while b still waits for it")
		}
		cancelB()
		<-bb
		synctest.Wait()
		if r.cancelled != 1 {
			t.Fatal("the batch nobody waits for was not cancelled")
		}
	})
}

// TestCloseFlushes: Close sends what is queued at once, linger waived,
// and waits for it; later calls get ErrClosed.
func TestCloseFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := newBatcher(t, Config{Size: 10, InFlight: 1, Linger: time.Hour}, r)
		a := do(t.Context(), b, Call[string]{Items: items("a", 3)})
		synctest.Wait()
		start := time.Now()
		if err := b.Close(t.Context()); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("Close waited %v of the bubble's clock, want the linger waived", waited)
		}
		checkOwn(t, a, items("a", 3))
		if _, err := b.Do(t.Context(), Call[string]{Items: items("z", 1)}); !errors.Is(err, ErrClosed) {
			t.Errorf("Do after Close = %v, want ErrClosed", err)
		}
	})
}

// TestCloseCutOff: when Close's context has ended, nothing more is sent:
// the batches in flight are cancelled and every waiting call ends with
// ErrClosed, keeping the results of its items already done.
func TestCloseCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{hold: make(chan struct{})}
		b := newBatcher(t, Config{Size: 2, InFlight: 1}, r)
		first := do(t.Context(), b, Call[string]{Items: items("x", 2)})
		synctest.Wait()
		// y's first two items ride in a batch that is let through, the
		// third waits for the next one.
		y := do(t.Context(), b, Call[string]{Items: items("y", 3)})
		synctest.Wait()
		r.hold <- struct{}{} // x's batch returns; y's first batch starts
		checkOwn(t, first, items("x", 2))
		synctest.Wait()
		r.hold <- struct{}{} // y's first batch returns; its last item's starts
		synctest.Wait()
		q := do(t.Context(), b, Call[string]{Items: items("q", 1)})
		synctest.Wait()
		p := do(t.Context(), b, Call[string]{Items: items("p", 3)})
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Close(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Close = %v, want context.Canceled", err)
		}
		res := <-y
		if !errors.Is(res.err, ErrClosed) || !slices.Equal(res.out, []string{"Y0", "Y1", ""}) {
			t.Errorf("Do cut off in flight = %q, %v; want its done results and ErrClosed", res.out, res.err)
		}
		for _, ch := range []chan result{q, p} {
			if res := <-ch; !errors.Is(res.err, ErrClosed) {
				t.Errorf("Do queued at Close = %v, want ErrClosed", res.err)
			}
		}
		if got := fmt.Sprint(r.sent()); got != "[[x0 x1] [y0 y1] [y2]]" {
			t.Errorf("batches %s, want nothing sent after Close", got)
		}
	})
}

// TestBatchCalls: the send function sees which call each item belongs to,
// whether it is the call's last, and whether its call still waits.
func TestBatchCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []string
		hold := make(chan struct{})
		b, err := New(Config{Size: 5, InFlight: 1}, func(ctx context.Context, bt *Batch[string]) ([]string, []error) {
			<-hold
			for k := range bt.Items {
				seen = append(seen, fmt.Sprintf("%s:%d/%d last=%v", bt.Items[k], bt.Call(k), bt.Calls(), bt.Last(k)))
			}
			return nil, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		first := do(t.Context(), b, Call[string]{Items: []string{"x"}})
		synctest.Wait()
		a := do(t.Context(), b, Call[string]{Items: []string{"a0", "a1"}})
		synctest.Wait()
		c := do(t.Context(), b, Call[string]{Items: []string{"c0", "c1", "c2", "c3"}})
		synctest.Wait()
		close(hold)
		for _, ch := range []chan result{first, a, c} {
			if res := <-ch; res.err != nil {
				t.Fatal(res.err)
			}
		}
		want := "[x:0/1 last=true a0:0/2 last=false a1:0/2 last=true c0:1/2 last=false c1:1/2 last=false c2:1/2 last=false c3:0/1 last=true]"
		if fmt.Sprint(seen) != want {
			t.Errorf("send saw %v\nwant %s", seen, want)
		}
	})
}
