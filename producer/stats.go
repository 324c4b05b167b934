package producer

import (
	"errors"
	"sync"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/messages"
)

// Stats counts a backfill's or a stream's documents as they settle.
type Stats struct {
	// Total is the number of documents found (plus planned deletes), or
	// of lines read from a stream.
	Total int
	Done  int // settled: sent, skipped or failed
	// Sent counts requests the server accepted, Duplicates and deletes
	// included; Deleted counts the deletes among them.
	Sent       int
	Deleted    int
	Duplicates int // PubAcks that reported a duplicate
	// Skipped counts documents unchanged since a done record, or, with
	// ResendStale, not stale.
	Skipped int
	// Stale counts the documents sent (or listed) because their done
	// record holds their content but other settings.
	Stale   int
	Failed  int // not accepted: unreadable, invalid, refused, given up
	GaveUp  int // of the failed, those lost to ErrUnavailable
	Retries int // re-sends of publishes whose PubAck did not come
	// Bytes is the content size of the accepted documents; ReadBytes of
	// every document read (sent or skipped).
	Bytes     int64
	ReadBytes int64
}

// Failure is one document that was not accepted.
type Failure struct {
	ID   string // "" for a stdin line that has none
	Line int    // 1-based line number of a stdin request, 0 otherwise
	Err  error
}

// Planned is one request a dry run would send.
type Planned struct {
	ID     string
	Op     messages.Op
	Bytes  int
	Object bool // the content would go through the Object Store
}

// Summary is the result of a backfill or a stream.
type Summary struct {
	Stats
	Elapsed time.Duration
	// Outages counts the times publishing was held back because the
	// server answered no publish; Unavailable is how long in all.
	Outages     int
	Unavailable time.Duration
	Failures    []Failure          // in order
	Warnings    []chunking.Warning // the walker's and mailbox reader's
}

// OK reports whether every document was accepted or skipped.
func (s *Summary) OK() bool { return s.Failed == 0 }

// tally keeps the counters; the callbacks run under its lock, so they
// are called one at a time.
type tally struct {
	mu       sync.Mutex
	s        Summary
	progress func(Stats)
	sent     func(Sent) // each request the server accepted
	failed   func(Failure)
}

// addFailure appends f to s's failures and tells failed; t.mu is held.
func (t *tally) addFailure(s *Summary, f Failure) {
	s.Failures = append(s.Failures, f)
	if t.failed != nil {
		t.failed(f)
	}
}

func (t *tally) update(f func(s *Summary)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
	if t.progress != nil {
		t.progress(t.s.Stats)
	}
}

func (t *tally) fail(id string, line int, err error) {
	t.update(func(s *Summary) {
		s.Done++
		s.Failed++
		if errors.Is(err, ErrUnavailable) {
			s.GaveUp++
		}
		t.addFailure(s, Failure{ID: id, Line: line, Err: err})
	})
}

// settle counts a request whose publish finished.
func (t *tally) settle(o *outgoing) {
	if o.members != nil {
		t.settleBulk(o)
		return
	}
	endSend(o.span, o.ack, o.err)
	t.update(func(s *Summary) {
		s.Retries += o.retries
		s.Done++
		if o.err != nil {
			s.Failed++
			if o.gaveUp {
				s.GaveUp++
			}
			t.addFailure(s, Failure{ID: o.id, Line: o.line, Err: o.err})
			return
		}
		s.Sent++
		s.Bytes += int64(o.bytes)
		if o.del {
			s.Deleted++
		}
		if o.ack != nil && o.ack.Duplicate {
			s.Duplicates++
		}
		if t.sent != nil && o.ack != nil {
			t.sent(Sent{ID: o.id, Tenant: o.tenant, Bytes: o.bytes, Seq: o.ack.Sequence, Duplicate: o.ack.Duplicate})
		}
	})
}

// settleBulk counts each document of a bulk request whose publish
// finished.
func (t *tally) settleBulk(o *outgoing) {
	for _, m := range o.members {
		endSend(m.span, o.ack, o.err)
	}
	t.update(func(s *Summary) {
		s.Retries += o.retries
		for _, m := range o.members {
			s.Done++
			if o.err != nil {
				s.Failed++
				if o.gaveUp {
					s.GaveUp++
				}
				t.addFailure(s, Failure{ID: m.id, Err: o.err})
				continue
			}
			s.Sent++
			s.Bytes += int64(m.bytes)
			if o.ack != nil && o.ack.Duplicate {
				s.Duplicates++
			}
			if t.sent != nil && o.ack != nil {
				t.sent(Sent{ID: m.id, Tenant: o.tenant, Bytes: m.bytes, Seq: o.ack.Sequence, Duplicate: o.ack.Duplicate})
			}
		}
	})
}

// sentAll passes ss to sent.
func (t *tally) sentAll(ss []Sent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range ss {
		t.sent(s)
	}
}

// finish returns the run's summary; snd is nil for a dry run.
func (t *tally) finish(start time.Time, snd *sender) Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s
	s.Elapsed = time.Since(start)
	if snd != nil {
		s.Outages, s.Unavailable, _ = snd.outages()
	}
	return s
}
