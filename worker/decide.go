package worker

import (
	"context"
	"fmt"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
)

// settle decides what settles the delivery res describes and carries it
// out; when the dead letter cannot be stored it decides again with that
// failure. It returns res with the outcome, the cause and the error.
func (w *Worker) settle(ctx context.Context, t *task, res Result, v verdict) Result {
	d := delivery{n: res.Delivery, max: w.cfg.MaxDeliver, tries: t.tries, stopping: ctx.Err() != nil}
	res, err := w.act(ctx, t, res, v, decide(v, d, outageOf(v.err)))
	if err != nil {
		v.deadLetter = err
		res.Err = fmt.Errorf("%w (dead letter failed: %v)", v.err, err)
		res, _ = w.act(ctx, t, res, v, decide(v, d, deadLetterOutage(err)))
	}
	return res
}

// delivery is what settling needs of one delivery of a request.
type delivery struct {
	n        uint64 // NumDelivered, 1-based
	max      int    // Config.MaxDeliver: the deliveries a request gets
	tries    int    // the outages it met (and was held through) in this delivery
	stopping bool   // the worker drains
}

// past reports whether the delivery comes after the last one a request
// gets: its worker stopped or died on that one. The consumer redelivers
// without limit (topology.Config.ConsumerConfig), so this is where the
// limit is kept, and no request is ever left undelivered in INGEST.
func (d delivery) past() bool { return d.n > uint64(d.max) }

// down is the outage a failure shows (outageOf, deadLetterOutage): the
// dependency down, and whether JetStream refused a write for want of
// room. The zero value is no outage.
type down struct {
	dep    string
	noRoom bool
}

// verb is what settling does with a delivery.
type verb int

const (
	ack        verb = iota // ack, the outcome the verdict's
	hold                   // keep it with in-progress acks until the outage ends (outcome paused)
	retry                  // NAK with the backoff of its delivery (outcome retried)
	abandon                // NAK at once for another worker (outcome abandoned)
	deadLetter             // store a dead letter, record the failure, then Term
)

// action is decide's answer; act carries it out.
type action struct {
	verb    verb
	outcome Outcome
	cause   fault.Cause
	kind    messages.Kind // of a dead letter
	down    down          // of a hold
}

// decide is the delivery policy, the table of docs/design.md ("Delivery
// semantics") row by row, in its order; TestDecide checks the two are
// the same list. It is pure: act carries its answer out.
func decide(v verdict, d delivery, o down) action {
	cause, _ := fault.CauseOf(v.err)
	permanent := fault.IsPermanent(v.err)
	orElse := func(c fault.Cause) fault.Cause {
		if cause == "" {
			return c
		}
		return cause
	}
	switch {
	case v.err == nil:
		return action{verb: ack, outcome: v.outcome}
	case v.deadLetter != nil && o.dep != "" && !d.stopping:
		return action{verb: hold, outcome: OutcomePaused, cause: orElse(fault.CauseUnavailable), down: o}
	case v.deadLetter != nil:
		return action{verb: retry, outcome: OutcomeRetried, cause: orElse(fault.CauseTransient)}
	case d.stopping && !permanent:
		return action{verb: abandon, outcome: OutcomeAbandoned, cause: fault.CauseShutdown}
	case permanent:
		return action{verb: deadLetter, outcome: OutcomePermanent, cause: cause, kind: messages.KindPermanent}
	case o.dep != "" && d.tries < d.max:
		return action{verb: hold, outcome: OutcomePaused, cause: orElse(fault.CauseUnavailable), down: o}
	case o.noRoom:
		return action{verb: hold, outcome: OutcomePaused, cause: orElse(fault.CauseUnavailable), down: o}
	case cause == fault.CauseMaxDeliveries:
		return action{verb: deadLetter, outcome: OutcomeExhausted, cause: cause, kind: messages.KindExhausted}
	case d.n < uint64(d.max):
		return action{verb: retry, outcome: OutcomeRetried, cause: orElse(fault.CauseTransient)}
	}
	return action{verb: deadLetter, outcome: OutcomeExhausted, cause: orElse(fault.CauseTransient), kind: messages.KindExhausted}
}
