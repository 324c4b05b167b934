package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// outageKeyPrefix starts the keys of the outage notices, in the bucket of
// document records; like the presences' keys it holds a ".", so it is
// never a record's.
const outageKeyPrefix = "chunkstream.outage."

// noticeRepeat is how often, in SinkProbeMax, a worker announces again
// the dependencies that stay down for it (30 s by default).
const noticeRepeat = 6

// notices runs until ctx ends: it announces the outages this worker finds,
// again every noticeRepeat × SinkProbeMax while they last, and probes a
// dependency another worker announced (doc.go, "Sink outages"). A worker
// that cannot watch the notices finds outages by its own writes alone.
func (w *Worker) notices(ctx context.Context) {
	var updates <-chan jetstream.KeyValueEntry
	if kw, err := w.top.Docs.Watch(ctx, outageKeyPrefix+">"); err != nil {
		w.log.Warn("outage notices of other workers not watched", "err", err)
	} else {
		defer kw.Stop()
		updates = kw.Updates()
	}
	repeat := time.NewTicker(noticeRepeat * w.cfg.SinkProbeMax)
	defer repeat.Stop()
	probed := map[string]time.Time{} // dependency → end of its last probe on a notice
	for {
		select {
		case <-ctx.Done():
			return
		case dep := <-w.out.found:
			w.announce(ctx, dep)
		case <-repeat.C:
			deps, _ := w.out.dependencies()
			for _, dep := range deps {
				w.announce(ctx, dep)
			}
		case e, ok := <-updates:
			if !ok {
				updates = nil
				continue
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut || string(e.Value()) == w.id {
				continue
			}
			dep := strings.TrimPrefix(e.Key(), outageKeyPrefix)
			down, _ := w.out.dependencies()
			if slices.Contains(down, dep) || time.Since(probed[dep]) < w.cfg.SinkProbeMax {
				continue
			}
			w.confirm(ctx, dep, string(e.Value()))
			probed[dep] = time.Now()
		}
	}
}

// announce puts the notice of an outage of dep.
func (w *Worker) announce(ctx context.Context, dep string) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if _, err := w.top.Docs.Put(pctx, outageKeyPrefix+dep, []byte(w.id)); err != nil && ctx.Err() == nil {
		w.log.Debug("outage notice not written", "dependency", dep, "err", err)
	}
}

// confirm probes dep once, on the notice of worker peer, and marks it
// down when it does not answer here either.
func (w *Worker) confirm(ctx context.Context, dep, peer string) {
	real, err := w.probeDependency(ctx, dep)
	if !real || ctx.Err() != nil {
		return
	}
	if err == nil {
		w.m.SinkProbes.WithLabelValues(dep, "ok").Inc()
		w.log.Debug("sink probe passed on another worker's outage notice", "dependency", dep, "worker", peer)
		return
	}
	w.m.SinkProbes.WithLabelValues(dep, "failed").Inc()
	w.out.setDown(dep, fmt.Errorf("worker: %s found down by worker %s, and here: %w", dep, peer, err), false)
}
