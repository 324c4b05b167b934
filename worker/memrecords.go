package worker

import (
	"context"
	"sync"

	"github.com/chunkstream/chunkstream/messages"
)

// recordStore is what processing needs of the document records: the
// records bucket (KVRecords), or, for a worker that is its whole fleet
// for one run, this process's memory (memRecords).
type recordStore interface {
	Records
	Get(ctx context.Context, docID string) (messages.DocRecord, uint64, bool, error)
	start(ctx context.Context, docID string, rec messages.DocRecord, createFirst bool) (started, error)
	Finish(ctx context.Context, docID string, seq, rev uint64, rec messages.DocRecord) (bool, error)
	Fail(ctx context.Context, docID string, rec messages.DocRecord) (bool, error)
}

var (
	_ recordStore = (*KVRecords)(nil)
	_ recordStore = (*memRecords)(nil)
)

// memRecords keeps the document records in a map, by the same rules as
// KVRecords (only forward, compare-and-set on a revision), for
// Options.MemoryRecords. Each operation holds the lock from its read to
// its write, so no compare-and-set it makes can fail.
type memRecords struct {
	mu   sync.Mutex
	last uint64 // the last revision written, across keys as in a bucket
	recs map[string]memRecord
}

type memRecord struct {
	rec messages.DocRecord
	rev uint64
}

func newMemRecords() *memRecords { return &memRecords{recs: map[string]memRecord{}} }

// put writes rec for docID and returns its revision; s.mu is held.
func (s *memRecords) put(docID string, rec messages.DocRecord) uint64 {
	s.last++
	s.recs[docID] = memRecord{rec: rec, rev: s.last}
	return s.last
}

// Get returns the document's record and its revision, as KVRecords.Get.
func (s *memRecords) Get(_ context.Context, docID string) (messages.DocRecord, uint64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[docID]
	return r.rec, r.rev, ok, nil
}

// NewestSeq returns the highest ingest_seq recorded for the document.
func (s *memRecords) NewestSeq(ctx context.Context, docID string) (uint64, error) {
	rec, _, _, err := s.Get(ctx, docID)
	return rec.IngestSeq, err
}

// start is KVRecords.start: the record found, the revision written (0
// when none) and whether it created the record.
func (s *memRecords) start(_ context.Context, docID string, rec messages.DocRecord, _ bool) (started, error) {
	rec.State = messages.StatePending
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[docID]
	if !ok {
		return started{rev: s.put(docID, rec), first: true}, nil
	}
	next := rec
	switch {
	case cur.rec.IngestSeq > rec.IngestSeq:
		return started{found: cur.rec}, nil
	case cur.rec.IngestSeq == rec.IngestSeq:
		if cur.rec.State != messages.StateDeadLettered && cur.rec.State != messages.StateDismissed {
			return started{found: cur.rec}, nil
		}
		// A replay of a dead-lettered version: it is in work again.
		next = cur.rec
		next.State, next.LastFailure, next.TraceID = messages.StatePending, messages.Failure{}, rec.TraceID
	}
	return started{found: cur.rec, rev: s.put(docID, next)}, nil
}

// Finish is KVRecords.Finish.
func (s *memRecords) Finish(_ context.Context, docID string, seq, rev uint64, rec messages.DocRecord) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[docID]
	switch {
	case rev != 0 && ok && cur.rev == rev:
		s.put(docID, finished(rec, rec, seq))
		return true, nil
	case !ok || cur.rec.IngestSeq != seq:
		return false, nil
	case cur.rec.State == messages.StateDone:
		return true, nil
	}
	s.put(docID, finished(cur.rec, rec, seq))
	return true, nil
}

// Fail is KVRecords.Fail.
func (s *memRecords) Fail(_ context.Context, docID string, rec messages.DocRecord) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[docID]
	next := rec
	if ok && cur.rec.IngestSeq > rec.IngestSeq {
		return false, nil
	}
	if ok && cur.rec.IngestSeq == rec.IngestSeq {
		if cur.rec.State == messages.StateDone || cur.rec.State == messages.StateDeadLettered {
			return false, nil
		}
		next = cur.rec
		next.LastFailure, next.TraceID = rec.LastFailure, rec.TraceID
	}
	next.State = messages.StateDeadLettered
	s.put(docID, next)
	return true, nil
}
