// Package batch is the one request batcher of the module: it gathers the
// items of concurrent calls into shared batches, so that many small calls
// (a document's few chunks) leave in few full requests.
//
// A batch leaves when it holds Config.Size items or Config.Bytes bytes, or
// when its oldest item has waited Config.Linger, and at most
// Config.InFlight batches are sent at once; items wait meanwhile, filling
// the next batches. Batches hold the items of one key (Call.Key) in
// arrival order, at most one revision of each series (Call.Series and
// Call.Rev), and with Config.Whole a call's items never split.
//
// Decisions:
//   - Each call gets exactly its own results, in order, and the first error
//     of its items: Send says per item, so one refused item fails only its
//     call. A failed call's other queued items are dropped.
//   - Nobody waits for a batch that will not be sent: a call whose context
//     ends returns at once and its queued items are dropped, and a batch
//     none of whose calls waits any more is cancelled (its context ends).
//   - Close flushes: queued items leave at once, linger waived, and Close
//     waits for every batch to return, until its context ends; then the
//     batches in flight are cancelled and the calls not yet done end with
//     ErrClosed, keeping the results of their items already done.
//   - The batcher starts no goroutine of its own but one per batch, which
//     ends with the batch; a timer wakes it when a linger ends.
package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of the batcher.
var (
	// ErrClosed ends a call made after Close, or cut off by the end of
	// Close's context.
	ErrClosed = errors.New("batch: batcher closed")
	// ErrInvalidConfig reports a Config field out of range.
	ErrInvalidConfig = errors.New("batch: invalid config")
)

// Config says when a batch leaves.
type Config struct {
	// Size is the most items in a batch (at least 1).
	Size int
	// Bytes is the most bytes (the weigh function's sum) in a batch; 0 is
	// no limit. An item heavier than Bytes goes alone.
	Bytes int
	// Linger is the longest the oldest queued item waits for its batch to
	// fill; 0 sends what waits as soon as fewer than InFlight batches are
	// in flight.
	Linger time.Duration
	// InFlight is the most batches being sent at once (at least 1).
	InFlight int
	// Whole keeps each call's items in one batch; a call larger than Size
	// or Bytes goes alone.
	Whole bool
}

// Validate reports the first field out of range, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.Size < 1:
		return fmt.Errorf("%w: Size %d must be at least 1", ErrInvalidConfig, c.Size)
	case c.Bytes < 0:
		return fmt.Errorf("%w: Bytes %d must not be negative", ErrInvalidConfig, c.Bytes)
	case c.Linger < 0:
		return fmt.Errorf("%w: Linger %v must not be negative", ErrInvalidConfig, c.Linger)
	case c.InFlight < 1:
		return fmt.Errorf("%w: InFlight %d must be at least 1", ErrInvalidConfig, c.InFlight)
	}
	return nil
}

// Limits are a key's own caps below the Config's (a destination's
// limits); a zero field leaves the Config's.
type Limits struct {
	// Size is the most items in a batch of the key.
	Size int
	// Calls is the most calls with items in a batch of the key.
	Calls int
}

// Call is what one caller submits.
type Call[T any] struct {
	// Key partitions the queue: a batch holds the items of one key (a
	// Qdrant collection, say); "" is a key like any other.
	Key string
	// Series and Rev keep revisions apart: a batch holds calls of at most
	// one Rev of each non-empty Series (two versions of one document).
	Series string
	Rev    uint64
	// Items are the call's items, in order.
	Items []T
}

// SendFunc sends one batch and returns a result and an error per item
// (results nil when R carries nothing, errs nil when every item is done).
// ctx ends when no call waits for the batch any more or Close is cut off.
type SendFunc[T, R any] func(ctx context.Context, b *Batch[T]) (results []R, errs []error)

// Batch is one batch handed to the SendFunc.
type Batch[T any] struct {
	// Key is the key of the batch's calls.
	Key string
	// Items are the batch's items: the calls' items in arrival order, each
	// call's adjacent.
	Items []T

	mu    *sync.Mutex
	owner []callState // per item: its call
	call  []int       // per item: index of its call in the batch
	item  []int       // per item: index in its call's items
	calls int
}

// callState is what a Batch reads of an item's call.
type callState interface {
	isOver() bool
	lastIndex() int
}

// Calls returns the number of calls with items in the batch.
func (b *Batch[T]) Calls() int { return b.calls }

// Call returns the index, 0 to Calls()-1 in arrival order, of the call
// item k belongs to.
func (b *Batch[T]) Call(k int) int { return b.call[k] }

// Waiting reports whether item k's call still waits for its results.
func (b *Batch[T]) Waiting(k int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.owner[k].isOver()
}

// Last reports whether item k is its call's last item: once the batch is
// done, no item of the call is waiting for a batch.
func (b *Batch[T]) Last(k int) bool { return b.item[k] == b.owner[k].lastIndex() }

