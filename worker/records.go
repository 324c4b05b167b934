package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// KVRecords keeps document records (messages.DocRecord) in a JetStream KV
// bucket, only forward and never deleted. It implements Records.
type KVRecords struct {
	kv recordKV
	nc *nats.Conn // set by WithLeaderReads
}

// NewKVRecords returns the record store over kv.
func NewKVRecords(kv jetstream.KeyValue) *KVRecords { return &KVRecords{kv: kv} }

// WithLeaderReads returns a copy of s whose NewestSeq reads from the
// bucket stream's leader through nc. A KV bucket allows direct gets, which
// any replica may answer; on a replicated bucket a lagging follower could
// hide a newer version from step 4's re-check (the Qdrant sink would then
// keep points of an overtaken version). Reads through the leader see every
// acknowledged compare-and-set.
func (s *KVRecords) WithLeaderReads(nc *nats.Conn) *KVRecords {
	return &KVRecords{kv: s.kv, nc: nc}
}

// Get returns the document's record and its revision; ok is false when
// there is none. A record that does not parse reads as absent at its
// revision, so the next write replaces it.
func (s *KVRecords) Get(ctx context.Context, docID string) (rec messages.DocRecord, rev uint64, ok bool, err error) {
	e, err := s.kv.Get(ctx, messages.DocRecordKey(docID))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return messages.DocRecord{}, 0, false, nil
	}
	if err != nil {
		return messages.DocRecord{}, 0, false, fmt.Errorf("worker: read record of %q: %w", docID, err)
	}
	if rec, err = messages.DecodeDocRecord(e.Value()); err != nil {
		return messages.DocRecord{}, e.Revision(), false, nil
	}
	return rec, e.Revision(), true, nil
}

// NewestSeq returns the newest version of the document started at target
// (messages.DocRecord.NewestAt), 0 when there is no record.
func (s *KVRecords) NewestSeq(ctx context.Context, docID, target string) (uint64, error) {
	if s.nc == nil {
		rec, _, _, err := s.Get(ctx, docID)
		return rec.NewestAt(target), err
	}
	data, found, err := s.leaderGet(ctx, messages.DocRecordKey(docID))
	if err != nil || !found {
		return 0, err
	}
	rec, err := messages.DecodeDocRecord(data)
	if err != nil {
		return 0, nil // unparseable reads as absent, as in Get
	}
	return rec.NewestAt(target), nil
}

// leaderGet reads the last value of key with the stream's (non-direct)
// message get API, which the stream leader answers. A delete or purge
// marker reads as absent.
func (s *KVRecords) leaderGet(ctx context.Context, key string) ([]byte, bool, error) {
	bucket := s.kv.Bucket()
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{"$KV." + bucket + "." + key})
	if err != nil {
		return nil, false, err
	}
	msg, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, false, fmt.Errorf("worker: read record %s from the leader: %w", key, err)
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Header []byte `json:"hdrs"`
			Data   []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, false, fmt.Errorf("worker: read record %s from the leader: %w", key, err)
	}
	if resp.Error != nil {
		switch resp.Error.ErrCode {
		case int(jetstream.JSErrCodeMessageNotFound):
			return nil, false, nil
		case int(jetstream.JSErrCodeStreamNotFound):
			return nil, false, fmt.Errorf("worker: read record %s from the leader: %w", key, jetstream.ErrStreamNotFound)
		}
		return nil, false, fmt.Errorf("worker: read record %s from the leader: %s (code %d)", key, resp.Error.Description, resp.Error.ErrCode)
	}
	if resp.Message == nil {
		return nil, false, nil
	}
	if len(resp.Message.Header) > 0 && bytes.Contains(resp.Message.Header, []byte("KV-Operation:")) {
		return nil, false, nil // DEL or PURGE: records are never deleted, but be safe
	}
	return resp.Message.Data, true, nil
}

