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
	// Done counts the documents settled: sent, skipped or failed.
	Done int
	// Sent counts requests the server accepted (Duplicates included),
	// deletes included; Deleted counts the deletes among them.
	Sent    int
	Deleted int
	// Duplicates counts PubAcks that reported a duplicate: a retried
	// publish whose first copy had arrived.
	Duplicates int
	// Skipped counts documents not sent: unchanged since a done record
	// (same content, same settings), or, with ResendStale, not stale.
	Skipped int
	// Stale counts the documents sent (or, in a dry run, listed) because
	// their done record holds their content but other settings: the
	// chunker, its options, metadata, source, subject or collection
	// changed, or the workers' chunker defaults did.
	Stale int
	// Failed counts documents not accepted: unreadable, invalid, too
	// large, refused by the server, or given up.
	Failed int
	// GaveUp counts the failed documents that were in flight or not yet
	// sent when the run gave up because the server stayed unavailable
	// (ErrUnavailable).
	GaveUp int
	// Retries counts the re-sends of publishes whose PubAck did not come.
	Retries int
	// Bytes is the content size of the accepted documents; ReadBytes of
	// every document read (sent or skipped).
	Bytes     int64
	ReadBytes int64
}

// Failure is one document that was not accepted.
type Failure struct {
	// ID is the document id ("" for a stdin line that has none).
	ID string
	// Line is the 1-based line number of a stdin request, 0 otherwise.
	Line int
	// Err says why.
	Err error
}

// Planned is one request a dry run would send.
type Planned struct {
	ID    string
	Op    messages.Op
	Bytes int
	// Object tells that the content would go through the Object Store.
	Object bool
}

// Summary is the result of a backfill or a stream.
type Summary struct {
	Stats
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
	// Outages counts the times publishing was held back because the
	// server answered no publish; Unavailable is how long it was held
	// back in all.
	Outages     int
	Unavailable time.Duration
	// Failures lists the documents not accepted, in order.
	Failures []Failure
	// Warnings are the walker's and mailbox reader's warnings.
	Warnings []chunking.Warning
}

// OK reports whether every document was accepted or skipped.
func (s *Summary) OK() bool { return s.Failed == 0 }

// tally keeps the counters; the progress callback runs under its lock, so
// it is called one at a time.
type tally struct {
	mu       sync.Mutex
	s        Summary
	progress func(Stats)
	// sent, when set, receives each request the server accepted, under
	// the lock (one call at a time).
	sent func(Sent)
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
		s.Failures = append(s.Failures, Failure{ID: id, Line: line, Err: err})
	})
}

// settle counts a request whose publish finished.
func (t *tally) settle(o *outgoing) {
	endSend(o.span, o.ack, o.err)
	if o.err != nil {
		t.update(func(s *Summary) {
			s.Done++
			s.Failed++
			s.Retries += o.retries
			if o.gaveUp {
				s.GaveUp++
			}
			s.Failures = append(s.Failures, Failure{ID: o.id, Line: o.line, Err: o.err})
		})
		return
	}
	t.update(func(s *Summary) {
		s.Retries += o.retries
		s.Done++
		s.Sent++
		s.Bytes += int64(o.bytes)
		if o.del {
			s.Deleted++
		}
		if o.ack != nil && o.ack.Duplicate {
			s.Duplicates++
		}
		if t.sent != nil && o.ack != nil {
			t.sent(Sent{ID: o.id, Bytes: o.bytes, Seq: o.ack.Sequence, Duplicate: o.ack.Duplicate})
		}
	})
}

// sentAll passes ss to sent, one call at a time.
func (t *tally) sentAll(ss []Sent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range ss {
		t.sent(s)
	}
}

// finish returns the summary of a run that started at start and sent
// through snd (nil for a dry run).
func (t *tally) finish(start time.Time, snd *sender) Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s
	s.Elapsed = time.Since(start)
	if snd != nil {
		s.Outages, s.Unavailable, _ = snd.gate.outage()
	}
	return s
}
