package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// ChunkerDefaults returns the chunker defaults the worker applies to
// requests that do not set them (Config.Chunker and ChunkerOptions,
// resolved), with its sink's encoding (EncodingSink), as it advertises
// them.
func (w *Worker) ChunkerDefaults() messages.ChunkerDefaults {
	d := w.chunkers.Defaults()
	return messages.ChunkerDefaults{Chunker: d.Chunker, Options: d.Options, Encoding: w.encoding}
}

// advertise writes the worker's chunker defaults under
// messages.ChunkerDefaultsKey in the bucket of document records, where
// producers read them to compute the settings fingerprint a worker will
// record. An equal advertisement is left as it is; a different one (the
// workers started before had other settings) is replaced, with a
// warning: the last worker started wins.
func (w *Worker) advertise(ctx context.Context) error {
	defaults := w.ChunkerDefaults()
	val, err := messages.EncodeChunkerDefaults(defaults)
	if err != nil {
		return fmt.Errorf("worker: advertise chunker defaults: %w", err)
	}
	kv := w.top.Docs
	e, err := kv.Get(ctx, messages.ChunkerDefaultsKey)
	switch {
	case err == nil:
		cur, derr := messages.DecodeChunkerDefaults(e.Value())
		if derr == nil && cur.Equal(defaults) {
			return nil
		}
		w.log.Warn("replacing the chunker defaults other workers advertised: until they restart with these, their records hold other settings fingerprints",
			"advertised", string(e.Value()), "chunker_defaults", string(val))
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return fmt.Errorf("worker: read advertised chunker defaults: %w", err)
	}
	if _, err := kv.Put(ctx, messages.ChunkerDefaultsKey, val); err != nil {
		return fmt.Errorf("worker: advertise chunker defaults: %w", err)
	}
	w.log.Info("chunker defaults advertised", "chunker_defaults", string(val))
	return nil
}
