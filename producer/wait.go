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

// ErrWaitTimeout means Wait stopped before every request was processed.
var ErrWaitTimeout = errors.New("producer: requests still pending")

// Awaited is a published request to wait for: its document (tenant and
// id) and INGEST sequence, or, for a batched request, the bounds and
// version of Sent.
type Awaited struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant,omitempty"`
	Seq     uint64 `json:"ingest_seq"`
	Batched bool   `json:"batched,omitempty"`
	After   uint64 `json:"after_seq,omitempty"`
	Version string `json:"version,omitempty"`
}

// awaitOutcome is what a document record says of an awaited request.
type awaitOutcome int

const (
	awaitPending awaitOutcome = iota
	awaitDone
	awaitFailed
	awaitSuperseded
)

// outcome decides a from rec, the record of its document, by the rules of
// docs/cli.md ("Waiting for the workers").
func (a Awaited) outcome(rec messages.DocRecord) awaitOutcome {
	ours := rec.IngestSeq == a.Seq
	if a.Batched {
		ours = rec.IngestSeq > a.After && (a.Seq == 0 || rec.IngestSeq <= a.Seq) && a.sameVersion(rec)
	}
	switch {
	case ours && rec.State == messages.StateDone:
		return awaitDone
	case ours && rec.State == messages.StateDeadLettered:
		return awaitFailed
	case !ours && a.Seq != 0 && rec.IngestSeq > a.Seq:
		return awaitSuperseded
	}
	return awaitPending
}

// sameVersion reports whether rec can be the record of a's version: same
// operation and content, or a dead-lettered request that did not decode
// (its record names neither).
func (a Awaited) sameVersion(rec messages.DocRecord) bool {
	switch {
	case rec.Op == "":
		return true
	case a.Version == string(messages.OpDelete):
		return rec.Op == messages.OpDelete
	}
	return rec.Op == messages.OpUpsert && rec.DocVersion == a.Version
}

// WaitStats counts the awaited requests by outcome.
type WaitStats struct {
	Total      int `json:"total"`
	Done       int `json:"done"`
	Failed     int `json:"failed"`
	Superseded int `json:"superseded"`
	Pending    int `json:"pending"`
}

// WaitFailure is a dead-lettered request and its record's last failure.
type WaitFailure struct {
	Awaited
	Failure messages.Failure `json:"last_failure"`
}

// WaitResult is what Wait found.
type WaitResult struct {
	WaitStats
	Elapsed time.Duration `json:"elapsed"`
	// Failures, SupersededRequests and PendingRequests list the requests
	// of those outcomes, each sorted by id.
	Failures           []WaitFailure `json:"failures,omitempty"`
	SupersededRequests []Awaited     `json:"superseded_requests,omitempty"`
	PendingRequests    []Awaited     `json:"pending_requests,omitempty"`
}

// OK reports whether none failed or is pending (superseded ones are fine).
func (r *WaitResult) OK() bool { return r.Failed == 0 && r.Pending == 0 }

// WaitOptions configure Wait.
type WaitOptions struct {
	// Bucket is the KV bucket of document records.
	Bucket string
	// OnProgress receives the counts whenever a request's outcome is
	// known, one call at a time.
	OnProgress func(WaitStats)
}

// Wait watches the document records of the awaited requests until each
// is processed (done, dead-lettered or superseded: docs/cli.md) or
// ctx ends; then the result lists the pending requests and the error
// wraps ErrWaitTimeout and ctx's error. A missing bucket is waited for.
func Wait(ctx context.Context, js jetstream.JetStream, sent []Awaited, o WaitOptions) (WaitResult, error) {
	start := time.Now()
	res := WaitResult{WaitStats: WaitStats{Total: len(sent), Pending: len(sent)}}
	// By document (its record's name: tenant and id), lowest sequence
	// first; a document sent twice is watched twice.
	byID := make(map[string][]Awaited, len(sent))
	for _, a := range sent {
		rid := messages.RecordID(a.Tenant, a.ID)
		byID[rid] = append(byID[rid], a)
	}
	for _, as := range byID {
		slices.SortFunc(as, byIDSeq)
	}
	progress := func() {
		if o.OnProgress != nil {
			o.OnProgress(res.WaitStats)
		}
	}
	progress()
	// apply settles the requests of id that rec decides.
	apply := func(id string, rec messages.DocRecord) {
		as := byID[id]
		kept := as[:0]
		for _, a := range as {
			switch a.outcome(rec) {
			case awaitSuperseded:
				res.Superseded++
				res.SupersededRequests = append(res.SupersededRequests, a)
			case awaitDone:
				res.Done++
			case awaitFailed:
				res.Failed++
				res.Failures = append(res.Failures, WaitFailure{Awaited: a, Failure: rec.LastFailure})
			default:
				kept = append(kept, a)
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
		// Requests of one tenant watch its records alone.
		keys := messages.DocRecordKeys(sent[0].Tenant)
		for _, a := range sent {
			if a.Tenant != sent[0].Tenant {
				keys = jetstream.AllKeys
				break
			}
		}
		err = watchRecords(ctx, js, o.Bucket, keys, func(rid string, rec messages.DocRecord) bool {
			if _, ok := byID[rid]; ok {
				apply(rid, rec)
			}
			return len(byID) == 0
		})
	}
	res.Elapsed = time.Since(start)
	for _, as := range byID {
		res.PendingRequests = append(res.PendingRequests, as...)
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

// byIDSeq orders awaited requests by tenant and id, then sequence.
func byIDSeq(a, b Awaited) int {
	if c := cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.ID, b.ID)); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.After, b.After))
}

// watchRecords calls fn with every document record of bucket, the
// current ones and then every change, until fn returns true (nil error)
// or ctx ends (ctx's error). A missing bucket is looked for every second.
func watchRecords(ctx context.Context, js jetstream.JetStream, bucket, keys string, fn func(id string, rec messages.DocRecord) bool) error {
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
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
	err := watchKV(ctx, kv, bucket, keys, "watch", true, func(id string, rec messages.DocRecord, ok bool) (bool, error) {
		return ok && fn(id, rec), nil
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
