package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/outage"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
)

// DependencyDefaults names, among what a worker waits for (docs/design.md,
// "Delivery semantics"), the fleet's chunker defaults when they do not resolve with
// its chunkers: it holds its deliveries rather than resolve them
// otherwise than the fleet.
const DependencyDefaults = "chunker_defaults"

// fleet follows the fleet's chunker defaults (docs/design.md, "One
// fleet, one resolution"): the value under messages.ChunkerDefaultsKey in
// the bucket of document records, never the worker's own when they
// differ.
type fleet struct {
	log      *slog.Logger
	cfg      *Config
	kv       jetstream.KeyValue
	out      *outage.Machine
	chunkers atomic.Pointer[registry.Resolver] // the fleet's defaults
	own      *registry.Resolver                // the worker's own
	other    atomic.Bool                       // its own differ from the fleet's
	set      bool                              // Options.SetFleetDefaults
	encoding string                            // the sink's EncodingSink.Encoding, "" when it has none
	adopted  atomic.Bool                       // the fleet's defaults were read (or written)
}

func newFleet(w *Worker, own *registry.Resolver, sink Sink, set bool) *fleet {
	f := &fleet{log: w.log, cfg: &w.cfg, kv: w.top.Docs, out: w.out, own: own, set: set}
	f.chunkers.Store(own)
	if es, ok := sink.(EncodingSink); ok {
		f.encoding = es.Encoding()
	}
	return f
}

// ChunkerDefaults returns the chunker defaults the worker applies now:
// the fleet's, resolved, with the sink's encoding.
func (w *Worker) ChunkerDefaults() messages.ChunkerDefaults { return w.fleet.defaults() }

func (f *fleet) defaults() messages.ChunkerDefaults {
	d := f.resolver().Defaults()
	return messages.ChunkerDefaults{Chunker: d.Chunker, Options: d.Options, Encoding: f.encoding}
}

// OwnChunkerDefaults returns the worker's own chunker defaults
// (Config.Chunker and ChunkerOptions resolved, the sink's encoding),
// which it applies only when they are the fleet's.
func (w *Worker) OwnChunkerDefaults() messages.ChunkerDefaults { return w.fleet.ownDefaults() }

func (f *fleet) ownDefaults() messages.ChunkerDefaults {
	d := f.own.Defaults()
	return messages.ChunkerDefaults{Chunker: d.Chunker, Options: d.Options, Encoding: f.encoding}
}

// resolver returns the resolver of the fleet's defaults.
func (f *fleet) resolver() *registry.Resolver { return f.chunkers.Load() }

// sameResolution reports whether two defaults resolve requests alike:
// the same chunker and options (by their JSON), whatever the encoding.
func sameResolution(a, b messages.ChunkerDefaults) bool {
	a.Encoding, b.Encoding = "", ""
	return a.Equal(b)
}

// defaultsJSON is d as the key holds it, for log lines.
func defaultsJSON(d messages.ChunkerDefaults) string {
	b, _ := messages.EncodeChunkerDefaults(d)
	return string(b)
}

// adopt runs at the start of Run: it reads the fleet's chunker
// defaults under messages.ChunkerDefaultsKey and follows them; when there
// are none (or with Options.SetFleetDefaults) it writes its own, so the
// first worker of a fleet sets them. Its sink's encoding, which is not
// the fleet's to choose, replaces the one the key holds. Reads and writes
// are retried as the set-up is (topology.Retry): right after the set-up
// the bucket's leader may still be being elected.
func (f *fleet) adopt(ctx context.Context) error {
	kv := f.kv
	own := f.ownDefaults()
	for {
		var e jetstream.KeyValueEntry
		if err := topology.Retry(ctx, f.cfg.Config, "read", "the fleet's chunker defaults", func(ctx context.Context) error {
			var err error
			e, err = kv.Get(ctx, messages.ChunkerDefaultsKey)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				e, err = nil, nil
			}
			return err
		}); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		next, rev := own, uint64(0)
		switch {
		case e != nil && f.set:
			rev = e.Revision()
		case e != nil:
			cur, err := messages.DecodeChunkerDefaults(e.Value())
			if err != nil {
				return fmt.Errorf("worker: the fleet's chunker defaults (key %s): %w", messages.ChunkerDefaultsKey, err)
			}
			f.follow(cur)
			if cur.Encoding == f.encoding {
				f.adopted.Store(true)
				return nil
			}
			f.log.Warn("replacing the sink encoding other workers advertised: until they restart with this one, their records hold other settings fingerprints",
				"advertised", cur.Encoding, "encoding", f.encoding)
			next, rev = cur, e.Revision()
			next.Encoding = f.encoding
		}
		val, err := messages.EncodeChunkerDefaults(next)
		if err != nil {
			return fmt.Errorf("worker: chunker defaults: %w", err)
		}
		err = topology.Retry(ctx, f.cfg.Config, "write", "the chunker defaults", func(ctx context.Context) error {
			var err error
			if rev == 0 {
				_, err = kv.Create(ctx, messages.ChunkerDefaultsKey, val) // also over a deletion marker
			} else {
				_, err = kv.Update(ctx, messages.ChunkerDefaultsKey, val, rev)
			}
			return err
		})
		if topology.IsCASConflict(err) {
			continue // another worker wrote them meanwhile: read them again
		}
		if err != nil {
			return fmt.Errorf("worker: write the chunker defaults: %w", err)
		}
		if e == nil || f.set {
			f.follow(next)
			f.log.Info("fleet chunker defaults set to this worker's", "chunker_defaults", string(val))
		}
		f.adopted.Store(true)
		return nil
	}
}