// Batcher gathers the items of concurrent calls into batches (package
// doc). It is safe for concurrent use.
type Batcher[T, R any] struct {
	cfg   Config
	send  SendFunc[T, R]
	weigh func(T) int

	mu       sync.Mutex
	queues   map[string][]entry[T, R] // items waiting, by key, in arrival order
	limits   map[string]Limits
	inflight int
	flights  map[*flight]bool
	timer    *time.Timer // armed for deadline, the end of the oldest item's linger
	deadline time.Time
	batches  sync.WaitGroup
	closing  bool // Close was called: no new calls, no linger
	aborted  bool // Close's context ended
}

// call is one Do waiting for its results.
type call[T, R any] struct {
	results []R
	left    int // items without a result
	err     error
	done    chan struct{}
	over    bool // done is closed
	flights []*flight
	n       int
	series  string
	rev     uint64
}

func (c *call[T, R]) isOver() bool   { return c.over }
func (c *call[T, R]) lastIndex() int { return c.n - 1 }

// entry is one item waiting for a batch.
type entry[T, R any] struct {
	c    *call[T, R]
	i    int // index in the call's items
	v    T
	size int
	at   time.Time
}

// flight is one batch being sent; it is cancelled when no call with items
// in it waits any more.
type flight struct {
	cancel context.CancelFunc
	live   int
}

// New returns a batcher sending batches with send; weigh gives an item's
// bytes for Config.Bytes (nil weighs every item 0).
func New[T, R any](cfg Config, send SendFunc[T, R], weigh func(T) int) (*Batcher[T, R], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if send == nil {
		return nil, fmt.Errorf("%w: no send function", ErrInvalidConfig)
	}
	if weigh == nil {
		weigh = func(T) int { return 0 }
	}
	return &Batcher[T, R]{cfg: cfg, send: send, weigh: weigh, queues: map[string][]entry[T, R]{}, limits: map[string]Limits{},
		flights: map[*flight]bool{}}, nil
}

// Limit sets key's own limits, for the batches cut from now on.
func (b *Batcher[T, R]) Limit(key string, l Limits) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limits[key] = l
}

// Do queues c's items and waits until each has its result, an item fails
// (its error is returned), or ctx ends (ctx's error). The results are in
// item order; with ErrClosed, those of the items done so far (the others
// are zero). A call without items returns at once.
func (b *Batcher[T, R]) Do(ctx context.Context, c Call[T]) ([]R, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j := &call[T, R]{results: make([]R, len(c.Items)), left: len(c.Items), done: make(chan struct{}),
		n: len(c.Items), series: c.Series, rev: c.Rev}
	if len(c.Items) == 0 {
		return j.results, nil
	}
	now := time.Now()
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	for i, v := range c.Items {
		b.queues[c.Key] = append(b.queues[c.Key], entry[T, R]{c: j, i: i, v: v, size: b.weigh(v), at: now})
	}
	b.dispatch(now)
	b.mu.Unlock()
	select {
	case <-j.done:
		return j.results, j.err
	case <-ctx.Done():
		b.mu.Lock()
		b.finish(j, ctx.Err())
		b.mu.Unlock()
		return nil, ctx.Err()
	}
}

// Queued returns the number of items of key waiting for a batch.
func (b *Batcher[T, R]) Queued(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queues[key])
}

// cut returns how many items from the front of q the next batch takes;
// full tells whether the batch cannot grow (it stopped before the queue's
// end, or holds Size items).
func (b *Batcher[T, R]) cut(key string, q []entry[T, R]) (n int, full bool) {
	l := b.limits[key]
	size, calls := b.cfg.Size, l.Calls
	if l.Size > 0 {
		size = min(size, l.Size)
	}
	bytes, ncalls := 0, 0
	var revs map[string]uint64
	clash := func(c *call[T, R]) bool {
		if c.series == "" {
			return false
		}
		if revs == nil {
			revs = map[string]uint64{}
		}
		if r, ok := revs[c.series]; ok && r != c.rev {
			return true
		}
		revs[c.series] = c.rev
		return false
	}
	for n < len(q) {
		e := q[n]
		newCall := n == 0 || e.c != q[n-1].c
		if b.cfg.Whole && newCall {
			m, w := 0, 0 // the call's items, adjacent in q
			for n+m < len(q) && q[n+m].c == e.c {
				w += q[n+m].size
				m++
			}
			if n > 0 && (n+m > size || b.cfg.Bytes > 0 && bytes+w > b.cfg.Bytes || calls > 0 && ncalls == calls) || clash(e.c) {
				return n, true
			}
			n, bytes, ncalls = n+m, bytes+w, ncalls+1
			continue
		}
		// A batch takes its first item whatever its size.
		if n > 0 && (n == size || b.cfg.Bytes > 0 && bytes+e.size > b.cfg.Bytes || newCall && calls > 0 && ncalls == calls) {
			return n, true
		}
		if newCall && clash(e.c) {
			return n, true
		}
		if newCall {
			ncalls++
		}
		bytes += e.size
		n++
	}
	return n, n >= size
}

