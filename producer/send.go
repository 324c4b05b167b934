package producer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnavailable means a run stopped publishing because no publish
// succeeded for longer than RetryOptions.RetryFor: the server or the
// stream is unreachable, has no leader, or refuses. Documents not yet
// accepted are counted as failed.
var ErrUnavailable = errors.New("producer: publishing stopped: the server is unavailable")

// RetryOptions bound how publishes whose PubAck did not come are retried.
// Retries are concurrent (every failed publish of the window is re-sent
// with its own message, so its Nats-Msg-Id) and gated: while the server
// answers no publish, one probe publish per backoff interval goes out and
// the others wait; the first publish that succeeds releases them all.
type RetryOptions struct {
	// RetryFor is how long publishing may fail without a single success
	// before the run gives up with ErrUnavailable (default 2 minutes;
	// negative: give up at the first failure, no retries).
	RetryFor time.Duration
	// Wait is the first delay before probing a server that stopped
	// answering, doubled for each probe up to MaxWait and jittered
	// (default 250 ms).
	Wait time.Duration
	// MaxWait caps the delay between probes (default 2 s).
	MaxWait time.Duration
	// AckTimeout bounds the wait for a PubAck (default 10 s).
	AckTimeout time.Duration
}

// DefaultRetryFor is RetryOptions.RetryFor's default.
const DefaultRetryFor = 2 * time.Minute

func (o RetryOptions) withDefaults() RetryOptions {
	if o.RetryFor == 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.Wait <= 0 {
		o.Wait = 250 * time.Millisecond
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 2 * time.Second
	}
	o.MaxWait = max(o.MaxWait, o.Wait)
	if o.AckTimeout <= 0 {
		o.AckTimeout = 10 * time.Second
	}
	return o
}

// DefaultMaxPendingBytes bounds the bytes of the requests awaiting their
// PubAck, whatever their number: with 1 MiB documents, 1024 in flight
// would otherwise hold 1 GiB.
const DefaultMaxPendingBytes = 64 << 20

// byteUnit is the granularity of the in-flight byte budget.
const byteUnit = 64 << 10

// outgoing is one request on its way: the message (its Nats-Msg-Id set
// once, reused by every retry) and what the report needs.
type outgoing struct {
	msg   *nats.Msg
	id    string
	line  int // stdin line, 0 otherwise
	bytes int
	del   bool

	tokens int       // byte budget held while in flight
	start  time.Time // when the first publish went out
	fut    jetstream.PubAckFuture
	ack    *jetstream.PubAck
	err    error

	// done is closed by the request's retry goroutine when it has one
	// (nil: settled by the collector).
	done    chan struct{}
	retries int  // re-sends
	gaveUp  bool // failed because the run gave up
}

