package producer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// ErrWaitTimeout means Wait stopped before every request it watched was
// processed.
var ErrWaitTimeout = errors.New("producer: requests still pending")

// Awaited is a published request to wait for: its document id and the
// INGEST stream sequence its PubAck gave.
type Awaited struct {
	ID  string `json:"id"`
	Seq uint64 `json:"ingest_seq"`
}

// WaitStats counts the awaited requests by outcome.
type WaitStats struct {
	Total      int `json:"total"`
	Done       int `json:"done"`
	Failed     int `json:"failed"`
	Superseded int `json:"superseded"`
	Pending    int `json:"pending"`
}

// WaitFailure is a dead-lettered request and why (the record's last
// failure).
type WaitFailure struct {
	Awaited
	Failure messages.Failure `json:"last_failure"`
}

// WaitResult is what Wait found.
type WaitResult struct {
	WaitStats
	// Elapsed is how long Wait watched.
	Elapsed time.Duration `json:"elapsed"`
	// Failures are the dead-lettered requests, SupersededRequests those
	// overtaken by a newer version, PendingRequests those still pending
	// when Wait stopped; each sorted by id.
	Failures           []WaitFailure `json:"failures,omitempty"`
	SupersededRequests []Awaited     `json:"superseded_requests,omitempty"`
	PendingRequests    []Awaited     `json:"pending_requests,omitempty"`
}

// OK reports whether every request was processed and none failed
// (superseded ones are fine: a newer version took their place).
func (r *WaitResult) OK() bool { return r.Failed == 0 && r.Pending == 0 }

// WaitOptions configure Wait.
type WaitOptions struct {
	// Bucket is the KV bucket of document records (CHUNKSTREAM_DOCS).
	Bucket string
	// OnProgress is called, one call at a time, when a request's outcome
	// is known, with the counts so far.
	OnProgress func(WaitStats)
}

// Wait watches the document records of the awaited requests until each
// is processed (done, dead-lettered or superseded) or ctx ends. The
// record of the request's document decides: a record at the request's
// sequence that is done means done, dead-lettered means failed (with the
// record's last failure); a record at a higher sequence means
// superseded; anything else is pending. When ctx ends first, the result
// lists the pending requests and the error wraps ErrWaitTimeout (and
// ctx's error). Other errors are the records' (a missing bucket: no
// worker ever ran, every request pending).
func Wait(ctx context.Context, js jetstream.JetStream, sent []Awaited, o WaitOptions) (WaitResult, error) {
	start := time.Now()
	res := WaitResult{WaitStats: WaitStats{Total: len(sent), Pending: len(sent)}}
	// The requests by document, lowest sequence first; an id sent twice
	// (a stream) is watched twice.
	byID := make(map[string][]uint64, len(sent))
	for _, a := range sent {
		byID[a.ID] = append(byID[a.ID], a.Seq)
	}
	for _, seqs := range byID {
		slices.Sort(seqs)
	}
	progress := func() {
		if o.OnProgress != nil {
			o.OnProgress(res.WaitStats)
		}
	}
	progress()
	// apply settles the requests of id that rec decides.
	apply := func(id string, rec messages.DocRecord) {
		seqs := byID[id]
		kept := seqs[:0]
		for _, seq := range seqs {
			a := Awaited{ID: id, Seq: seq}
			switch {
			case rec.IngestSeq > seq:
				res.Superseded++
				res.SupersededRequests = append(res.SupersededRequests, a)
			case rec.IngestSeq == seq && rec.State == messages.StateDone:
				res.Done++
			case rec.IngestSeq == seq && rec.State == messages.StateDeadLettered:
				res.Failed++
				res.Failures = append(res.Failures, WaitFailure{Awaited: a, Failure: rec.LastFailure})
			default:
				kept = append(kept, seq)
				continue
			}
			res.Pending--
			progress()
		}
		if len(kept) == 0 {
			delete(byID, id)
		} else {
			byID[id] = kept
		}
	}
	var err error
	if len(byID) > 0 {
		err = watchRecords(ctx, js, o.Bucket, func(id string, rec messages.DocRecord) bool {
			if _, ok := byID[id]; ok {
				apply(id, rec)
			}
			return len(byID) == 0
		})
	}
	res.Elapsed = time.Since(start)
	for id, seqs := range byID {
		for _, seq := range seqs {
			res.PendingRequests = append(res.PendingRequests, Awaited{ID: id, Seq: seq})
		}
	}
	byIDSeq := func(a, b Awaited) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	}
	slices.SortFunc(res.PendingRequests, byIDSeq)
	slices.SortFunc(res.SupersededRequests, byIDSeq)
	slices.SortFunc(res.Failures, func(a, b WaitFailure) int { return byIDSeq(a.Awaited, b.Awaited) })
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("%w: %d of %d after %v: %w", ErrWaitTimeout, res.Pending, res.Total, res.Elapsed.Round(time.Millisecond), err)
		}
		return res, err
	}
	return res, nil
}

// watchRecords calls fn with every document record of bucket, the
// current ones and then every change, until fn returns true (nil error)
// or ctx ends (ctx's error); fn decides when the watch is over. A bucket that does not exist yet is looked
// for again every second: the workers create it.
func watchRecords(ctx context.Context, js jetstream.JetStream, bucket string, fn func(id string, rec messages.DocRecord) bool) error {
	var kv jetstream.KeyValue
	for {
		var err error
		kv, err = js.KeyValue(ctx, bucket)
		if err == nil {
			break
		}
		if !errors.Is(err, jetstream.ErrBucketNotFound) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("producer: document records %s: %w", bucket, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("producer: watch document records %s: %w", bucket, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("producer: watch document records %s: watcher closed", bucket)
			}
			if e == nil {
				continue // the current values are in; changes follow
			}
			id, ok := messages.DocRecordID(e.Key())
			if !ok {
				continue
			}
			rec, err := messages.DecodeDocRecord(e.Value())
			if err != nil {
				continue
			}
			if fn(id, rec) {
				return nil
			}
		}
	}
}