// dispatch starts batches while fewer than InFlight are in flight and a
// queue holds a full batch or items whose linger is over (any, while
// closing), and arms the timer for the next linger. b.mu must be held.
func (b *Batcher[T, R]) dispatch(now time.Time) {
	var next time.Time
	for b.inflight < b.cfg.InFlight && !b.aborted {
		key, n, found := "", 0, false
		var oldest time.Time
		next = time.Time{}
		for k, q := range b.queues {
			m, full := b.cut(k, q)
			due := q[0].at.Add(b.cfg.Linger)
			if !full && !b.closing && due.After(now) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				continue
			}
			if !found || q[0].at.Before(oldest) {
				key, n, oldest, found = k, m, q[0].at, true
			}
		}
		if !found {
			break
		}
		b.start(key, n)
	}
	if next.IsZero() || b.closing || !b.deadline.IsZero() && !next.Before(b.deadline) {
		return
	}
	b.deadline = next
	if b.timer == nil {
		b.timer = time.AfterFunc(next.Sub(now), b.wake)
	} else {
		b.timer.Reset(next.Sub(now))
	}
}

// wake dispatches when the oldest queued item's linger is over.
func (b *Batcher[T, R]) wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deadline = time.Time{}
	b.dispatch(time.Now())
}

// start takes the first n items of key's queue into a batch and sends it.
// b.mu must be held.
func (b *Batcher[T, R]) start(key string, n int) {
	q := b.queues[key]
	entries := q[:n:n]
	if n == len(q) {
		delete(b.queues, key)
	} else {
		b.queues[key] = q[n:]
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &flight{cancel: cancel}
	batch := &Batch[T]{Key: key, Items: make([]T, n), mu: &b.mu, owner: make([]callState, n), call: make([]int, n), item: make([]int, n)}
	for k, e := range entries {
		if k == 0 || e.c != entries[k-1].c { // a call's items are adjacent
			f.live++
			e.c.flights = append(e.c.flights, f)
			batch.calls++
		}
		batch.Items[k], batch.owner[k], batch.call[k], batch.item[k] = e.v, e.c, batch.calls-1, e.i
	}
	b.flights[f] = true
	b.inflight++
	b.batches.Go(func() { b.run(ctx, f, batch, entries) })
}

// run sends one batch and hands each call its results or the error of its
// items.
func (b *Batcher[T, R]) run(ctx context.Context, f *flight, batch *Batch[T], entries []entry[T, R]) {
	defer f.cancel()
	results, errs := b.send(ctx, batch)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	delete(b.flights, f)
	for k, e := range entries {
		j := e.c
		if j.over {
			continue
		}
		if errs != nil && errs[k] != nil {
			err := errs[k]
			if b.aborted {
				err = ErrClosed
			}
			b.finish(j, err)
			continue
		}
		if results != nil {
			j.results[e.i] = results[k]
		}
		if j.left--; j.left == 0 {
			b.finish(j, nil)
		}
	}
	b.dispatch(time.Now())
}

// finish ends a call's wait with err (nil: every result is in): its queued
// items are dropped and the batches only it still waited for are
// cancelled. b.mu must be held.
func (b *Batcher[T, R]) finish(j *call[T, R], err error) {
	if j.over {
		return
	}
	j.over, j.err = true, err
	close(j.done)
	for _, f := range j.flights {
		if f.live--; f.live == 0 {
			f.cancel()
		}
	}
	j.flights = nil
	if err == nil {
		return
	}
	for key, q := range b.queues {
		kept := q[:0]
		for _, e := range q {
			if e.c != j {
				kept = append(kept, e)
			}
		}
		clear(q[len(kept):])
		if len(kept) == 0 {
			delete(b.queues, key)
		} else {
			b.queues[key] = kept
		}
	}
}

// Close stops taking calls (Do returns ErrClosed), sends what is queued at
// once and waits for every batch to return. When ctx ends first (or has
// ended already: nothing more is sent), the batches in flight are
// cancelled, the calls still waiting end with ErrClosed, and Close returns
// ctx's error once the batches have returned.
func (b *Batcher[T, R]) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closing = true
	if b.timer != nil {
		b.timer.Stop()
	}
	if ctx.Err() == nil {
		b.dispatch(time.Now())
	}
	b.mu.Unlock()
	returned := make(chan struct{})
	go func() {
		b.batches.Wait()
		close(returned)
	}()
	if ctx.Err() == nil {
		select {
		case <-returned: // nothing is queued once no batch is in flight
			return nil
		case <-ctx.Done():
		}
	}
	b.mu.Lock()
	b.aborted = true
	for f := range b.flights {
		f.cancel()
	}
	var queued []*call[T, R]
	for _, q := range b.queues {
		for _, e := range q {
			queued = append(queued, e.c)
		}
	}
	clear(b.queues)
	for _, j := range queued {
		b.finish(j, ErrClosed)
	}
	b.mu.Unlock()
	<-returned
	return ctx.Err()
}
