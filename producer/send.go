package producer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/internal/outage"
)

// ErrUnavailable means a run stopped publishing because no publish
// succeeded for RetryOptions.RetryFor; documents not yet accepted count
// as failed.
var ErrUnavailable = errors.New("producer: publishing stopped: the server is unavailable")

// RetryOptions bound the retries of publishes whose PubAck did not come
// (docs/design.md, "The producer", says how they go).
type RetryOptions struct {
	// RetryFor is how long publishing may fail without a single success
	// before the run gives up with ErrUnavailable (default 1 minute;
	// negative: at the first failure). Keep AckTimeout + RetryFor under
	// the stream's duplicate window (docs/cli.md, "Sending documents", says why).
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
	msg  *nats.Msg
	span trace.Span // the send span, ended when settled
	id   string
	// tenant is the document's tenant ("" for none): with id, its record.
	tenant string
	line   int // stdin line, 0 otherwise
	bytes  int
	del    bool

	tokens int       // byte budget held while in flight
	start  time.Time // when the first publish went out
	fut    jetstream.PubAckFuture
	ack    *jetstream.PubAck
	err    error

	// done is closed by the request's retry goroutine when it has one
	// (nil: settled by the collector).
	done    chan struct{}
	retries int           // re-sends
	gaveUp  bool          // failed because the run gave up
	settled chan struct{} // closed once settled (sendWait)
	// members are the documents of a bulk request (bulk.go), each
	// settled on its own; nil for a single request.
	members []member
}

// publisher is what the sender needs of a JetStream context.
type publisher interface {
	PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
	PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// dependency names the server in the producer's outages.
const dependency = "nats"

// sender is the producer's one publish path: every request of a
// backfill, a stream, Enqueue, a Batch or a replay goes through send,
// and every Object Store write through do, under one outage machine
// (package internal/outage). Publishes are asynchronous, bounded in
// number and bytes, and retried through the machine; a backfill's go in
// fast-ingest batches when the stream allows them (fastpublish.go),
// recovered through the same publishes.
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
	out      *outage.Machine
	stop     context.CancelFunc // ends the machine
	lastSeen atomic.Int64       // UnixNano of the latest answer seen
	fast     *fastSender        // nil: one publish per request
}

// newSender starts the collector, the settler and the outage machine;
// settle is called once per request, in publish order, from the settler
// goroutine. ctx bounds the retries; close ends them all. log receives
// the outage's lines (nil: none).
func newSender(ctx context.Context, js publisher, maxPending, maxBytes int, rate float64, retry RetryOptions, settle func(*outgoing), log *slog.Logger) *sender {
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
		out: outage.New(outage.Options{Logger: log, Base: retry.Wait, Max: retry.MaxWait, GiveUpAfter: retry.RetryFor, GiveUpErr: ErrUnavailable,
			DownMessage: "NATS server not answering: holding publishes and retrying", UpMessage: "NATS server answering again: resuming"}),
	}
	s.lastSeen.Store(time.Now().UnixNano())
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	go s.out.Run(mctx)
	go s.collect(ctx)
	go s.settleInOrder()
	return s
}

// failed returns the error that made the sender give up, or nil.
func (s *sender) failed() error { return s.out.Err() }

// outages reports how many times the server went down, for how long in
// all and how many probes went out.
func (s *sender) outages() (int, time.Duration, int) {
	st := s.out.Stats()
	return st.Outages, st.Down, st.Turns
}

// send publishes o without waiting for its PubAck, in the current
// fast-ingest batch or on its own; it blocks while the bounds, an outage
// or the rate limit say wait. After the sender gave up it returns the
// ErrUnavailable error. A request it took is settled once.
func (s *sender) send(ctx context.Context, o *outgoing) error {
	if s.fast != nil {
		return s.fast.send(ctx, o)
	}
	return s.publish(ctx, o)
}

// finish settles o and wakes sendWait.
func (s *sender) finish(o *outgoing) {
	s.settle(o)
	if o.settled != nil {
		close(o.settled)
	}
}

// sendWait sends o and waits until it settled.
func (s *sender) sendWait(ctx context.Context, o *outgoing) error {
	o.settled = make(chan struct{})
	if err := s.send(ctx, o); err != nil {
		return err
	}
	<-o.settled
	return nil
}

