package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// ErrRunning reports a second Run of a Client while one runs.
var ErrRunning = errors.New("embed: Run is already running")

// errClosed ends the wait of an Embed call whose texts Run did not embed
// before it ended; the call then sends them itself.
var errClosed = errors.New("embed: batching ended")

// queue gathers the inputs of concurrent Embed calls for Run.
type queue struct {
	mu      sync.Mutex
	running bool
	items   []item        // inputs waiting for a request, in arrival order
	jobs    map[*job]bool // calls waiting, queued or in a request
	wake    chan struct{} // a new input or a finished call; capacity 1
}

// item is one input waiting for a request.
type item struct {
	j  *job
	i  int       // index in j.texts
	at time.Time // when it was queued
}

// job is one Embed call waiting for Run.
type job struct {
	texts   []string
	vecs    [][]float32 // written under queue.mu until done is closed
	left    int         // inputs without a vector
	err     error
	done    chan struct{}
	over    bool       // done is closed
	flights []*flight  // requests holding inputs of this call
	span    trace.Span // the call's span, linked to its requests' spans
}

// flight is one request (with its split parts) and the calls waiting for
// it; it is cancelled when none of them waits any more.
type flight struct {
	cancel context.CancelFunc
	live   int // calls of the request still waiting
}

// Run gathers the inputs of all concurrent Embed calls into shared
// requests until ctx ends, by the rules of the package doc, and returns
// nil once its requests have returned. Run may run again afterwards; two
// at once is ErrRunning.
func (c *Client) Run(ctx context.Context) error {
	q := &c.q
	q.mu.Lock()
	if q.running {
		q.mu.Unlock()
		return ErrRunning
	}
	q.running = true
	q.jobs = map[*job]bool{}
	q.mu.Unlock()
	var requests sync.WaitGroup
	defer func() {
		q.mu.Lock()
		q.running = false
		for j := range q.jobs {
			q.finish(j, errClosed)
		}
		q.items = nil
		q.mu.Unlock()
		requests.Wait()
	}()
	for {
		if !q.waitItems(ctx) {
			return nil
		}
		if err := c.acquire(ctx); err != nil {
			return nil
		}
		items, f, fctx := c.cut(ctx)
		if items == nil {
			c.release()
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		requests.Go(func() {
			defer c.release()
			c.sendItems(ctx, fctx, f, items)
		})
	}
}

// gather queues texts for Run and waits for their vectors: nil, nil when
// Run is not running, those found so far when Run ended meanwhile.
func (c *Client) gather(ctx context.Context, texts []string) ([][]float32, error) {
	q := &c.q
	j := &job{texts: texts, vecs: make([][]float32, len(texts)), left: len(texts), done: make(chan struct{}), span: trace.SpanFromContext(ctx)}
	q.mu.Lock()
	if !q.running {
		q.mu.Unlock()
		return nil, nil
	}
	now := time.Now()
	for i := range texts {
		q.items = append(q.items, item{j: j, i: i, at: now})
	}
	q.jobs[j] = true
	q.mu.Unlock()
	q.signal()
	select {
	case <-j.done:
	case <-ctx.Done():
		q.mu.Lock()
		q.finish(j, ctx.Err())
		q.mu.Unlock()
		q.signal()
		return nil, fmt.Errorf("embed: waiting for vectors: %w", ctx.Err())
	}
	switch {
	case errors.Is(j.err, errClosed):
		return j.vecs, nil
	case j.err != nil:
		return nil, j.err
	}
	return j.vecs, nil
}

// signal wakes Run.
func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitItems waits until inputs are queued; false when ctx ended.
func (q *queue) waitItems(ctx context.Context) bool {
	for {
		q.mu.Lock()
		n := len(q.items)
		q.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return false
		}
	}
}

// cut takes the next request's inputs from the front of the queue once
// they fill a request or the oldest has waited Config.Linger. It returns
// nil when ctx ended or the queue emptied meanwhile (calls left).
func (c *Client) cut(ctx context.Context) ([]item, *flight, context.Context) {
	q := &c.q
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.mu.Unlock()
			return nil, nil, nil
		}
		n, size := 0, 0
		for n < len(q.items) && c.fits(n, size, len(q.items[n].j.texts[q.items[n].i])) {
			size += len(q.items[n].j.texts[q.items[n].i])
			n++
		}
		wait := c.cfg.Linger - time.Since(q.items[0].at)
		if n < len(q.items) || n == c.cfg.Batch || wait <= 0 {
			items := append([]item(nil), q.items[:n]...)
			q.items = append(q.items[:0:0], q.items[n:]...)
			fctx, cancel := context.WithCancel(ctx)
			f := &flight{cancel: cancel}
			for k, it := range items {
				if k == 0 || it.j != items[k-1].j { // a call's inputs are adjacent
					f.live++
					it.j.flights = append(it.j.flights, f)
				}
			}
			q.mu.Unlock()
			return items, f, fctx
		}
		q.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-q.wake:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return nil, nil, nil
		}
	}
}

// sendItems sends one request and hands each call its vectors or the
// error of its inputs.
func (c *Client) sendItems(runCtx, ctx context.Context, f *flight, items []item) {
	defer f.cancel()
	q := &c.q
	inputs := make([]string, len(items))
	for k, it := range items {
		inputs[k] = it.j.texts[it.i]
	}
	live := func(k int) bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return !items[k].j.over
	}
	span := c.tr.request(ctx, items)
	vecs, errs := c.sendSplit(ctx, inputs, live)
	span.End()
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, it := range items {
		j := it.j
		if j.over {
			continue
		}
		switch err := errs[k]; {
		case err == nil:
			j.vecs[it.i] = vecs[k]
			if j.left--; j.left == 0 {
				q.finish(j, nil)
			}
		case runCtx.Err() != nil:
			q.finish(j, errClosed) // Run is ending: the call sends the rest itself
		default:
			q.finish(j, inputError(it.i, err))
		}
	}
}

// finish ends a call's wait with err (nil: every vector is in), dropping
// its queued inputs and cancelling the requests only it waited for. q.mu
// must be held.
func (q *queue) finish(j *job, err error) {
	if j.over {
		return
	}
	j.over, j.err = true, err
	close(j.done)
	delete(q.jobs, j)
	for _, f := range j.flights {
		if f.live--; f.live == 0 {
			f.cancel()
		}
	}
	j.flights = nil
	if err != nil {
		q.items = slices.DeleteFunc(q.items, func(it item) bool { return it.j == j })
	}
}
