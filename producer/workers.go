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

// ReadWorkers returns the presences of the workers that write to the
// records bucket, sorted by id (none when the bucket is missing).
func ReadWorkers(ctx context.Context, js jetstream.JetStream, bucket string) ([]messages.WorkerPresence, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("document records %s: %w", bucket, err)
	}
	keys, err := kv.ListKeysFiltered(ctx, messages.WorkerKeyPrefix+">")
	if err != nil {
		return nil, fmt.Errorf("workers in %s: %w", bucket, err)
	}
	defer func() { _ = keys.Stop() }()
	var out []messages.WorkerPresence
	for key := range keys.Keys() {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", key, err)
		}
		if p, err := messages.DecodeWorkerPresence(e.Value()); err == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b messages.WorkerPresence) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// ErrWorkersBehind means a running worker is of a build that misreads
// the requests about to be sent (bulk requests, tenants' requests).
var ErrWorkersBehind = errors.New("a running worker is of an earlier build")

// requireReads refuses, wrapping ErrWorkersBehind, to send tenants'
// requests or bulk requests while a running worker does not say it reads
// them (messages.ReadsTenants, messages.ReadsBulk): upgrade the workers
// first. With no worker running it cannot tell, and lets them go.
func (p *Producer) requireReads(ctx context.Context, tenants, bulk bool) error {
	return requireReads(ctx, p.js, p.opts.Topology.DocsBucket, tenants, bulk)
}

// requireReads is Producer.requireReads over the presences in the
// records bucket of js.
func requireReads(ctx context.Context, js jetstream.JetStream, bucket string, tenants, bulk bool) error {
	var kinds []string
	if tenants {
		kinds = append(kinds, messages.ReadsTenants)
	}
	if bulk {
		kinds = append(kinds, messages.ReadsBulk)
	}
	if len(kinds) == 0 {
		return nil
	}
	ws, err := ReadWorkers(ctx, js, bucket)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	now := time.Now()
	for _, w := range ws {
		if w.Gone(now) {
			continue
		}
		for _, kind := range kinds {
			if w.ReadsKind(kind) {
				continue
			}
			return fmt.Errorf("producer: %w: worker %s on %s does not read %s requests; upgrade every worker before sending them (docs/operations.md, \"Upgrading\")",
				ErrWorkersBehind, w.ID, cmp.Or(w.Host, "an unknown host"), kind)
		}
	}
	return nil
}
