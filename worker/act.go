package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/messages"
)

// act carries out a for the delivery t; the error is the dead letter's
// that could not be stored.
func (w *Worker) act(ctx context.Context, t *task, res Result, v verdict, a action) (Result, error) {
	msg := t.msg
	res.Outcome, res.Cause = a.outcome, a.cause
	switch a.verb {
	case ack:
		w.proc.ack(ctx, msg, res)
		if a.outcome == OutcomeAcked {
			w.out.Succeed(t.start)
		}
	case hold:
		err, size := v.err, res.Bytes
		if v.deadLetter != nil {
			err, size = v.deadLetter, len(msg.Data())
		} else {
			t.tries++
		}
		if a.down.noRoom {
			w.needRoom(refusedSize(size))
		}
		w.out.Fail(a.down.dep, err, t.start)
		if !w.pull.hold(t) {
			res.Outcome = OutcomeAbandoned
		}
	case retry:
		floor := v.err
		if v.deadLetter != nil {
			floor = nil
		}
		if err := msg.NakWithDelay(w.proc.backoff.Delay(res.Delivery, floor)); err != nil {
			w.log.Warn("nak failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
		}
	case abandon:
		if err := msg.Nak(); err != nil {
			w.log.Warn("nak failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
		}
	case deadLetter:
		dl := messages.DeadLetter{Reason: v.err.Error(), Kind: a.kind, Cause: a.cause, Subject: msg.Subject(),
			StreamSeq: res.StreamSeq, IngestSeq: ingestSeqOf(msg.Headers(), res.StreamSeq), Deliveries: res.Delivery}
		if a.cause == fault.CauseMaxDeliveries {
			dl.Deliveries = res.Delivery - 1 // the deliveries it was processed in
		}
		dl.Twin = errors.Is(v.err, errBulkTwin)
		dup, err := w.proc.deadLetter(ctx, msg, v.req, dl, dl.Twin)
		if err != nil {
			return res, err
		}
		if !dup {
			w.m.DeadLetters.WithLabelValues(string(a.kind), string(a.cause)).Inc()
		}
		if err := msg.TermWithReason(string(a.cause)); err != nil {
			w.log.Warn("term failed", "doc_id", res.DocID, "stream_seq", res.StreamSeq, "err", err)
		}
	}
	return res, nil
}

// maxAckConfirmations bounds the ack confirmations awaited at once; past
// it an ack is sent without awaiting its confirmation.
const maxAckConfirmations = 256

// ack acks the delivery without blocking the processor: a server
// restarted from its store does not answer the acks of deliveries it
// forgot, and waiting would stall every processor for seconds. The
// confirmation is awaited in the background for AckWait/3 (5 s at most),
// at most maxAckConfirmations at a time (beyond, the ack goes out
// unconfirmed); Run waits for the pending ones before it returns.
func (p *processor) ack(ctx context.Context, msg jetstream.Msg, res Result) {
	docID, seq := res.DocID, res.StreamSeq
	ctx, span := p.step(ctx, SpanAck)
	select {
	case p.ackSlots <- struct{}{}:
	default:
		p.m.AcksUnconfirmed.Inc()
		err := msg.Ack()
		if err != nil {
			p.log.WarnContext(ctx, "ack failed", "doc_id", docID, "stream_seq", seq, "err", err)
		}
		endStep(span, err)
		return
	}
	p.acks.Go(func() {
		defer func() { <-p.ackSlots }()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(p.cfg.AckWait/3, 5*time.Second))
		defer cancel()
		err := msg.DoubleAck(cctx)
		if err != nil {
			p.m.AcksUnconfirmed.Inc()
			p.log.WarnContext(ctx, "ack not confirmed", "doc_id", docID, "stream_seq", seq, "err", err)
		}
		endStep(span, err)
	})
}

// deadLetter publishes the request's payload and user headers with the
// dead letter headers, waits for the PubAck, then records the failure
// in the document record (KVRecords.Fail); it happens even while the
// worker drains. dup reports a dead letter stored before: its
// Nats-Msg-Id names the INGEST message (messages.DeadLetterMsgID), so a
// second try stores it once. The request's Nats-* headers are not
// copied: they are the server's, or preconditions the DLQ would refuse.
// A bulk's refused twin (twin) records nothing: the record at its
// ingest_seq is the other request's.
func (p *processor) deadLetter(ctx context.Context, msg jetstream.Msg, req *messages.IngestRequest, dl messages.DeadLetter, twin bool) (dup bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ctx, span := p.step(ctx, SpanDeadLetter)
	defer func() { endStep(span, err) }()
	h := msg.Headers()
	out := nats.NewMsg(p.cfg.DLQSubject)
	out.Data = msg.Data()
	out.Header = nats.Header(messages.UserHeaders(h))
	tracing.Inject(ctx, out.Header)
	dl.Apply(out.Header)
	out.Header.Set(messages.HeaderMsgID, messages.DeadLetterMsgID(p.cfg.IngestStream, dl.StreamSeq, h.Get(messages.HeaderMsgID)))
	ack, err := p.js.PublishMsg(ctx, out)
	if err != nil {
		return false, fmt.Errorf("worker: publish dead letter: %w", err)
	}
	if twin {
		return ack.Duplicate, nil
	}
	return ack.Duplicate, p.recordFailure(ctx, req, h, msg.Data(), dl, ack.Duplicate)
}

// recordFailure records the failure of a dead-lettered request in its
// document record (KVRecords.Fail). A request that did not decode (req
// nil) is recorded under the id its payload shows, if any. A dead letter
// stored before (dup: a bulk delivered again for another request, a lost
// Term) leaves a record its purge dismissed as it is.
func (p *processor) recordFailure(ctx context.Context, req *messages.IngestRequest, h nats.Header, data []byte, dl messages.DeadLetter, dup bool) error {
	rec := messages.DocRecord{IngestSeq: dl.IngestSeq, Subject: dl.Subject, TraceID: traceID(ctx), LastFailure: messages.Failure{
		Cause: dl.Cause, Reason: messages.OneLine(dl.Reason, 1024), Time: time.Now().UTC(), IngestSeq: dl.IngestSeq, StreamSeq: dl.StreamSeq,
	}}
	var id, target string
	if req != nil {
		if messages.ValidateTenant(req.Tenant) != nil {
			return nil // no record is a bad tenant's
		}
		id, rec.Op = messages.RecordID(req.Tenant, req.ID), messages.OpUpsert
		target = p.target(Doc{ID: req.ID, Collection: req.Collection, Tenant: req.Tenant, Subject: dl.Subject})
		switch {
		case req.IsDelete():
			rec.Op = messages.OpDelete
		case req.ContentRef != nil:
			rec.DocVersion = req.ContentRef.Name // the content's sha256, by the contract
		case req.Content != nil:
			rec.DocVersion = messages.ContentVersion(req.Content)
		}
	} else {
		id, _ = messages.PeekIngestRecordID(h.Get(messages.HeaderContentType), data)
	}
	if id == "" {
		return nil
	}
	_, err := p.records.fail(ctx, id, target, rec, dup)
	return err
}

// ingestSeqOf returns the ingest_seq of the request stored at streamSeq:
// the replayed version's sequence it carries, else streamSeq.
func ingestSeqOf(h nats.Header, streamSeq uint64) uint64 {
	seq, err := messages.RequestIngestSeq(h.Get(messages.HeaderIngestSeq), streamSeq)
	if err != nil {
		return streamSeq
	}
	return seq
}
