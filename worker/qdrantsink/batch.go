package qdrantsink

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/worker"
)

// requestOverhead is what an upsert request holds besides its points.
const requestOverhead = 1 << 10

// errClosed ends the wait of a Write whose points were still queued when
// the sink was closed.
var errClosed = errors.New("qdrantsink: sink closed")

// batcher gathers the points of concurrent Writes into shared upsert
// requests (see "Shared requests" in the package documentation): a
// request leaves when it holds Config.Batch points (or MaxRequestBytes),
// or when its oldest point has waited Config.Linger, and at most
// Config.Parallel requests are in flight. It starts no goroutine of its
// own but one per request, which ends with the request.
type batcher struct {
	s *Sink

	mu       sync.Mutex
	queues   map[string][]item // points waiting, by collection, in arrival order
	inflight int
	flights  map[*flight]bool
	timer    *time.Timer // armed for deadline, the oldest queued point's linger
	deadline time.Time
	requests sync.WaitGroup
	closed   bool
}

// item is one point waiting for a request.
type item struct {
	j    *job
	p    *qdrant.PointStruct
	size int // encoded bytes in the request
	at   time.Time
}

// job is the upsert of one Write: one version of one document.
type job struct {
	doc     worker.Doc
	left    int // points not written yet
	err     error
	done    chan struct{}
	over    bool
	flights []*flight
}

// flight is one request in flight; it is cancelled when no Write with
// points in it waits any more.
type flight struct {
	cancel context.CancelFunc
	live   int
}

// upsert queues a version's points and waits until every one of them is
// written (each request with wait=true), a request holding some fails, or
// ctx ends.
func (b *batcher) upsert(ctx context.Context, coll string, doc worker.Doc, points []*qdrant.PointStruct) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &job{doc: doc, left: len(points), done: make(chan struct{})}
	now := time.Now()
	b.mu.Lock()
	for _, p := range points {
		b.queues[coll] = append(b.queues[coll], item{j: j, p: p, size: proto.Size(p) + 8, at: now})
	}
	b.dispatch(now)
	b.mu.Unlock()
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		b.mu.Lock()
		b.finish(j, ctx.Err())
		b.mu.Unlock()
		return ctx.Err()
	}
}

// cutLen returns how many items from the front of q the next request
// takes: up to Config.Batch points and MaxRequestBytes, stopping before a
// point of another version of a document already in the request (one
// request's update_filter protects each document's newer points only if
// it holds one version of each). fits tells whether the request is full
// (it ended before the queue did).
func (b *batcher) cutLen(q []item) (n int, fits bool) {
	bytes := 0
	seqs := map[string]uint64{}
	for n < len(q) {
		it := q[n]
		// A request takes its first point whatever its size.
		if n > 0 && (n == b.s.cfg.Batch || bytes+it.size+requestOverhead > MaxRequestBytes) {
			return n, true
		}
		if seq, ok := seqs[it.j.doc.ID]; ok && seq != it.j.doc.Seq {
			return n, true
		}
		seqs[it.j.doc.ID] = it.j.doc.Seq
		bytes += it.size
		n++
	}
	return n, n == b.s.cfg.Batch
}

// dispatch starts requests while fewer than Config.Parallel are in flight
// and a queue holds a full request or points that waited Config.Linger,
// and arms the timer for the next linger. b.mu must be held.
func (b *batcher) dispatch(now time.Time) {
	var next time.Time
	for b.inflight < b.s.cfg.Parallel && !b.closed {
		coll, n := "", 0
		var oldest time.Time
		next = time.Time{}
		for c, q := range b.queues {
			k, isFull := b.cutLen(q)
			due := q[0].at.Add(b.s.cfg.Linger)
			if !isFull && due.After(now) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				continue
			}
			if coll == "" || q[0].at.Before(oldest) {
				coll, n, oldest = c, k, q[0].at
			}
		}
		if coll == "" {
			break
		}
		b.start(coll, n)
	}
	if next.IsZero() || !b.deadline.IsZero() && !next.Before(b.deadline) {
		return
	}
	b.deadline = next
	if b.timer == nil {
		b.timer = time.AfterFunc(next.Sub(now), b.wake)
	} else {
		b.timer.Reset(next.Sub(now))
	}
}