// publish is one asynchronous publish of o, retried through the outage
// machine until its PubAck comes.
func (s *sender) publish(ctx context.Context, o *outgoing) error {
	if err := s.pace.wait(ctx, len(o.members)); err != nil {
		return err
	}
	if s.out.Down() || s.out.Err() != nil {
		if _, err := s.out.Await(ctx, false); err != nil {
			return err
		}
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

// close commits the fast-ingest batch in flight, waits until every
// request sent has settled, and stops the outage machine.
func (s *sender) close(ctx context.Context) {
	if s.fast != nil {
		s.fast.flush(ctx, s.retry.AckTimeout)
	}
	close(s.pending)
	<-s.done
	s.stop()
}

// answered records an answer from the server (a PubAck, or a refusal of
// the message) to work started at start.
func (s *sender) answered(start time.Time) {
	s.lastSeen.Store(time.Now().UnixNano())
	s.out.Succeed(start)
}

// unanswered records work started at start that got no answer.
func (s *sender) unanswered(start time.Time, err error) {
	if errors.Is(err, nats.ErrConnectionClosed) {
		s.out.GiveUp(err)
		return
	}
	s.out.Fail(dependency, err, start)
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
			s.answered(o.start)
		case busy:
			s.answered(o.start)
			o.done = make(chan struct{})
			go s.retryPublish(ctx, o)
		default:
			s.unanswered(o.start, o.err)
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
// StallTimeout without any answer seen; an outage that began after o went
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
		changed := s.out.Changes()
		if s.out.Began(o.start) {
			o.err = errNoPubAck
			return
		}
		now := time.Now()
		quiet := time.Unix(0, s.lastSeen.Load())
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
		s.finish(o)
		if s.fast != nil {
			s.fast.recovering.Done() // every single publish of a batched run is a recovery
		}
	}
}

// retryPublish re-sends o until a PubAck arrives, the message is refused
// for itself, ctx ends or the sender gives up.
func (s *sender) retryPublish(ctx context.Context, o *outgoing) {
	defer close(o.done)
	err := s.do(ctx, o.err, func(ctx context.Context) error {
		o.retries++
		ctx, cancel := context.WithTimeout(ctx, s.retry.AckTimeout)
		defer cancel()
		ack, err := s.js.PublishMsg(ctx, o.msg)
		o.ack = ack
		return err
	})
	o.err = err
	o.gaveUp = errors.Is(err, ErrUnavailable)
}

// do runs op, after a first failure last (nil: none yet), until it
// succeeds, fails for itself, ctx ends or the sender gives up: while the
// server answers nothing, it waits for its turn of the outage machine
// (one try per wait, Wait doubling to MaxWait); a try still under way
// when the server goes down or comes back up is abandoned and tried
// again; one the server was busy with waits a jittered Wait.
func (s *sender) do(ctx context.Context, last error, op func(context.Context) error) error {
	for {
		if classify(last) == busy && sleep(ctx, jitter(s.retry.Wait)) != nil {
			return fmt.Errorf("%w (retrying after %w)", ctx.Err(), last)
		}
		epoch, err := s.out.Await(ctx, last != nil)
		if err != nil {
			if last != nil && !errors.Is(err, ErrUnavailable) {
				err = fmt.Errorf("%w (retrying after %w)", err, last)
			}
			return err
		}
		start := time.Now()
		actx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(epoch, cancel)
		err = op(actx)
		stop()
		cancel()
		if err != nil && ctx.Err() != nil {
			return err
		}
		if err != nil && epoch.Err() != nil {
			last = err
			continue // superseded: through the machine again
		}
		switch classify(err) {
		case published, refused:
			s.answered(start)
			return err
		case busy:
			s.answered(start)
		default:
			s.unanswered(start, err)
		}
		last = err
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

// jitter returns a delay between half and all of d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// pacer spaces one goroutine's sends to at most rate documents a second
// (0: no limit); a bulk request counts its documents.
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

// wait waits for the turn of a send of one document, or of docs[0]
// documents (a bulk request's).
func (p *pacer) wait(ctx context.Context, docs ...int) error {
	if p.interval == 0 {
		return nil
	}
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	d := p.next.Sub(now)
	n := 1
	if len(docs) > 0 {
		n = max(docs[0], 1)
	}
	p.next = p.next.Add(time.Duration(n) * p.interval)
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
