package producer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"
)

// ErrUnavailable means a run stopped publishing because no publish
// succeeded for RetryOptions.RetryFor; documents not yet accepted count
// as failed.
var ErrUnavailable = errors.New("producer: publishing stopped: the server is unavailable")

// RetryOptions bound the retries of publishes whose PubAck did not come
// (the package doc says how they go).
type RetryOptions struct {
	// RetryFor is how long publishing may fail without a single success
	// before the run gives up with ErrUnavailable (default 1 minute;
	// negative: at the first failure). Keep AckTimeout + RetryFor under
	// the stream's duplicate window (the package doc says why).
	RetryFor time.Duration
	// Wait is the first delay before probing a server that stopped
	// answering, doubled per probe up to MaxWait (default 250 ms).
	Wait time.Duration
	// MaxWait caps the delay between probes (default 2 s).
	MaxWait time.Duration
	// AckTimeout bounds the wait for a PubAck (default 10 s).
	AckTimeout time.Duration
	// StallTimeout is how long requests may await their PubAck without
	// any PubAck arriving before the server counts as silent (default
	// 1 s, at most AckTimeout).
	StallTimeout time.Duration
}

// DefaultRetryFor is RetryOptions.RetryFor's default.
const DefaultRetryFor = time.Minute

func (o RetryOptions) withDefaults() RetryOptions {
	o.RetryFor = cmp.Or(o.RetryFor, DefaultRetryFor)
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
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Second
	}
	o.StallTimeout = min(o.StallTimeout, o.AckTimeout)
	return o
}

// DefaultMaxPendingBytes bounds the bytes of the requests awaiting their
// PubAck, whatever their number: with 1 MiB documents, 1024 in flight
// would otherwise hold 1 GiB.
const DefaultMaxPendingBytes = 64 << 20

// byteUnit is the granularity of the in-flight byte budget.
const byteUnit = 64 << 10

// outgoing is one request on its way, its message reused by every retry.
type outgoing struct {
	msg   *nats.Msg
	span  trace.Span // the send span, ended when settled
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

// sender is the single-publish path of the package doc: asynchronous
// publishes, bounded in number and bytes, retried through the gate.
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

// send publishes o without waiting for its PubAck; it blocks while the
// bounds, the gate or the rate limit say wait. After the sender gave up
// it returns the ErrUnavailable error.
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
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for o := range s.pending {
		if o.err == nil {
			s.await(o, timer)
		}
		switch classify(o.err) {
		case published, refused: // refused: the server answered, the message is at fault
			s.gate.success(o.start)
		case busy:
			s.gate.success(o.start)
			o.done = make(chan struct{})
			go s.retryPublish(ctx, o)
		default:
			s.gate.failure(o.start, o.err)
			o.done = make(chan struct{})
			go s.retryPublish(ctx, o)
		}
		s.settling <- o
	}
}

// errNoPubAck is the error of a request whose PubAck is presumed lost.
var errNoPubAck = errors.New("no PubAck: the server stopped answering")