// wake dispatches when the oldest queued point's linger is over.
func (b *batcher) wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deadline = time.Time{}
	b.dispatch(time.Now())
}

// start takes the first n points of coll's queue into a request and sends
// it. b.mu must be held.
func (b *batcher) start(coll string, n int) {
	q := b.queues[coll]
	items := q[:n:n]
	if n == len(q) {
		delete(b.queues, coll)
	} else {
		b.queues[coll] = q[n:]
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &flight{cancel: cancel}
	for k, it := range items {
		if k == 0 || it.j != items[k-1].j { // a Write's points are adjacent
			f.live++
			it.j.flights = append(it.j.flights, f)
		}
	}
	b.flights[f] = true
	b.inflight++
	b.requests.Go(func() { b.send(ctx, coll, f, items) })
}

// send sends one request and tells each Write with points in it the
// outcome. A request refused as invalid (a permanent error) that holds
// several Writes' points is sent again per Write, so that only the Write
// at fault fails.
func (b *batcher) send(ctx context.Context, coll string, f *flight, items []item) {
	defer f.cancel()
	var (
		jobs   []*job
		points = make([]*qdrant.PointStruct, len(items))
		counts = map[*job]int{}
	)
	for k, it := range items {
		points[k] = it.p
		if counts[it.j]++; counts[it.j] == 1 {
			jobs = append(jobs, it.j)
		}
	}
	errs := map[*job]error{}
	err := b.s.upsertBatch(ctx, coll, updateFilter(jobs), points)
	if err != nil && fault.IsPermanent(err) && len(jobs) > 1 {
		for _, j := range jobs {
			var own []*qdrant.PointStruct
			for _, it := range items {
				if it.j == j {
					own = append(own, it.p)
				}
			}
			errs[j] = b.s.upsertBatch(ctx, coll, olderPoints(j.doc), own)
		}
	} else {
		for _, j := range jobs {
			errs[j] = err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	delete(b.flights, f)
	for _, j := range jobs {
		switch {
		case errs[j] != nil:
			b.finish(j, errs[j])
		case !j.over:
			if j.left -= counts[j]; j.left == 0 {
				b.finish(j, nil)
			}
		}
	}
	b.dispatch(time.Now())
}

// updateFilter is the update_filter of a request holding the points of
// jobs, one version of each document: the disjunction of their
// olderPoints ("Shared requests" in the package documentation).
func updateFilter(jobs []*job) *qdrant.Filter {
	if len(jobs) == 1 {
		return olderPoints(jobs[0].doc)
	}
	f := &qdrant.Filter{}
	for _, j := range jobs {
		f.Should = append(f.Should, qdrant.NewFilterAsCondition(olderPoints(j.doc)))
	}
	return f
}

// finish ends a Write's wait with err (nil: every point written): its
// queued points are dropped, and the requests that only it still waited
// for are cancelled. b.mu must be held.
func (b *batcher) finish(j *job, err error) {
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
	for coll, q := range b.queues {
		kept := q[:0]
		for _, it := range q {
			if it.j != j {
				kept = append(kept, it)
			}
		}
		clear(q[len(kept):])
		if len(kept) == 0 {
			delete(b.queues, coll)
		} else {
			b.queues[coll] = kept
		}
	}
}

// close cancels the requests in flight, ends the wait of the Writes still
// queued and waits for the requests to return.
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	for f := range b.flights {
		f.cancel()
	}
	for _, q := range b.queues {
		for _, it := range q {
			b.finish(it.j, errClosed)
		}
	}
	b.mu.Unlock()
	b.requests.Wait()
}
