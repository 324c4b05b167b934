package worker

import (
	"context"
	"time"
)

// hold keeps a delivery during an outage, with an in-progress ack now and
// every AckWait/3 (keepAlive), so the server neither redelivers it nor
// counts a delivery; while the worker drains it NAKs it instead. It
// reports whether it kept the delivery.
func (p *puller) hold(t *task) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.draining {
		p.nak(t)
		return false
	}
	if err := t.msg.InProgress(); err != nil {
		p.log.Warn("in-progress ack failed", "subject", t.msg.Subject(), "err", err)
	}
	p.held = append(p.held, t)
	p.m.Held.Set(float64(len(p.held)))
	return true
}

// nak hands t back to the server at once, for another worker.
func (p *puller) nak(t *task) {
	if err := t.msg.Nak(); err != nil {
		p.log.Warn("nak failed", "subject", t.msg.Subject(), "err", err)
	}
}

// takeHeld returns the held deliveries, oldest first, and forgets them;
// with wait it records them as waiting for a processor, so they keep
// their in-progress acks meanwhile.
func (p *puller) takeHeld(wait bool) []*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.held
	p.held = nil
	p.m.Held.Set(0)
	if wait {
		for _, t := range out {
			p.waiting[t] = struct{}{}
		}
	}
	return out
}

// takeOne is takeHeld for the oldest held delivery alone; nil when none
// is held.
func (p *puller) takeOne() *task {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.held) == 0 {
		return nil
	}
	t := p.held[0]
	p.held = p.held[1:]
	p.m.Held.Set(float64(len(p.held)))
	p.waiting[t] = struct{}{}
	return t
}

// release starts the drain: from now on hold NAKs, and what is held is
// NAKed (without delay) for another worker.
func (p *puller) release() {
	p.mu.Lock()
	p.draining = true
	p.mu.Unlock()
	for _, t := range p.takeHeld(false) {
		p.nak(t)
	}
}

// keepAlive sends in-progress acks every AckWait/3, until ctx ends, for
// the held deliveries and for those waiting for a processor, so that
// while every processor is stuck those waiting are not redelivered and
// processed twice.
func (p *puller) keepAlive(ctx context.Context) {
	tick := time.NewTicker(p.cfg.AckWait / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		alive := append([]*task(nil), p.held...)
		for t := range p.waiting {
			alive = append(alive, t)
		}
		p.mu.Unlock()
		for _, t := range alive {
			if err := t.msg.InProgress(); err != nil {
				p.log.Warn("in-progress ack failed", "subject", t.msg.Subject(), "err", err)
			}
		}
	}
}