// await waits for o's PubAck until the first of: the PubAck or an error;
// o's deadline (the JetStream context may have no async publish timeout);
// StallTimeout without any PubAck seen; an outage that began after o went
// out (a stream leader gone loses PubAcks without an error: waiting out
// AckTimeout for each would cost the outage plus AckTimeout).
func (s *sender) await(o *outgoing, timer *time.Timer) {
	select {
	case ack := <-o.fut.Ok():
		o.ack = ack
		return
	case err := <-o.fut.Err():
		o.err = err
		return
	default:
	}
	deadline := o.start.Add(s.retry.AckTimeout)
	for {
		changed := s.gate.changes()
		if s.gate.downSince(o.start) {
			o.err = errNoPubAck
			return
		}
		now := time.Now()
		quiet := s.gate.lastSeenAt()
		if quiet.Before(o.start) {
			quiet = o.start
		}
		if now.Sub(quiet) >= s.retry.StallTimeout {
			o.err = fmt.Errorf("%w for %v", errNoPubAck, now.Sub(quiet).Round(time.Millisecond))
			return
		}
		if !now.Before(deadline) {
			o.err = jetstream.ErrAsyncPublishTimeout
			return
		}
		timer.Reset(min(deadline.Sub(now), quiet.Add(s.retry.StallTimeout).Sub(now)))
		select {
		case ack := <-o.fut.Ok():
			o.ack = ack
			return
		case err := <-o.fut.Err():
			o.err = err
			return
		case <-changed:
		case <-timer.C:
		}
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
		// A request the server said it was busy with waits a jittered Wait.
		if classify(o.err) == busy && sleep(ctx, jitter(s.retry.Wait)) != nil {
			o.err = fmt.Errorf("%w (retrying after %w)", ctx.Err(), o.err)
			return
		}
		epoch, err := s.gate.await(ctx, true)
		if err != nil {
			if errors.Is(err, ErrUnavailable) {
				o.err, o.gaveUp = err, true
			} else {
				o.err = fmt.Errorf("%w (retrying after %w)", err, o.err)
			}
			return
		}
		o.retries++
		start := time.Now()
		// The attempt is abandoned when the gate changes state: sent while
		// up, its PubAck is presumed lost in the outage that began; a
		// probe that hangs while another succeeded goes again at once.
		actx, cancel := context.WithTimeout(ctx, s.retry.AckTimeout)
		stop := context.AfterFunc(epoch, cancel)
		ack, err := s.js.PublishMsg(actx, o.msg)
		stop()
		cancel()
		o.ack, o.err = ack, err
		if ctx.Err() != nil && err != nil {
			return
		}
		if err != nil && epoch.Err() != nil {
			continue // superseded: through the gate again
		}
		switch classify(err) {
		case published, refused:
			s.gate.success(start)
			return
		case busy:
			s.gate.success(start)
		default:
			s.gate.failure(start, err)
		}
	}
}

// outcome is what a publish's result says.
type outcome int

const (
	// published: the PubAck came (a duplicate's included).
	published outcome = iota
	// refused: the server refused the message for itself: retrying
	// cannot help, and the server is up.
	refused
	// busy: the server asks to come back: retry this request after a
	// pause, the server is up.
	busy
	// unanswered: the server may be down; retry through the gate.
	unanswered
)

// JetStream error codes classify does not find in package jetstream.
const (
	errCodeHeaderTooLarge     jetstream.ErrorCode = 10097
	errCodeStreamSealed       jetstream.ErrorCode = 10109
	errCodeDuplicateInProcess jetstream.ErrorCode = 10158
	errCodeTooManyRequests    jetstream.ErrorCode = 10167
)

func classify(err error) outcome {
	if err == nil {
		return published
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamMessageExceedsMaximum, errCodeHeaderTooLarge, errCodeStreamSealed:
			return refused
		case errCodeDuplicateInProcess, errCodeTooManyRequests:
			return busy
		}
		return unanswered
	}
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrHeadersNotSupported) || errors.Is(err, nats.ErrBadHeaderMsg) {
		return refused
	}
	return unanswered
}

// gate holds publishing back while the server answers no publish: down
// at a failure, probing one retry per backoff interval, up at the first
// success, giving up after RetryFor or when the connection is closed (the
// package doc has the rules).
type gate struct {
	retry RetryOptions

	lastOK   atomic.Int64 // UnixNano start of the latest-started success
	lastSeen atomic.Int64 // UnixNano of the latest success seen
	downAt   atomic.Int64 // UnixNano of the latest outage's start
	isDown   atomic.Bool  // mirrors down, read without the lock
	stopped  atomic.Bool  // mirrors err != nil

	mu      sync.Mutex
	down    bool
	since   time.Time // when it went down
	next    time.Time // the earliest next probe
	wait    time.Duration
	lastErr error
	err     error         // set when it gave up
	changed chan struct{} // closed and replaced on every change
	// epoch ends when the gate goes down or up (or gives up): an attempt
	// made before then is superseded (see retryPublish).
	epoch    context.Context
	endEpoch context.CancelFunc
	timer    *time.Timer // wakes the waiters when the next probe is due

	outages     int
	probes      int
	unavailable time.Duration // time spent down, finished outages
}

