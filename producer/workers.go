package producer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
