package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/outage"
)

// A delivery's way, in the order of the files: pull.go fetches it and
// hands it to a processor, process.go runs the five steps, decide.go
// decides what settles it, act.go carries that out (ack, NAK, dead
// letter) and hold.go keeps it through an outage.

// task is one delivery in the worker's hands.
type task struct {
	msg       jetstream.Msg
	tries     int       // the outages it met during this delivery
	fetchedAt time.Time // when pull received it
	start     time.Time // when a processor last started on it (handle)
	// trial, set while the delivery is an outage's trial, is told
	// whether its result said anything of the dependency (serve).
	trial chan bool
}

// puller fetches deliveries and hands them to the processors; during an
// outage it fetches nothing, keeps what it has (hold.go) and hands out
// the trials.
type puller struct {
	cfg      *Config
	log      *slog.Logger
	m        *Metrics
	js       jetstream.JetStream
	out      *outage.Machine
	mu       sync.Mutex // guards consumer, held, waiting and draining
	consumer jetstream.Consumer
	held     []*task            // held during an outage, oldest first
	waiting  map[*task]struct{} // fetched, not yet taken by a processor
	draining bool               // Run is stopping: hold NAKs instead
	ready    atomic.Bool        // bound to the consumer
	lastPull atomic.Int64       // unix nanoseconds of the last fetch
}

// fetchWait is how long one pull request waits for messages; it bounds
// how long a stop waits for the pull in progress.
const fetchWait = 250 * time.Millisecond

// run fetches batches into the processors' queue until ctx ends. It
// fetches batches of up to 2 × Concurrency (at least 4) requests into a
// queue of Concurrency, so the next fetch overlaps the processing (after
// a fetch of bulk requests, cut into their requests as they arrive
// (bulk.go), as many messages as give about that many requests), and
// takes each message as it arrives (those waiting for a processor get in-progress
// acks at once). Fetch, not the library's continuous pull: that depends
// on status messages reaching a reader that may be waiting for a
// processor, and stalled for 30 s in measurements. During an outage it
// runs the trials; after it, the held deliveries go first.
func (p *puller) run(ctx context.Context, work chan<- *task) {
	batchSize := max(2*p.cfg.Workers(), 4)
	failures := 0
	for ctx.Err() == nil {
		if p.out.Down() {
			p.trial(ctx, work)
			continue
		}
		for _, t := range p.takeHeld(true) {
			p.dispatch(ctx, work, t)
		}
		if p.out.Down() {
			continue
		}
		p.lastPull.Store(time.Now().UnixNano())
		batch, err := p.current().Fetch(batchSize, jetstream.FetchMaxWait(fetchWait))
		if err == nil {
			p.ready.Store(true)
			var queued []*task
			msgs, requests := 0, 0
			for msg := range batch.Messages() {
				msgs++
				for _, m := range splitBulk(msg) {
					requests++
					t := &task{msg: m, fetchedAt: time.Now()}
					p.fetched(t)
					queued = append(queued, t)
				}
				for len(queued) > 0 && p.offer(ctx, work, queued[0]) {
					queued = queued[1:]
				}
			}
			// Bulk requests: fetch about as many requests as before.
			batchSize = max(2*p.cfg.Workers(), 4)
			if msgs > 0 && requests > msgs {
				batchSize = max(1, batchSize*msgs/requests)
			}
			for _, t := range queued {
				p.dispatch(ctx, work, t)
			}
			err = batch.Error()
		}
		if err == nil {
			failures = 0
			continue
		}
		failures++
		p.log.Warn("fetch failed", "err", err, "failures", failures)
		if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
			errors.Is(err, jetstream.ErrStreamNotFound) {
			p.ready.Store(false)
			p.rebind(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(time.Duration(failures)*100*time.Millisecond, 2*time.Second)):
		}
	}
}

// trial waits for a turn of the outage and hands held deliveries to the
// processors one at a time, until one says something of the dependency
// (written, or failed as the outage again) or none is left, which ends
// the outage: there is nothing to try.
func (p *puller) trial(ctx context.Context, work chan<- *task) {
	if _, err := p.out.Await(ctx, true); err != nil || !p.out.Down() {
		return
	}
	for ctx.Err() == nil {
		t := p.takeOne()
		if t == nil {
			p.out.Resume()
			return
		}
		done := make(chan bool, 1)
		t.trial = done
		select {
		case work <- t:
		case <-ctx.Done():
			p.taken(t)
			p.nak(t)
			return
		}
		select {
		case conclusive := <-done:
			if conclusive {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// dispatch hands t to a processor, holds it when the sink goes down while
// it waits, or NAKs it when ctx ends.
func (p *puller) dispatch(ctx context.Context, work chan<- *task, t *task) {
	if ctx.Err() == nil && !p.out.Down() {
		select {
		case work <- t:
			return
		case <-p.out.WhenDown():
		case <-ctx.Done():
		}
	}
	p.taken(t)
	if ctx.Err() == nil {
		p.hold(t)
		return
	}
	p.nak(t)
}

// offer hands t to a processor if one is free now and no outage or stop
// is under way, and reports whether it did.
func (p *puller) offer(ctx context.Context, work chan<- *task, t *task) bool {
	if ctx.Err() != nil || p.out.Down() {
		return false
	}
	select {
	case work <- t:
		return true
	default:
		return false
	}
}

// serve is a processor: it takes deliveries until work closes and hands
// each to handle, or holds it while the worker is paused and it is not a
// trial, or NAKs it while the worker stops.
func (w *Worker) serve(ctx, workCtx context.Context, work <-chan *task) {
	for t := range work {
		trial := t.trial
		t.trial = nil
		w.pull.taken(t)
		conclusive := false
		switch {
		case ctx.Err() != nil:
			w.pull.nak(t) // draining: not started yet, so hand it back at once
		case w.out.Down() && trial == nil:
			w.pull.hold(t)
		default:
			res := w.handle(workCtx, t)
			conclusive = res.Outcome == OutcomeAcked || res.Outcome == OutcomePaused
		}
		if trial != nil {
			trial <- conclusive
		}
	}
}

// fetched records that t waits for a processor; taken that it no longer
// does (a processor took it, or it was held or NAKed).
func (p *puller) fetched(t *task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting[t] = struct{}{}
}

func (p *puller) taken(t *task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.waiting, t)
}

func (p *puller) current() jetstream.Consumer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.consumer
}

// rebind sets the topology up again after the consumer (or its stream)
// disappeared, as after a server lost its state.
func (p *puller) rebind(ctx context.Context) {
	top, err := Setup(ctx, p.js, *p.cfg)
	if err != nil {
		p.log.Error("set up again failed", "err", err)
		return
	}
	p.mu.Lock()
	p.consumer = top.Consumer
	p.mu.Unlock()
	p.log.Info("consumer bound again", "consumer", p.cfg.Consumer)
}
