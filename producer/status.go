package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// DocumentCounts counts the document records by state; Other counts
// records of an unknown state or that do not parse.
type DocumentCounts struct {
	Total        int `json:"total"`
	Done         int `json:"done"`    // upserts done
	Deleted      int `json:"deleted"` // deletes done
	Pending      int `json:"pending"`
	DeadLettered int `json:"dead_lettered"`
	Dismissed    int `json:"dismissed,omitempty"` // dead letter purged
	Other        int `json:"other,omitempty"`
}

// Backlog is the work queue's state: the workers' consumer on the ingest
// stream.
type Backlog struct {
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	// Pending, AckPending and Redelivered are the consumer's NumPending,
	// NumAckPending and NumRedelivered.
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
}

// Status is the state of the pipeline as the producer can read it.
type Status struct {
	Documents DocumentCounts `json:"documents"`
	// Backlog is nil when the stream or consumer does not exist.
	Backlog *Backlog `json:"backlog"`
	// DeadLetters is the DLQ stream's message count (-1: no stream).
	DeadLetters int64 `json:"dead_letters"`
	// ChunkerDefaults are the fleet's chunker defaults (nil: none set).
	ChunkerDefaults *messages.ChunkerDefaults `json:"chunker_defaults"`
	// Workers are the running workers' presences; Gone those of workers
	// that stopped writing theirs (messages.PresenceTTL) and that no
	// running worker has removed yet.
	Workers []messages.WorkerPresence `json:"workers"`
	Gone    []messages.WorkerPresence `json:"gone_workers,omitempty"`
}

// ReadStatus reads the pipeline's status; what is not set up yet reads as
// empty (docs/cli.md, "producer status").
func ReadStatus(ctx context.Context, js jetstream.JetStream, cfg topology.Config) (Status, error) {
	cfg = cfg.WithDefaults()
	st := Status{DeadLetters: -1}
	err := EachRecord(ctx, js, cfg.DocsBucket, func(_ string, rec messages.DocRecord, ok bool) error {
		st.Documents.Total++
		switch {
		case !ok:
			st.Documents.Other++
		case rec.State == messages.StateDone && rec.Op == messages.OpDelete:
			st.Documents.Deleted++
		case rec.State == messages.StateDone:
			st.Documents.Done++
		case rec.State == messages.StatePending:
			st.Documents.Pending++
		case rec.State == messages.StateDeadLettered:
			st.Documents.DeadLettered++
		case rec.State == messages.StateDismissed:
			st.Documents.Dismissed++
		default:
			st.Documents.Other++
		}
		return nil
	})
	if err != nil {
		return Status{}, err
	}
	d, ok, err := readDefaults(ctx, js, cfg.DocsBucket)
	if err != nil {
		return Status{}, err
	}
	ws, err := ReadWorkers(ctx, js, cfg.DocsBucket)
	if err != nil {
		return Status{}, err
	}
	now := time.Now()
	for _, p := range ws {
		if p.Gone(now) {
			st.Gone = append(st.Gone, p)
		} else {
			st.Workers = append(st.Workers, p)
		}
	}
	if ok {
		st.ChunkerDefaults = &d
	}
	cons, err := js.Consumer(ctx, cfg.IngestStream, cfg.Consumer)
	switch {
	case err == nil:
		info, err := cons.Info(ctx)
		if err != nil {
			return Status{}, fmt.Errorf("producer: status: consumer %s: %w", cfg.Consumer, err)
		}
		st.Backlog = &Backlog{Stream: cfg.IngestStream, Consumer: cfg.Consumer, Pending: info.NumPending,
			AckPending: info.NumAckPending, Redelivered: info.NumRedelivered}
	case !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound):
		return Status{}, fmt.Errorf("producer: status: consumer %s: %w", cfg.Consumer, err)
	}
	dlq, err := js.Stream(ctx, cfg.DLQStream)
	switch {
	case err == nil:
		info, err := dlq.Info(ctx)
		if err != nil {
			return Status{}, fmt.Errorf("producer: status: stream %s: %w", cfg.DLQStream, err)
		}
		st.DeadLetters = int64(info.State.Msgs)
	case !errors.Is(err, jetstream.ErrStreamNotFound):
		return Status{}, fmt.Errorf("producer: status: stream %s: %w", cfg.DLQStream, err)
	}
	return st, nil
}

// ReadRecord returns the document record of id in bucket; ok: there is one.
func ReadRecord(ctx context.Context, js jetstream.JetStream, bucket, id string) (rec messages.DocRecord, ok bool, err error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return messages.DocRecord{}, false, nil
	}
	if err != nil {
		return messages.DocRecord{}, false, fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	e, err := kv.Get(ctx, messages.DocRecordKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return messages.DocRecord{}, false, nil
	}
	if err != nil {
		return messages.DocRecord{}, false, fmt.Errorf("producer: record of %q: %w", id, err)
	}
	rec, err = messages.DecodeDocRecord(e.Value())
	if err != nil {
		return messages.DocRecord{}, false, fmt.Errorf("producer: record of %q: %w", id, err)
	}
	return rec, true, nil
}

// EachRecord calls fn with every document record of bucket, in one pass
// (a KV watch), in no particular order; ok is false when the value does
// not parse. Keys that are not document ids are passed over; a missing
// bucket has no records. An error of fn stops the walk and is returned.
func EachRecord(ctx context.Context, js jetstream.JetStream, bucket string, fn func(id string, rec messages.DocRecord, ok bool) error) error {
	return eachRecord(ctx, js, bucket, jetstream.AllKeys, fn)
}

// EachTenantRecord is EachRecord over tenant's documents alone (the
// untenanted ones for ""): it reads no other tenant's record.
func EachTenantRecord(ctx context.Context, js jetstream.JetStream, bucket, tenant string, fn func(id string, rec messages.DocRecord, ok bool) error) error {
	return eachRecord(ctx, js, bucket, messages.DocRecordKeys(tenant), fn)
}

func eachRecord(ctx context.Context, js jetstream.JetStream, bucket, keys string, fn func(id string, rec messages.DocRecord, ok bool) error) error {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	return watchKV(ctx, kv, bucket, keys, "read", false, func(id string, rec messages.DocRecord, ok bool) (bool, error) {
		return false, fn(id, rec, ok)
	})
}

// watchKV calls fn with every document record of kv under the key filter
// keys (ok false when it does not parse): the current values, then, with
// follow, every change, until fn returns true or an error. what names the
// watch in errors.
func watchKV(ctx context.Context, kv jetstream.KeyValue, bucket, keys, what string, follow bool, fn func(id string, rec messages.DocRecord, ok bool) (bool, error)) error {
	w, err := kv.Watch(ctx, keys, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("producer: %s document records %s: %w", what, bucket, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("producer: %s document records %s: watcher closed", what, bucket)
			}
			if e == nil { // the current values are in; changes follow
				if !follow {
					return nil
				}
				continue
			}
			id, ok := messages.DocRecordID(e.Key())
			if !ok {
				continue
			}
			rec, err := messages.DecodeDocRecord(e.Value())
			if done, err := fn(id, rec, err == nil); done || err != nil {
				return err
			}
		}
	}
}