// publisher is what the sender needs of a JetStream context.
type publisher interface {
	PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
	PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// sender publishes asynchronously with at most maxPending requests (and
// maxBytes of them) awaiting their PubAck and checks every PubAck. A
// publish that failed for a reason that is not the message's is retried
// by a goroutine of its own with the same message (so the duplicate window
// drops a copy that did arrive), through the gate; the results are
// settled in publish order.
//
// Two goroutines keep the order: the collector takes the requests in
// publish order and waits for each PubAck until its own deadline (its
// publish time plus AckTimeout: the deadlines pass in order, so waiting in
// order costs nothing), starting a retry for a failure; the settler takes
// them in the same order and waits for each retry to end.
type sender struct {
	js       publisher
	retry    RetryOptions
	sem      chan struct{}
	bytes    chan struct{} // one token per byteUnit in flight
	pending  chan *outgoing
	settling chan *outgoing
	done     chan struct{}
	settle   func(*outgoing)
	pace     pacer
	gate     *gate

	inFlight    atomic.Int64 // retries awaiting their PubAck
	maxInFlight atomic.Int64 // the most at once
}

// newSender starts the collector and the settler; settle is called once
// per request, in publish order, from the settler goroutine. ctx bounds
// the retries; close ends both goroutines.
func newSender(ctx context.Context, js publisher, maxPending, maxBytes int, rate float64, retry RetryOptions, settle func(*outgoing)) *sender {
	if maxPending <= 0 {
		maxPending = 256
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPendingBytes
	}
	retry = retry.withDefaults()
	s := &sender{
		js: js, retry: retry,
		sem:      make(chan struct{}, maxPending),
		bytes:    make(chan struct{}, max(1, maxBytes/byteUnit)),
		pending:  make(chan *outgoing, maxPending),
		settling: make(chan *outgoing, maxPending),
		done:     make(chan struct{}),
		settle:   settle,
		pace:     newPacer(rate),
		gate:     newGate(retry),
	}
	go s.collect(ctx)
	go s.settleInOrder()
	return s
}

// failed returns the error that made the sender give up, or nil.
func (s *sender) failed() error { return s.gate.failed() }

// send publishes o without waiting for its PubAck; it blocks while
// maxPending requests are outstanding, while the server is not answering
// (until a probe succeeds) or the rate limit says wait. After the sender
// gave up it returns the ErrUnavailable error.
func (s *sender) send(ctx context.Context, o *outgoing) error {
	if err := s.pace.wait(ctx); err != nil {
		return err
	}
	if err := s.gate.waitUp(ctx); err != nil {
		return err
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Only this goroutine acquires byte tokens and a request never needs
	// more than the budget, so taking them one by one cannot deadlock.
	o.tokens = min(cap(s.bytes), max(1, (len(o.msg.Data)+byteUnit-1)/byteUnit))
	for i := range o.tokens {
		select {
		case s.bytes <- struct{}{}:
		case <-ctx.Done():
			for range i {
				<-s.bytes
			}
			<-s.sem
			return ctx.Err()
		}
	}
	o.start = time.Now()
	o.fut, o.err = s.js.PublishMsgAsync(o.msg)
	s.pending <- o
	return nil
}

// close waits until every request sent has settled.
func (s *sender) close() {
	close(s.pending)
	<-s.done
	s.gate.stop()
}

func (s *sender) collect(ctx context.Context) {
	defer close(s.settling)
	// The JetStream context may have no async publish timeout: a PubAck
	// that never comes must not hang the run, so the wait is bounded here
	// too.
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for o := range s.pending {
		if o.err == nil {
			select {
			case ack := <-o.fut.Ok():
				o.ack = ack
			case err := <-o.fut.Err():
				o.err = err
			default:
				timer.Reset(time.Until(o.start.Add(s.retry.AckTimeout)))
				select {
				case ack := <-o.fut.Ok():
					o.ack = ack
				case err := <-o.fut.Err():
					o.err = err
				case <-timer.C:
					o.err = jetstream.ErrAsyncPublishTimeout
				}
			}
		}
		switch {
		case o.err == nil:
			s.gate.success(o.start)
		case messageFault(o.err):
			s.gate.success(o.start) // the server answered; the message is at fault
		default:
			s.gate.failure(o.start, o.err)
			o.done = make(chan struct{})
			go s.retryPublish(ctx, o)
		}
		s.settling <- o
	}
}

func (s *sender) settleInOrder() {
	defer close(s.done)
	for o := range s.settling {
		if o.done != nil {
			<-o.done
		}
		for range o.tokens {
			<-s.bytes
		}
		<-s.sem
		if o.err != nil {
			o.err = fmt.Errorf("producer: publish %q: %w", o.id, o.err)
		}
		s.settle(o)
	}
}

// retryPublish re-sends o through the gate until a PubAck arrives, the
// message is refused for itself, ctx ends or the sender gives up.
func (s *sender) retryPublish(ctx context.Context, o *outgoing) {
	defer close(o.done)
	for {
		if err := s.gate.enter(ctx); err != nil {
			if errors.Is(err, ErrUnavailable) {
				o.err, o.gaveUp = err, true
			} else {
				o.err = fmt.Errorf("%w (retrying after %w)", err, o.err)
			}
			return
		}
		o.retries++
		n := s.inFlight.Add(1)
		for m := s.maxInFlight.Load(); n > m && !s.maxInFlight.CompareAndSwap(m, n); m = s.maxInFlight.Load() {
		}
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, s.retry.AckTimeout)
		ack, err := s.js.PublishMsg(actx, o.msg)
		cancel()
		s.inFlight.Add(-1)
		if err == nil {
			s.gate.success(start)
			o.ack, o.err = ack, nil
			return
		}
		o.err = err
		if ctx.Err() != nil {
			return
		}
		if messageFault(err) {
			s.gate.success(start)
			return
		}
		s.gate.failure(start, err)
	}
}

// messageFault reports whether a publish failed because of the message
// itself (too large, a bad header): retrying cannot help, and the server
// is not at fault.
func messageFault(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 400 && apiErr.Code < 500
	}
	return errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrHeadersNotSupported) || errors.Is(err, nats.ErrBadHeaderMsg)
}

// gate holds publishing back while the server answers no publish. It is
// up until a publish fails (unless a publish that started later has
// succeeded: then the failure says nothing new); then it is down:
// new publishes wait, and the retries wait for their turn to probe, one
// per backoff interval (Wait, doubled per probe up to MaxWait, each
// jittered to between half and all of it). The first publish that
// succeeds brings it up and every waiting retry goes at once. A probe
// that hangs does not hold back the next one. When it has been down for
// RetryFor, or the connection is closed, it gives up for good.
type gate struct {
	retry RetryOptions

	lastOK  atomic.Int64 // UnixNano start of the latest-started success
	isDown  atomic.Bool  // mirrors down, read without the lock
	stopped atomic.Bool  // mirrors err != nil

	mu      sync.Mutex
	down    bool
	since   time.Time // when it went down
	next    time.Time // the earliest next probe
	wait    time.Duration
	lastErr error
	err     error         // set when it gave up
	changed chan struct{} // closed and replaced on every change
	timer   *time.Timer   // wakes the waiters when the next probe is due

	outages     int
	probes      int
	unavailable time.Duration // time spent down, finished outages
}

