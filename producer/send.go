package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnavailable means a backfill stopped publishing because a request
// still failed after every retry: the server or stream is unreachable or
// refusing. Documents not yet published are counted as failed.
var ErrUnavailable = errors.New("producer: publishing stopped after a request failed every retry")

// RetryOptions bound how a failed publish is retried.
type RetryOptions struct {
	// Retries is how many times a publish whose PubAck did not come is
	// sent again with the same Nats-Msg-Id (default 5; negative: none).
	Retries int
	// Wait is the first delay between tries, doubled each time up to 10 s
	// (default 500 ms).
	Wait time.Duration
	// AckTimeout bounds the wait for a PubAck (default 10 s).
	AckTimeout time.Duration
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Wait <= 0 {
		o.Wait = 500 * time.Millisecond
	}
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

	tokens int // byte budget held while in flight
	fut    jetstream.PubAckFuture
	ack    *jetstream.PubAck
	err    error
}

// sender publishes asynchronously with at most maxPending requests (and
// maxBytes of them) awaiting their PubAck, checks every PubAck, and retries a failed publish with the
// same message (so the duplicate window drops a copy that did arrive).
// After a request fails every retry the sender is broken: later failures
// are not retried and send reports ErrUnavailable, so a dead server does
// not make a backfill of millions wait out each document's retries.
type sender struct {
	js      jetstream.JetStream
	retry   RetryOptions
	sem     chan struct{}
	bytes   chan struct{} // one token per byteUnit in flight
	pending chan *outgoing
	done    chan struct{}
	settle  func(*outgoing)
	pace    pacer

	mu     sync.Mutex
	broken bool
}

// newSender starts the PubAck collector; settle is called once per
// request, in publish order, from the collector goroutine. ctx bounds the
// retries; close ends the collector.
func newSender(ctx context.Context, js jetstream.JetStream, maxPending, maxBytes int, rate float64, retry RetryOptions, settle func(*outgoing)) *sender {
	if maxPending <= 0 {
		maxPending = 256
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPendingBytes
	}
	s := &sender{
		js: js, retry: retry.withDefaults(),
		sem:     make(chan struct{}, maxPending),
		bytes:   make(chan struct{}, max(1, maxBytes/byteUnit)),
		pending: make(chan *outgoing, maxPending),
		done:    make(chan struct{}),
		settle:  settle,
		pace:    newPacer(rate),
	}
	go s.collect(ctx)
	return s
}

func (s *sender) isBroken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// send publishes o without waiting for its PubAck; it blocks while
// maxPending requests are outstanding or the rate limit says wait.
func (s *sender) send(ctx context.Context, o *outgoing) error {
	if s.isBroken() {
		return ErrUnavailable
	}
	if err := s.pace.wait(ctx); err != nil {
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
	o.fut, o.err = s.js.PublishMsgAsync(o.msg)
	s.pending <- o
	return nil
}

// close waits until every request sent has settled.
func (s *sender) close() {
	close(s.pending)
	<-s.done
}

func (s *sender) collect(ctx context.Context) {
	defer close(s.done)
	// The JetStream context may have no async publish timeout: a PubAck
	// that never comes must not hang the run, so the wait is bounded here
	// too (from the moment the collector reaches the request).
	timer := time.NewTimer(s.retry.AckTimeout)
	defer timer.Stop()
	for o := range s.pending {
		if o.err == nil {
			timer.Reset(s.retry.AckTimeout)
			select {
			case ack := <-o.fut.Ok():
				o.ack = ack
			case err := <-o.fut.Err():
				o.err = err
			case <-timer.C:
				o.err = jetstream.ErrAsyncPublishTimeout
			}
		}
		if o.err != nil {
			s.retryPublish(ctx, o)
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

// retryPublish re-sends o synchronously until a PubAck arrives or the
// retries are spent.
func (s *sender) retryPublish(ctx context.Context, o *outgoing) {
	if s.isBroken() {
		return
	}
	wait := s.retry.Wait
	for range s.retry.Retries {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 10*time.Second)
		actx, cancel := context.WithTimeout(ctx, s.retry.AckTimeout)
		ack, err := s.js.PublishMsg(actx, o.msg)
		cancel()
		if err == nil {
			o.ack, o.err = ack, nil
			return
		}
		o.err = err
	}
	s.mu.Lock()
	s.broken = true
	s.mu.Unlock()
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
