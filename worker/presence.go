package worker

import (
	"context"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/messages"
)

// present writes the worker's presence (messages.WorkerPresence) in the
// bucket of document records, for `producer status` and `producer -wait`.
func (w *Worker) present(ctx context.Context, ready bool) {
	host, _ := os.Hostname()
	p := messages.WorkerPresence{ID: w.id, Host: host, Started: w.started, Seen: time.Now().UTC(),
		Ready: ready, InFlight: int(w.proc.inFlight.Load()), OwnDefaults: w.fleet.ownShown(), Reads: messages.WorkerReads()}
	if n := w.pull.lastPull.Load(); n != 0 {
		p.LastPull = time.Unix(0, n).UTC()
	}
	w.pull.mu.Lock()
	p.Held = len(w.pull.held)
	w.pull.mu.Unlock()
	val, err := messages.EncodeWorkerPresence(p)
	if err == nil {
		_, err = w.top.Docs.Put(ctx, messages.WorkerKey(w.id), val)
	}
	if err != nil && ctx.Err() == nil {
		w.log.Debug("presence not written", "err", err)
	}
}

// absent removes the worker's presence, and those of workers that are
// gone.
func (w *Worker) absent(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = w.top.Docs.Purge(ctx, messages.WorkerKey(w.id))
	w.sweepGone(ctx)
}

// sweepGone removes the presences of workers that are gone
// (messages.PresenceTTL), each only if it was not written since it was
// read.
func (w *Worker) sweepGone(ctx context.Context) {
	kv := w.top.Docs
	keys, err := kv.ListKeysFiltered(ctx, messages.WorkerKeyPrefix+">")
	if err != nil {
		return
	}
	for key := range keys.Keys() {
		if key == messages.WorkerKey(w.id) {
			continue // its own: not gone
		}
		e, err := kv.Get(ctx, key)
		if err != nil {
			continue
		}
		if p, err := messages.DecodeWorkerPresence(e.Value()); err != nil || p.Gone(time.Now()) {
			_ = kv.Purge(ctx, key, jetstream.LastRevision(e.Revision()))
		}
	}
}