// follow makes the fleet's defaults d the worker's resolution. When they
// do not resolve with its chunkers (a chunker or option it does not
// know) it holds its deliveries, DependencyDefaults down, until they do;
// when they differ from its own it says so.
func (f *fleet) follow(d messages.ChunkerDefaults) {
	rs, err := f.own.Registry().Resolver(registry.Defaults{Chunker: d.Chunker, Options: d.Options})
	if err != nil {
		f.log.Error("the fleet's chunker defaults do not resolve with this worker's chunkers: holding requests until they do (set them with `producer defaults set`, or run a worker that knows them)",
			"fleet", defaultsJSON(d), "err", err)
		f.out.Hold(DependencyDefaults, fmt.Errorf("fleet chunker defaults %s: %w", defaultsJSON(d), err))
		return
	}
	fleet := messages.ChunkerDefaults{Chunker: rs.Defaults().Chunker, Options: rs.Defaults().Options}
	changed := !sameResolution(fleet, f.defaults())
	if changed {
		f.chunkers.Store(rs)
	}
	f.out.Clear(DependencyDefaults)
	own := f.ownDefaults()
	other := !sameResolution(fleet, own)
	wasOther := f.other.Swap(other)
	switch {
	case other && (changed || !wasOther):
		f.log.Warn("this worker's own chunker defaults differ from the fleet's: following the fleet's, as every worker does",
			"fleet", defaultsJSON(fleet), "own", defaultsJSON(own))
	case changed:
		f.log.Info("following the fleet's chunker defaults", "fleet", defaultsJSON(fleet))
	}
}

// watch follows every change of the fleet's defaults until ctx
// ends, so the fleet switches at once when an operator sets them; a
// watch that ends (the bucket set up again) is started again.
func (f *fleet) watch(ctx context.Context) {
	var last []byte
	for ctx.Err() == nil {
		watcher, err := f.kv.Watch(ctx, messages.ChunkerDefaultsKey, jetstream.IgnoreDeletes())
		if err != nil {
			f.log.Debug("watch of the fleet's chunker defaults not started", "err", err)
		} else {
			for e := range watcher.Updates() {
				if e == nil || bytes.Equal(e.Value(), last) {
					continue
				}
				last = bytes.Clone(e.Value())
				d, err := messages.DecodeChunkerDefaults(e.Value())
				if err != nil {
					f.log.Error("the fleet's chunker defaults do not decode: following the ones read before", "key", messages.ChunkerDefaultsKey, "err", err)
					continue
				}
				f.follow(d)
			}
			_ = watcher.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// probe reads the fleet's defaults again and follows them; it
// fails while they do not resolve.
func (f *fleet) probe(ctx context.Context) error {
	e, err := f.kv.Get(ctx, messages.ChunkerDefaultsKey)
	if err != nil {
		return fmt.Errorf("worker: read the fleet's chunker defaults: %w", err)
	}
	d, err := messages.DecodeChunkerDefaults(e.Value())
	if err != nil {
		return fmt.Errorf("worker: the fleet's chunker defaults: %w", err)
	}
	if _, err := f.own.Registry().Resolver(registry.Defaults{Chunker: d.Chunker, Options: d.Options}); err != nil {
		return fmt.Errorf("worker: the fleet's chunker defaults %s: %w", defaultsJSON(d), err)
	}
	f.follow(d)
	return nil
}

// ownShown is what the presence says of the worker's own
// defaults: them when they differ from the fleet's, else nil.
func (f *fleet) ownShown() *messages.ChunkerDefaults {
	if !f.other.Load() {
		return nil
	}
	own := f.ownDefaults()
	own.Encoding = ""
	return &own
}