// Start is step 1 of processing version rec.IngestSeq at target (the
// place the sink writes it, "" when unknown): it sets the record to rec
// (state pending, the version at target in its Targets) unless the record
// already holds a higher sequence, and returns the record found (a higher
// sequence: superseded; equal: a redelivery) and the revision it wrote (0
// if none), for Finish.
func (s *KVRecords) Start(ctx context.Context, docID, target string, rec messages.DocRecord) (found messages.DocRecord, rev uint64, err error) {
	st, err := s.start(ctx, docID, target, rec, startOpts{replay: true})
	return st.found, st.rev, err
}

// startOpts are how step 1 treats a delivery.
type startOpts struct {
	// createFirst: try to create the record first (docs/design.md, "Each
	// record operation earns its place").
	createFirst bool
	// replay: the delivery may process again a version recorded
	// dead-lettered or dismissed (a dlq replay); without it such a record
	// leaves the version settled (a bulk redelivered for another of its
	// requests: this one was dead-lettered already).
	replay bool
}

// started is what step 1 did: the record found, the revision written (0
// when it wrote nothing) and whether it created the record.
type started struct {
	found messages.DocRecord
	rev   uint64
	// first is true when the key never held a record (nor a deletion
	// marker) before Start created it (Doc.First); the create is a
	// compare-and-set on "no message for the key", so it cannot be stale.
	first bool
	// targets are the Targets of the record written (nil when none was).
	targets map[string]uint64
	// settled is true when the record holds the version dead-lettered or
	// dismissed and the delivery is no replay: nothing is to be done.
	settled bool
}

// start is Start, also telling whether it created the record. With
// createFirst it first tries to create the record (docs/design.md, "Each
// record operation earns its place").
func (s *KVRecords) start(ctx context.Context, docID, target string, rec messages.DocRecord, o startOpts) (started, error) {
	rec.State = messages.StatePending
	key := messages.DocRecordKey(docID)
	if o.createFirst {
		first := rec
		first.Targets = messages.TargetsWith(messages.DocRecord{}, false, target, rec.IngestSeq)
		val, err := messages.EncodeDocRecord(first)
		if err != nil {
			return started{}, err
		}
		rev, err := s.kv.Update(ctx, key, val, 0)
		if err == nil {
			return started{rev: rev, first: true, targets: first.Targets}, nil
		}
		if !topology.IsCASConflict(err) {
			return started{}, fmt.Errorf("worker: write record of %q: %w", docID, err)
		}
	}
	for {
		cur, rev, ok, err := s.Get(ctx, docID)
		if err != nil {
			return started{}, err
		}
		next := rec
		if ok && cur.IngestSeq > rec.IngestSeq {
			return started{found: cur}, nil
		}
		if ok && cur.IngestSeq == rec.IngestSeq {
			if cur.State != messages.StateDeadLettered && cur.State != messages.StateDismissed {
				return started{found: cur}, nil
			}
			same := cur.Op == rec.Op && cur.DocVersion == rec.DocVersion
			if !o.replay && same {
				return started{found: cur, settled: true}, nil
			}
			// A replay of a dead-lettered version is in work again; a
			// version whose record another version at its sequence
			// wrote (a bulk's refused twin) takes the record over.
			if same {
				next = cur
				next.State, next.LastFailure, next.TraceID = messages.StatePending, messages.Failure{}, rec.TraceID
			}
		}
		next.Targets = messages.TargetsWith(cur, ok, target, rec.IngestSeq)
		val, err := messages.EncodeDocRecord(next)
		if err != nil {
			return started{}, err
		}
		var (
			newRev uint64
			first  bool
		)
		if rev == 0 {
			// Revision 0 fails on a deletion marker (a record someone
			// removed); Create then writes over the marker.
			newRev, err = s.kv.Update(ctx, key, val, 0)
			first = err == nil
			if topology.IsCASConflict(err) {
				newRev, err = s.kv.Create(ctx, key, val)
			}
		} else {
			newRev, err = s.kv.Update(ctx, key, val, rev)
		}
		if topology.IsCASConflict(err) {
			continue // another worker moved it; look again
		}
		if err != nil {
			return started{}, fmt.Errorf("worker: write record of %q: %w", docID, err)
		}
		return started{found: cur, rev: newRev, first: first, targets: next.Targets}, nil
	}
}

