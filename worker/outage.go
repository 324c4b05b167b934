package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/outage"
)

// DependencyNATS names the NATS server (the CHUNKS stream) in Unavailable
// errors of the subject sink.
const DependencyNATS = "nats"

// ProbeSink is implemented by sinks that mark errors with Unavailable:
// while a dependency is down the worker asks Probe, with backoff, whether
// it answers again. A probe must be cheap and write nothing. A sink that
// is not a ProbeSink counts as answering after each wait: the trial, one
// real write, is its probe.
type ProbeSink interface {
	// Probe checks dependency (a name the sink gave Unavailable) once and
	// returns nil when it answers.
	Probe(ctx context.Context, dependency string) error
}

// probeTimeout bounds one probe; the sinks' own call timeouts are usually
// shorter.
const probeTimeout = 10 * time.Second

// outageKeyPrefix starts the keys of the outage notices, in the bucket of
// document records; like the presences' keys it holds a ".", so it is
// never a record's.
const outageKeyPrefix = "chunkstream.outage."

// noticeRepeat is how often, in SinkProbeMax, a worker announces again
// the dependencies that stay down for it (30 s by default).
const noticeRepeat = 6

// newOutage returns the worker's outage machine (package outage): its
// probes, its notices in the bucket of document records, and its gauges.
func (w *Worker) newOutage(sink Sink) *outage.Machine {
	return outage.New(outage.Options{
		Logger:      w.log,
		DownMessage: "sink down: holding messages and probing until it answers",
		UpMessage:   "sink up again: resuming",
		Base:        w.cfg.SinkProbeBase, Max: w.cfg.SinkProbeMax, ProbeTimeout: probeTimeout,
		Probe: func(ctx context.Context, dep string) error {
			switch dep {
			case DependencyJetStream:
				return w.probeJetStream(ctx)
			case DependencyDefaults:
				return w.fleet.probe(ctx)
			}
			if ps, ok := sink.(ProbeSink); ok {
				return ps.Probe(ctx, dep)
			}
			return nil
		},
		Notices:     notices{w},
		NoticeEvery: noticeRepeat * w.cfg.SinkProbeMax,
		OnChange: func(dep string, down bool, since time.Time) {
			if down {
				w.m.SinkUp.WithLabelValues(dep).Set(0)
				w.m.SinkDownSince.WithLabelValues(dep).Set(float64(since.UnixNano()) / 1e9)
				return
			}
			w.m.SinkUp.WithLabelValues(dep).Set(1)
			w.m.SinkDownSince.WithLabelValues(dep).Set(0)
			if dep == DependencyJetStream {
				w.need.Store(0)
			}
		},
		OnProbe: func(dep string, err error) {
			result := "ok"
			if err != nil {
				result = "failed"
			}
			w.m.SinkProbes.WithLabelValues(dep, result).Inc()
		},
	})
}

// notices are the outage notices of the fleet: a put of the key
// outageKeyPrefix + dependency, the worker's id as the value, in the
// bucket of document records.
type notices struct{ w *Worker }

func (n notices) Announce(ctx context.Context, dep string) error {
	_, err := n.w.top.Docs.Put(ctx, outageKeyPrefix+dep, []byte(n.w.id))
	return err
}

func (n notices) Watch(ctx context.Context) (<-chan string, error) {
	kw, err := n.w.top.Docs.Watch(ctx, outageKeyPrefix+">")
	if err != nil {
		return nil, err
	}
	out := make(chan string)
	go func() {
		defer close(out)
		defer kw.Stop()
		for {
			var e jetstream.KeyValueEntry
			var ok bool
			select {
			case <-ctx.Done():
				return
			case e, ok = <-kw.Updates():
			}
			switch {
			case !ok:
				return
			case e == nil || e.Operation() != jetstream.KeyValuePut || string(e.Value()) == n.w.id:
				continue
			}
			select {
			case out <- strings.TrimPrefix(e.Key(), outageKeyPrefix):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// needRoom records that a write of about n bytes was refused for want of
// room, for the storage probe; room returns what the probe requires: the
// largest write refused in this outage, at least minRoom.
func (w *Worker) needRoom(n int64) {
	for cur := w.need.Load(); n > cur && !w.need.CompareAndSwap(cur, n); cur = w.need.Load() {
	}
}

func (w *Worker) room() int64 { return max(w.need.Load(), minRoom) }

// probeJetStream checks, with a write, that the worker can store again:
// a put of a probe key in the bucket of document records (it needs the
// stream's leader, the account's quota and the server's storage), then
// room in the dead letter stream and, with the subject sink, the chunks
// stream and the account for the largest write refused. A records bucket
// that is gone is created again. It also adopts the fleet's chunker
// defaults if a full store kept them from being read at start, or the
// bucket was created again.
func (w *Worker) probeJetStream(ctx context.Context) error {
	if _, err := w.top.Docs.Put(ctx, probeKey, []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
		stream := "KV_" + w.cfg.DocsBucket
		if _, serr := w.js.Stream(ctx, stream); errors.Is(serr, jetstream.ErrStreamNotFound) {
			if err := w.recreate(ctx, stream, "records bucket "+stream, "its records: status undercounts, and the next backfill sends those documents again"); err != nil {
				return err
			}
			w.fleet.adopted.Store(false)
		}
		return fmt.Errorf("worker: probe: write to bucket %s: %w", w.cfg.DocsBucket, err)
	}
	if !w.fleet.adopted.Load() {
		if err := w.fleet.adopt(ctx); err != nil {
			return err
		}
	}
	streams := []string{w.cfg.DLQStream}
	if w.cfg.Sink == SinkSubject {
		streams = append(streams, w.cfg.ChunksStream)
	}
	for _, name := range streams {
		s, err := w.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			if err := w.recreate(ctx, name, "stream "+name, "what it held"); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("worker: probe: stream %s: %w", name, err)
		}
		if err := streamRoom(ctx, w.js, s.CachedInfo(), w.room()); err != nil {
			return err
		}
	}
	return nil
}

// recreate sets the topology up again when a stream the worker writes
// is gone (deleted by hand, or a server that lost its state), saying so
// by name and what is lost. The worker's handles name the streams, so
// they work on the new ones; the probe that found it fails, and the next
// one finds the stream there.
func (w *Worker) recreate(ctx context.Context, stream, what, lost string) error {
	w.log.Error(what+" is gone: recreating it", "stream", stream, "lost", lost)
	if _, err := Setup(ctx, w.js, w.cfg); err != nil {
		return fmt.Errorf("worker: recreate %s: %w", what, err)
	}
	return nil
}
