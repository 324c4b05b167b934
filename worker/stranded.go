package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
)

// maxDeliveriesAdvisory is the JSON the server publishes when a message
// reached MaxDeliver without an ack.
type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// AdvisorySubject returns the subject of the max-deliveries advisories of
// a consumer.
func AdvisorySubject(stream, consumer string) string {
	return "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + "." + consumer
}

// sweepEvery is how often a worker looks for stranded requests; a
// request is dead-lettered by a sweep once two sweeps in a row found it.
const sweepEvery = time.Minute

// watchAdvisories handles max-deliveries advisories in a queue group; a
// request that cannot be dead-lettered now is remembered for the sweep.
func (w *Worker) watchAdvisories() (*nats.Subscription, error) {
	sub, err := w.nc.QueueSubscribe(AdvisorySubject(w.cfg.IngestStream, w.cfg.Consumer), "chunkstream-advisories",
		func(m *nats.Msg) {
			var adv maxDeliveriesAdvisory
			if err := json.Unmarshal(m.Data, &adv); err != nil {
				w.log.Error("bad max-deliveries advisory", "err", err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := w.exhausted(ctx, adv.StreamSeq, adv.Deliveries, false); err != nil {
				w.remember(adv.StreamSeq, adv.Deliveries)
				w.log.Warn("exhausted request not dead-lettered yet: retrying", "stream_seq", adv.StreamSeq, "err", err)
			}
		})
	if err != nil {
		return nil, fmt.Errorf("worker: subscribe to advisories: %w", err)
	}
	return sub, nil
}

// remember adds a stranded request for the sweep to retry.
func (w *Worker) remember(seq, deliveries uint64) {
	w.strandedMu.Lock()
	defer w.strandedMu.Unlock()
	if w.stranded == nil {
		w.stranded = map[uint64]uint64{}
	}
	w.stranded[seq] = deliveries
}

// exhausted dead-letters the request stored at seq, records the failure
// and deletes it from INGEST; swept says the sweep found it. When
// JetStream is down or full the worker pauses and the request stays.
func (w *Worker) exhausted(ctx context.Context, seq, deliveries uint64, swept bool) (err error) {
	defer func() {
		if dep, ok := deadLetterOutage(err); ok && err != nil {
			w.out.markDown(dep, err)
		}
	}()
	w.consMu.Lock()
	ingest := w.top.Ingest
	w.consMu.Unlock()
	raw, err := ingest.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get request %d: %w", seq, err)
	}
	reason := fmt.Sprintf("delivered %d times without an ack (worker stopped or timed out on the last delivery)", deliveries)
	if swept {
		reason = fmt.Sprintf("delivered %d times without an ack and no longer delivered (found stranded in %s)", deliveries, w.cfg.IngestStream)
	}
	dl := messages.DeadLetter{
		Reason: reason, Kind: messages.KindExhausted, Cause: fault.CauseMaxDeliveries, Subject: raw.Subject, StreamSeq: seq,
		IngestSeq: ingestSeqOf(raw.Header, seq), Deliveries: deliveries,
	}
	dup, err := w.deadLetter(ctx, raw.Data, raw.Header, dl)
	if err != nil {
		return err
	}
	var req *messages.IngestRequest
	if r, err := messages.DecodeIngest(raw.Header.Get(messages.HeaderContentType), raw.Data); err == nil {
		req = &r
	}
	// No redelivery follows: a failure to record is retried when it is an
	// outage; any other is logged and the request deleted all the same.
	if err := w.recordFailure(ctx, req, raw.Header, raw.Data, dl); err != nil {
		if _, ok := deadLetterOutage(err); ok {
			return fmt.Errorf("record the failure of request %d: %w", seq, err)
		}
		w.log.Warn("dead letter stored, failure not recorded", "stream_seq", seq, "err", err)
	}
	if err := ingest.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("delete request %d: %w", seq, err)
	}
	if dup {
		return nil // another worker (or an earlier try) reported it
	}
	w.m.DeadLetters.WithLabelValues(string(messages.KindExhausted), string(fault.CauseMaxDeliveries)).Inc()
	w.m.Messages.WithLabelValues(string(OutcomeExhausted)).Inc()
	w.log.Error("dead-lettered", "stream_seq", seq, "subject", raw.Subject,
		"num_delivered", deliveries, "outcome", OutcomeExhausted, "cause", fault.CauseMaxDeliveries)
	if w.onResult != nil {
		w.onResult(Result{Subject: raw.Subject, StreamSeq: seq, IngestSeq: dl.IngestSeq, Delivery: deliveries,
			Outcome: OutcomeExhausted, Cause: fault.CauseMaxDeliveries, Err: errors.New(dl.Reason)})
	}
	return nil
}

