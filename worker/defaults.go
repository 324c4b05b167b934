package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// ChunkerDefaults returns the chunker defaults the worker applies and
// advertises (Config.Chunker and ChunkerOptions resolved, the sink's
// encoding).
func (w *Worker) ChunkerDefaults() messages.ChunkerDefaults {
	d := w.chunkers.Defaults()
	return messages.ChunkerDefaults{Chunker: d.Chunker, Options: d.Options, Encoding: w.encoding}
}

// advertise writes the worker's chunker defaults under
// messages.ChunkerDefaultsKey (doc.go, "Chunker settings"). The read and
// the write are retried as the set-up is (topology.Retry): right after the
// set-up the bucket's leader may still be being elected.
func (w *Worker) advertise(ctx context.Context) error {
	defaults := w.ChunkerDefaults()
	val, err := messages.EncodeChunkerDefaults(defaults)
	if err != nil {
		return fmt.Errorf("worker: advertise chunker defaults: %w", err)
	}
	kv := w.top.Docs
	var e jetstream.KeyValueEntry
	if err := topology.Retry(ctx, w.cfg.Config, "read", "the advertised chunker defaults", func(ctx context.Context) error {
		e, err = kv.Get(ctx, messages.ChunkerDefaultsKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			e, err = nil, nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if e != nil {
		cur, derr := messages.DecodeChunkerDefaults(e.Value())
		if derr == nil && cur.Equal(defaults) {
			w.advertised.Store(true)
			return nil
		}
		w.log.Warn("replacing the chunker defaults other workers advertised: until they restart with these, their records hold other settings fingerprints",
			"advertised", string(e.Value()), "chunker_defaults", string(val))
	}
	if err := topology.Retry(ctx, w.cfg.Config, "write", "the chunker defaults", func(ctx context.Context) error {
		_, err := kv.Put(ctx, messages.ChunkerDefaultsKey, val)
		return err
	}); err != nil {
		return fmt.Errorf("worker: advertise: %w", err)
	}
	w.advertised.Store(true)
	w.log.Info("chunker defaults advertised", "chunker_defaults", string(val))
	return nil
}