// Finish is step 5: it marks version seq done, with rec's settings
// fingerprint, chunk count and warnings, only if the record still holds
// seq, and reports whether it did. rev is Start's revision (one write if
// unchanged).
func (s *KVRecords) Finish(ctx context.Context, docID string, seq uint64, rev uint64, rec messages.DocRecord) (bool, error) {
	key := messages.DocRecordKey(docID)
	base := rec // at Start's revision the record is rec, less its results
	if rec.Targets == nil {
		rev = 0 // without the Targets step 1 wrote, rec cannot stand for the record: read it
	}
	for {
		if rev != 0 {
			val, err := messages.EncodeDocRecord(finished(base, rec, seq))
			if err != nil {
				return false, err
			}
			_, err = s.kv.Update(ctx, key, val, rev)
			if err == nil {
				return true, nil
			}
			if !topology.IsCASConflict(err) {
				return false, fmt.Errorf("worker: finish record of %q: %w", docID, err)
			}
		}
		// Another write came between: finish only if the record still
		// holds seq and is not done yet.
		cur, curRev, ok, err := s.Get(ctx, docID)
		if err != nil {
			return false, err
		}
		if !ok || cur.IngestSeq != seq {
			return false, nil
		}
		if cur.State == messages.StateDone {
			return true, nil
		}
		base, rev = cur, curRev
	}
}

// finished is the done record of version seq: base, the record as
// written for it, with the results of rec (settings fingerprint, chunk
// count, warnings) and no failure. Both of Finish's paths write it.
func finished(base, rec messages.DocRecord, seq uint64) messages.DocRecord {
	base.IngestSeq, base.State, base.LastFailure = seq, messages.StateDone, messages.Failure{}
	base.Fingerprint, base.Chunks, base.Warnings = rec.Fingerprint, rec.Chunks, rec.Warnings
	return base
}

// Fail records that version rec.IngestSeq of the document, meant for
// target ("" when unknown), was dead-lettered (state
// messages.StateDeadLettered, rec.LastFailure), by compare-and-set and only
// forward, by the rule "Fail" of docs/design.md, "The document record".
// Fail reports whether it wrote.
func (s *KVRecords) Fail(ctx context.Context, docID, target string, rec messages.DocRecord) (bool, error) {
	return s.fail(ctx, docID, target, rec, false)
}

// fail is Fail; with keepDismissed a record of the version dismissed
// stays so (its dead letter was purged; this one is its duplicate).
func (s *KVRecords) fail(ctx context.Context, docID, target string, rec messages.DocRecord, keepDismissed bool) (bool, error) {
	key := messages.DocRecordKey(docID)
	for {
		cur, rev, ok, err := s.Get(ctx, docID)
		if err != nil {
			return false, err
		}
		next := rec
		if ok && cur.IngestSeq > rec.IngestSeq {
			return false, nil
		}
		if ok && cur.IngestSeq == rec.IngestSeq {
			if cur.State == messages.StateDone || cur.State == messages.StateDeadLettered ||
				keepDismissed && cur.State == messages.StateDismissed {
				return false, nil
			}
			next = cur
			next.LastFailure, next.TraceID = rec.LastFailure, rec.TraceID
		}
		next.State = messages.StateDeadLettered
		next.Targets = messages.TargetsWith(cur, ok, target, rec.IngestSeq)
		val, err := messages.EncodeDocRecord(next)
		if err != nil {
			return false, err
		}
		if rev == 0 {
			_, err = s.kv.Create(ctx, key, val)
		} else {
			_, err = s.kv.Update(ctx, key, val, rev)
		}
		if topology.IsCASConflict(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("worker: record the failure of %q: %w", docID, err)
		}
		return true, nil
	}
}