// sweep runs until ctx ends: every sweepEvery, and as soon as an outage
// ends, it dead-letters the stranded requests (sweepOnce).
func (w *Worker) sweep(ctx context.Context) {
	seen := map[uint64]bool{}
	t := time.NewTimer(w.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.out.whenDown():
			select {
			case <-ctx.Done():
				return
			case <-w.out.whenUp():
			}
		}
		if !w.out.isDown() {
			seen = w.sweepOnce(ctx, seen)
		}
		t.Reset(w.sweepEvery)
	}
}

// sweepOnce dead-letters the stranded requests (doc.go, "Stranded
// requests"): those an advisory named at once, others once a second
// sweep finds them still there (seen holds the first sightings, and the
// new ones are returned).
func (w *Worker) sweepOnce(ctx context.Context, seen map[uint64]bool) map[uint64]bool {
	w.strandedMu.Lock()
	known := w.stranded
	w.stranded = nil
	w.strandedMu.Unlock()
	next := map[uint64]bool{}
	defer func() {
		// What could not be done now waits for the next sweep.
		for seq, n := range known {
			w.remember(seq, n)
		}
	}()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	info, err := w.currentConsumer().Info(rctx)
	cancel()
	if err != nil {
		w.log.Debug("sweep: consumer info", "err", err)
		return seen
	}
	floor := info.AckFloor.Stream
	if info.NumAckPending == 0 {
		floor = max(floor, info.Delivered.Stream)
	}
	w.consMu.Lock()
	ingest := w.top.Ingest
	w.consMu.Unlock()
	try := func(seq, deliveries uint64, swept bool) bool {
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := w.exhausted(ectx, seq, deliveries, swept); err != nil {
			w.log.Warn("stranded request not dead-lettered yet: retrying", "stream_seq", seq, "err", err)
			return false
		}
		delete(known, seq)
		return true
	}
	for seq := uint64(1); seq <= floor && ctx.Err() == nil && !w.out.isDown(); {
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		raw, err := ingest.GetMsg(gctx, seq, jetstream.WithGetMsgSubject(">"))
		cancel()
		if err != nil || raw.Sequence > floor {
			if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				w.log.Debug("sweep: read request", "stream_seq", seq, "err", err)
			}
			break
		}
		seq = raw.Sequence + 1
		n, isKnown := known[raw.Sequence]
		switch {
		case isKnown:
			try(raw.Sequence, n, false)
		case seen[raw.Sequence]:
			try(raw.Sequence, uint64(w.cfg.MaxDeliver), true)
		default:
			next[raw.Sequence] = true
		}
	}
	// Known ones the scan did not reach (the floor read before their
	// advisory moved it) are tried on their own.
	for seq, n := range known {
		if ctx.Err() != nil || w.out.isDown() {
			break
		}
		try(seq, n, false)
	}
	if len(next) > 0 {
		w.log.Info("sweep: requests below the consumer's ack floor; dead-lettering them if the next sweep finds them again",
			"stranded", len(next), "stream", w.cfg.IngestStream)
	}
	return next
}
