// Package poll lets the chunkers' long loops notice a cancelled context
// cheaply: a Poller counts the work done (bytes looked at, or steps) and
// looks at the context once per Every units, so a chunker notices within
// a few tens of kilobytes of scanning. The count (Work) also lets tests
// check that work grows linearly without timing anything.
package poll

import "context"

// Every is the work, in units (bytes looked at, or steps), between two
// looks at the context.
const Every = 32 << 10

// Poller counts work and looks at a context every Every units. The zero
// Poller never stops. It is used by one goroutine.
type Poller struct {
	ctx   context.Context
	done  <-chan struct{}
	due   int // work left before the next look
	work  int // all work counted
	err   error
	endAt int // EndAfter: the work at which the context ends
	after int // Add and Check calls after the end was seen
}

// New returns a Poller for ctx.
func New(ctx context.Context) *Poller {
	return &Poller{ctx: ctx, done: ctx.Done(), due: Every}
}

// EndAfter returns a Poller whose context ends (context.Canceled) once n
// units of work are counted, seen at the next look: tests cancel at a
// chosen point of the work.
func EndAfter(n int) *Poller {
	return &Poller{due: Every, endAt: max(n, 1)}
}

// look records the context's end, if it has ended.
func (p *Poller) look() {
	switch {
	case p.endAt > 0:
		if p.work >= p.endAt {
			p.err = context.Canceled
		}
	case p.done != nil:
		select {
		case <-p.done:
			p.err = p.ctx.Err()
		default:
		}
	}
}

// Add counts n units of work and reports whether the context has ended,
// looking at it when Every units have been counted since the last look.
func (p *Poller) Add(n int) bool {
	p.work += n
	if p.err != nil {
		p.after++
		return true
	}
	p.due -= n
	if p.due > 0 {
		return false
	}
	p.due = Every
	p.look()
	return p.err != nil
}

// Check looks at the context now and reports whether it has ended: for
// checkpoints between large steps (sections, threads, files).
func (p *Poller) Check() bool {
	if p.err != nil {
		p.after++
		return true
	}
	p.look()
	return p.err != nil
}

// Stopped reports whether the Poller has seen the context end.
func (p *Poller) Stopped() bool { return p.err != nil }

// Err returns the context's error once the Poller has seen it end.
func (p *Poller) Err() error { return p.err }

// Work returns the units of work counted so far.
func (p *Poller) Work() int { return p.work }

// CallsAfterEnd returns the calls of Add and Check after the Poller saw
// its context end: a few for a chunker that stops promptly.
func (p *Poller) CallsAfterEnd() int { return p.after }
