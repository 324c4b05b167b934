package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// A bulk delivery (messages.ContentTypeBulk; docs/wire.md, "Bulk
// requests") is cut into one task per request as the puller receives it.
// Each request then takes the way of a single one, with its own record,
// outcome, trace and dead letter; only its settling goes to the bulk: the
// bulk is acknowledged once every request in it is settled, NAKed when
// one of them was (its done requests are acked as duplicates on the next
// delivery: their records say done), and terminated when all of them were
// dead-lettered.

// bulkRequest is one request of a bulk delivery, as a jetstream.Msg: its
// payload and headers are the request's own (the bulk's user headers
// overlaid with the entry's, its Content-Type and Nats-Msg-Id), its metadata the bulk's delivery
// (so its ingest_seq is the bulk's), and its acks settle its part of the
// bulk.
type bulkRequest struct {
	jetstream.Msg // the bulk's delivery
	bulk          *bulkDelivery
	data          []byte
	headers       nats.Header
	// req and err are the request decoded (messages.DecodeIngest), once,
	// by splitBulk, for decode.
	req messages.IngestRequest
	err error
	// refused, when set, is why the request is dead-lettered without
	// processing (decode): a document twice in one bulk.
	refused error
	settled atomic.Bool
}

// Data returns the request's payload.
func (r *bulkRequest) Data() []byte { return r.data }

// Headers returns the request's headers.
func (r *bulkRequest) Headers() nats.Header { return r.headers }

// Ack settles the request done.
func (r *bulkRequest) Ack() error { return r.settle(context.Background(), settleAck, 0, "", false) }

// DoubleAck settles the request done; the last request's waits for the
// server to confirm the bulk's ack.
func (r *bulkRequest) DoubleAck(ctx context.Context) error {
	return r.settle(ctx, settleAck, 0, "", true)
}

// Nak settles the request as one to deliver again.
func (r *bulkRequest) Nak() error { return r.settle(context.Background(), settleNak, 0, "", false) }

// NakWithDelay settles the request as one to deliver again after delay.
func (r *bulkRequest) NakWithDelay(delay time.Duration) error {
	return r.settle(context.Background(), settleNak, delay, "", false)
}

// Term settles the request as dead-lettered.
func (r *bulkRequest) Term() error { return r.settle(context.Background(), settleTerm, 0, "", false) }

// TermWithReason settles the request as dead-lettered.
func (r *bulkRequest) TermWithReason(reason string) error {
	return r.settle(context.Background(), settleTerm, 0, reason, false)
}

// InProgress keeps the bulk's delivery alive.
func (r *bulkRequest) InProgress() error { return r.bulk.inProgress() }

func (r *bulkRequest) settle(ctx context.Context, kind settleKind, delay time.Duration, reason string, confirm bool) error {
	if r.settled.Swap(true) {
		return nil // settled before: the first word stands
	}
	return r.bulk.settle(ctx, kind, delay, reason, confirm)
}

type settleKind int

const (
	settleAck settleKind = iota
	settleNak
	settleTerm
)

// bulkDelivery counts the requests of one bulk delivery still to settle
// and settles the delivery after the last.
type bulkDelivery struct {
	msg jetstream.Msg

	mu       sync.Mutex
	left     int
	acked    int
	nak      bool
	delay    time.Duration // the longest NAK delay asked for
	reason   string        // the first dead letter's cause
	progress time.Time     // the last in-progress ack sent
}

// inProgressGap is the least time between two in-progress acks of one
// bulk: each of its requests asks for them on its own.
const inProgressGap = 100 * time.Millisecond

func (b *bulkDelivery) inProgress() error {
	b.mu.Lock()
	now := time.Now()
	if now.Sub(b.progress) < inProgressGap {
		b.mu.Unlock()
		return nil
	}
	b.progress = now
	b.mu.Unlock()
	return b.msg.InProgress()
}

func (b *bulkDelivery) settle(ctx context.Context, kind settleKind, delay time.Duration, reason string, confirm bool) error {
	b.mu.Lock()
	b.left--
	switch kind {
	case settleAck:
		b.acked++
	case settleNak:
		b.nak = true
		b.delay = max(b.delay, delay)
	case settleTerm:
		if b.reason == "" {
			b.reason = reason
		}
	}
	last, nak, delay, acked, reason := b.left == 0, b.nak, b.delay, b.acked, b.reason
	b.mu.Unlock()
	if !last {
		return nil
	}
	switch {
	case nak && delay > 0:
		return b.msg.NakWithDelay(delay)
	case nak:
		return b.msg.Nak()
	case acked == 0 && reason != "":
		return b.msg.TermWithReason(reason)
	case acked == 0:
		return b.msg.Term()
	case confirm:
		return b.msg.DoubleAck(ctx)
	}
	return b.msg.Ack()
}

// errBulkTwin marks the refusal of a document's second request in one
// bulk: its dead letter leaves the document record alone, which the
// first request, sharing its ingest_seq, owns.
var errBulkTwin = messages.ErrBulkTwin

// splitBulk returns the requests of msg when it is a bulk request, one
// message each, or msg alone: one that is not a bulk, or a bulk that does
// not decode (decode then dead-letters it whole, saying why).
func splitBulk(msg jetstream.Msg) []jetstream.Msg {
	h := msg.Headers()
	if !messages.IsBulk(h.Get(messages.HeaderContentType)) {
		return []jetstream.Msg{msg}
	}
	entries, err := messages.DecodeBulk(msg.Data())
	if err != nil {
		return []jetstream.Msg{msg}
	}
	b := &bulkDelivery{msg: msg, left: len(entries)}
	out := make([]jetstream.Msg, len(entries))
	seen := make(map[string]struct{}, len(entries))
	shared := messages.UserHeaders(h) // the bulk's, read once
	for i, e := range entries {
		// Each request has a map of its own; the values are shared,
		// clipped so that an Add copies rather than writes into another
		// request's.
		hdr := make(nats.Header, len(shared)+len(e.Headers)+3)
		for name, v := range shared {
			hdr[name] = v[:len(v):len(v)]
		}
		for name, v := range e.Headers {
			if messages.IsUserHeader(name) {
				hdr[name] = append([]string(nil), v...)
			}
		}
		hdr.Set(messages.HeaderContentType, e.ContentType)
		hdr.Set(messages.HeaderMsgID, e.MsgID)
		if seq := h.Get(messages.HeaderIngestSeq); seq != "" {
			hdr.Set(messages.HeaderIngestSeq, seq) // a bulk put back keeps its ingest_seq
		}
		r := &bulkRequest{Msg: msg, bulk: b, data: e.Data, headers: hdr}
		// Decoded here, once: the record id is needed now, the rest by
		// the processor (decode).
		r.req, r.err = messages.DecodeIngest(e.ContentType, e.Data)
		// The requests of a bulk share its ingest_seq: a document twice
		// in one would have two versions the records cannot order.
		if r.err == nil && r.req.ID != "" && messages.ValidateTenant(r.req.Tenant) == nil {
			id := messages.RecordID(r.req.Tenant, r.req.ID)
			if _, dup := seen[id]; dup {
				r.refused = fmt.Errorf("%w: %w: document %q is in the bulk request more than once (its versions would share one ingest_seq)", messages.ErrInvalid, errBulkTwin, id)
			}
			seen[id] = struct{}{}
		}
		out[i] = r
	}
	return out
}
