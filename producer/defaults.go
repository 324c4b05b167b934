package producer

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// ErrNoRecordsBucket is SetChunkerDefaults before any worker created the
// bucket of document records.
var ErrNoRecordsBucket = errors.New("producer: no bucket of document records yet")

// ReadChunkerDefaults returns the fleet's chunker defaults, the ones every
// worker resolves requests with; ok is false when none are set (no
// worker has started).
func ReadChunkerDefaults(ctx context.Context, js jetstream.JetStream, top topology.Config) (d messages.ChunkerDefaults, ok bool, err error) {
	return readDefaults(ctx, js, top.WithDefaults().DocsBucket)
}

// SetChunkerDefaults makes d, resolved with reg (nil: registry.Default()),
// the fleet's chunker defaults: every running worker follows them as soon
// as it sees the change, and workers started later too, whatever their
// own. The encoding the workers advertise is kept. It returns the
// defaults replaced (had: there were some) and those set.
func SetChunkerDefaults(ctx context.Context, js jetstream.JetStream, top topology.Config, reg *registry.Registry, d registry.Defaults) (old messages.ChunkerDefaults, had bool, set messages.ChunkerDefaults, err error) {
	if reg == nil {
		reg = registry.Default()
	}
	rs, err := reg.Resolver(d)
	if err != nil {
		return old, false, set, fmt.Errorf("producer: chunker defaults: %w", err)
	}
	bucket := top.WithDefaults().DocsBucket
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return old, false, set, fmt.Errorf("%w (%s): start a worker first (the first one sets the fleet's defaults from its own)", ErrNoRecordsBucket, bucket)
	}
	if err != nil {
		return old, false, set, fmt.Errorf("producer: document records %s: %w", bucket, err)
	}
	for {
		var rev uint64
		old, had = messages.ChunkerDefaults{}, false
		e, err := kv.Get(ctx, messages.ChunkerDefaultsKey)
		switch {
		case err == nil:
			if old, err = messages.DecodeChunkerDefaults(e.Value()); err != nil {
				old = messages.ChunkerDefaults{} // replaced all the same
			}
			had, rev = true, e.Revision()
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return old, false, set, fmt.Errorf("producer: read the fleet's chunker defaults: %w", err)
		}
		set = messages.ChunkerDefaults{Chunker: rs.Defaults().Chunker, Options: rs.Defaults().Options, Encoding: old.Encoding}
		val, err := messages.EncodeChunkerDefaults(set)
		if err != nil {
			return old, had, set, fmt.Errorf("producer: chunker defaults: %w", err)
		}
		if rev == 0 {
			_, err = kv.Create(ctx, messages.ChunkerDefaultsKey, val) // also over a deletion marker
		} else {
			_, err = kv.Update(ctx, messages.ChunkerDefaultsKey, val, rev)
		}
		if topology.IsCASConflict(err) {
			continue // a worker wrote meanwhile: read again
		}
		if err != nil {
			return old, had, set, fmt.Errorf("producer: write the fleet's chunker defaults: %w", err)
		}
		return old, had, set, nil
	}
}