func newGate(retry RetryOptions) *gate {
	g := &gate{retry: retry, wait: retry.Wait, changed: make(chan struct{})}
	g.epoch, g.endEpoch = context.WithCancel(context.Background())
	g.lastSeen.Store(time.Now().UnixNano())
	return g
}

// changes returns a channel closed at the gate's next change.
func (g *gate) changes() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// downSince reports whether an outage began after start: a request sent
// at start that still awaits its PubAck has presumably lost it.
func (g *gate) downSince(start time.Time) bool {
	return start.UnixNano() < g.downAt.Load()
}

func (g *gate) lastSeenAt() time.Time { return time.Unix(0, g.lastSeen.Load()) }

// broadcast wakes every waiter; called with mu held.
func (g *gate) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// flip ends the epoch and starts the next; called with mu held.
func (g *gate) flip() {
	g.endEpoch()
	g.epoch, g.endEpoch = context.WithCancel(context.Background())
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

// success records an answer (a PubAck, or a refusal of the message) to a
// publish started at start.
func (g *gate) success(start time.Time) {
	g.lastSeen.Store(time.Now().UnixNano())
	for t, ok := start.UnixNano(), g.lastOK.Load(); t > ok && !g.lastOK.CompareAndSwap(ok, t); ok = g.lastOK.Load() {
	}
	if !g.isDown.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down && g.err == nil {
		g.down = false
		g.flip()
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
		g.flip()
		g.isDown.Store(true)
		g.since = now
		g.downAt.Store(now.UnixNano())
		g.outages++
		g.broadcast()
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
	g.flip()
	g.broadcast()
}

// waitUp returns when the gate is up; new publishes do not probe.
func (g *gate) waitUp(ctx context.Context) error {
	if !g.isDown.Load() && !g.stopped.Load() {
		return nil
	}
	_, err := g.await(ctx, false)
	return err
}

// await returns when the caller may publish, with the epoch it entered
// in: at once while up, else, for a retry (probe), when it is its turn to
// probe; a new publish (waitUp) waits for the gate to come up. It fails
// with ctx's error or, once the gate gave up, ErrUnavailable.
func (g *gate) await(ctx context.Context, probe bool) (context.Context, error) {
	for {
		g.mu.Lock()
		if g.err != nil {
			g.mu.Unlock()
			return nil, g.err
		}
		if !g.down {
			epoch := g.epoch
			g.mu.Unlock()
			return epoch, nil
		}
		now := time.Now()
		if probe && !now.Before(g.next) {
			if now.Sub(g.since) >= g.retry.RetryFor {
				g.giveUp(now, g.lastErr)
				err := g.err
				g.mu.Unlock()
				return nil, err
			}
			g.probes++
			g.wait = min(2*g.wait, g.retry.MaxWait)
			g.schedule(now, g.wait)
			epoch := g.epoch
			g.mu.Unlock()
			return epoch, nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
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
// (until now for one not over) and how many probes went out.
func (g *gate) outage() (outages int, down time.Duration, probes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	down = g.unavailable
	if g.down {
		down += time.Since(g.since)
	}
	return g.outages, down, g.probes
}

// stop releases the gate's timer and epoch.
func (g *gate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
	}
	g.endEpoch()
}

// pacer spaces one goroutine's sends to at most rate a second (0: no limit).
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
	return sleep(ctx, d)
}

// sleep waits for d, or fails with ctx's error when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