func newGate(retry RetryOptions) *gate {
	return &gate{retry: retry, wait: retry.Wait, changed: make(chan struct{})}
}

// broadcast wakes every waiter; called with mu held.
func (g *gate) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// jitter returns a delay between half and all of d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// schedule sets the next probe d from now; called with mu held.
func (g *gate) schedule(now time.Time, d time.Duration) {
	d = jitter(d)
	g.next = now.Add(d)
	if g.timer == nil {
		g.timer = time.AfterFunc(d, g.wake)
	} else {
		g.timer.Reset(d)
	}
}

func (g *gate) wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.broadcast()
}

// success records a PubAck (or an answer refusing the message) for a
// publish started at start.
func (g *gate) success(start time.Time) {
	for t, ok := start.UnixNano(), g.lastOK.Load(); t > ok && !g.lastOK.CompareAndSwap(ok, t); ok = g.lastOK.Load() {
	}
	if !g.isDown.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down && g.err == nil {
		g.down = false
		g.isDown.Store(false)
		g.unavailable += time.Since(g.since)
		g.wait = g.retry.Wait
		g.broadcast()
	}
}

// failure records a publish started at start that failed with err.
func (g *gate) failure(start time.Time, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastErr = err
	if g.err != nil {
		return
	}
	now := time.Now()
	switch {
	case errors.Is(err, nats.ErrConnectionClosed):
		g.giveUp(now, err)
	case g.down:
		if now.Sub(g.since) >= g.retry.RetryFor {
			g.giveUp(now, err)
		}
	case start.UnixNano() < g.lastOK.Load():
		// A publish sent later has succeeded: the server has answered since.
	default:
		g.down = true
		g.isDown.Store(true)
		g.since = now
		g.outages++
		g.wait = g.retry.Wait
		if g.retry.RetryFor < 0 {
			g.giveUp(now, err)
			return
		}
		g.schedule(now, g.wait)
	}
}

// giveUp stops the gate for good; called with mu held.
func (g *gate) giveUp(now time.Time, last error) {
	if g.down {
		g.err = fmt.Errorf("%w (no publish succeeded for %v, the limit is %v; last error: %w)",
			ErrUnavailable, now.Sub(g.since).Round(time.Millisecond), max(g.retry.RetryFor, 0), last)
	} else {
		g.err = fmt.Errorf("%w (%w)", ErrUnavailable, last)
	}
	g.stopped.Store(true)
	g.broadcast()
}

// enter returns when a retry may go: at once while up, else when it is
// this retry's turn to probe. It fails with ctx's error or, once the gate
// gave up, ErrUnavailable.
func (g *gate) enter(ctx context.Context) error {
	return g.await(ctx, true)
}

// waitUp returns when the gate is up; new publishes do not probe.
func (g *gate) waitUp(ctx context.Context) error {
	if !g.isDown.Load() && !g.stopped.Load() {
		return nil
	}
	return g.await(ctx, false)
}

func (g *gate) await(ctx context.Context, probe bool) error {
	for {
		g.mu.Lock()
		if g.err != nil {
			g.mu.Unlock()
			return g.err
		}
		if !g.down {
			g.mu.Unlock()
			return nil
		}
		now := time.Now()
		if probe && !now.Before(g.next) {
			if now.Sub(g.since) >= g.retry.RetryFor {
				g.giveUp(now, g.lastErr)
				err := g.err
				g.mu.Unlock()
				return err
			}
			g.probes++
			g.wait = min(2*g.wait, g.retry.MaxWait)
			g.schedule(now, g.wait)
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// failed returns the error the gate gave up with, or nil.
func (g *gate) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// outage reports how many times the gate went down, for how long in all
// (an outage not over counts until now) and how many probes went out.
func (g *gate) outage() (outages int, down time.Duration, probes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	down = g.unavailable
	if g.down {
		down += time.Since(g.since)
	}
	return g.outages, down, g.probes
}

// stop releases the gate's timer.
func (g *gate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
	}
}

// pacer spaces sends to at most rate per second (0: no limit). It is used
// from one goroutine.
type pacer struct {
	interval time.Duration
	next     time.Time
}

func newPacer(rate float64) pacer {
	if rate <= 0 {
		return pacer{}
	}
	return pacer{interval: time.Duration(float64(time.Second) / rate)}
}

func (p *pacer) wait(ctx context.Context) error {
	if p.interval == 0 {
		return nil
	}
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	d := p.next.Sub(now)
	p.next = p.next.Add(p.interval)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
