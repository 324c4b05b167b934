package worker

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
)

// DependencyNATS names the NATS server (the CHUNKS stream) in Unavailable
// errors of the subject sink.
const DependencyNATS = "nats"

// ProbeSink is implemented by sinks that mark errors with Unavailable:
// while a dependency is down the worker asks Probe, with backoff, whether
// it answers again. A probe must be cheap and write nothing.
type ProbeSink interface {
	// Probe checks dependency (a name the sink gave Unavailable) once and
	// returns nil when it answers.
	Probe(ctx context.Context, dependency string) error
}

// probeTimeout bounds one probe; the sinks' own call timeouts are usually
// shorter.
const probeTimeout = 10 * time.Second

// task is one delivery in the worker's hands.
type task struct {
	msg       jetstream.Msg
	tries     int       // the outages it met during this delivery
	fetchedAt time.Time // when pull received it
}

// outageState tracks which dependencies of the sink are down. The worker
// fetches nothing while any is down; Ready reports false.
type outageState struct {
	log *slog.Logger
	m   *Metrics

	mu      sync.Mutex
	down    map[string]time.Time // dependency → start of its outage
	floor   time.Duration        // longest RetryAfter seen in this outage
	need    int64                // largest write refused for want of room in this outage, in bytes (estimated)
	upCh    chan struct{}        // closed while no dependency is down
	downCh  chan struct{}        // closed while some dependency is down
	success atomic.Bool          // a delivery succeeded since the last probe round
	found   chan string          // dependencies whose outage this worker found itself, to announce (notice.go)
}

func newOutageState(log *slog.Logger, m *Metrics) *outageState {
	o := &outageState{log: log, m: m, down: map[string]time.Time{}, upCh: make(chan struct{}), downCh: make(chan struct{}),
		found: make(chan string, 8)}
	close(o.upCh)
	return o
}

// isDown reports whether some dependency is down.
func (o *outageState) isDown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.down) > 0
}

// whenUp returns a channel closed once no dependency is down.
func (o *outageState) whenUp() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.upCh
}

// whenDown returns a channel closed once some dependency is down.
func (o *outageState) whenDown() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.downCh
}

// markDown records that dependency did not answer; the first report of an
// outage logs, sets the gauges and has the outage announced (notice.go).
func (o *outageState) markDown(dependency string, err error) { o.setDown(dependency, err, true) }

// setDown is markDown, without the announcement for an outage another
// worker announced.
func (o *outageState) setDown(dependency string, err error, announce bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d, ok := fault.RetryDelay(err); ok && d > o.floor {
		o.floor = d
	}
	if _, ok := o.down[dependency]; ok {
		return
	}
	now := time.Now()
	if len(o.down) == 0 {
		o.upCh = make(chan struct{})
		close(o.downCh)
	}
	o.down[dependency] = now
	o.m.SinkUp.WithLabelValues(dependency).Set(0)
	o.m.SinkDownSince.WithLabelValues(dependency).Set(float64(now.UnixNano()) / 1e9)
	o.log.Warn("sink down: holding messages and probing until it answers", "dependency", dependency,
		"since", now.UTC().Format(time.RFC3339Nano), "err", err)
	if announce {
		select {
		case o.found <- dependency:
		default: // announcements pending already; the fleet hears of this outage from them or its own writes
		}
	}
}

// markUp records that dependency answers again; it logs one line with the
// outage's duration.
func (o *outageState) markUp(dependency string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	since, ok := o.down[dependency]
	if !ok {
		return
	}
	delete(o.down, dependency)
	o.m.SinkUp.WithLabelValues(dependency).Set(1)
	o.m.SinkDownSince.WithLabelValues(dependency).Set(0)
	o.log.Info("sink up again: resuming", "dependency", dependency,
		"since", since.UTC().Format(time.RFC3339Nano), "duration", time.Since(since))
	if len(o.down) == 0 {
		o.floor, o.need = 0, 0
		o.downCh = make(chan struct{})
		close(o.upCh)
	}
}

// needRoom records that a write of about n bytes was refused for want of
// room, for the storage probe (room).
func (o *outageState) needRoom(n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.need = max(o.need, n)
}

// room returns the room the storage probe requires: the largest write
// refused in this outage, at least minRoom.
func (o *outageState) room() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return max(o.need, minRoom)
}

// dependencies returns the dependencies that are down, in name order, and
// the shortest wait before the first probe.
func (o *outageState) dependencies() ([]string, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.down)), o.floor
}

// probe runs until ctx ends: whenever a dependency is down it probes every
// dependency that is down, with backoff, and marks up those that answer;
// when the backoff restarts is doc.go's ("Sink outages").
func (w *Worker) probe(ctx context.Context) {
	attempt := uint64(0)
	probed := false    // the last outage ended by passing probes
	restarted := false // the backoff restarted after such an outage, and no delivery succeeded since
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.out.whenDown():
		}
		switch {
		case w.out.success.Swap(false):
			attempt, restarted = 0, false
		case probed && !restarted:
			attempt, restarted = 0, true
		}
		probed = false
		attempt++
		deps, floor := w.out.dependencies()
		delay := max(w.probeBackoff.Delay(attempt, nil), floor)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		all := true // every dependency had a real probe
		for _, dep := range deps {
			real, err := w.probeDependency(ctx, dep)
			all = all && real
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.m.SinkProbes.WithLabelValues(dep, "failed").Inc()
				w.log.Debug("sink probe failed", "dependency", dep, "attempt", attempt, "err", err)
				continue
			}
			w.m.SinkProbes.WithLabelValues(dep, "ok").Inc()
			w.out.markUp(dep)
		}
		probed = all && !w.out.isDown()
	}
}

// probeDependency probes dep once, within probeTimeout; real is false
// when the sink is not a ProbeSink (nothing asked counts as answering).
func (w *Worker) probeDependency(ctx context.Context, dep string) (real bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	switch dep {
	case DependencyJetStream:
		return true, w.probeJetStream(ctx)
	case DependencyDefaults:
		return true, w.probeDefaults(ctx)
	}
	if ps, ok := w.rawSink.(ProbeSink); ok {
		return true, ps.Probe(ctx, dep)
	}
	return false, nil
}

// hold keeps a delivery during an outage, with an in-progress ack now and
// every AckWait/3 (holdHeartbeat); while the worker drains it NAKs it
// instead. It reports whether it kept the delivery.
func (w *Worker) hold(t *task) bool {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	if w.draining {
		w.nak(t)
		return false
	}
	if err := t.msg.InProgress(); err != nil {
		w.log.Warn("in-progress ack failed", "subject", t.msg.Subject(), "err", err)
	}
	w.held = append(w.held, t)
	w.m.Held.Set(float64(len(w.held)))
	return true
}

// nak hands t back to the server at once, for another worker.
func (w *Worker) nak(t *task) {
	if err := t.msg.Nak(); err != nil {
		w.log.Warn("nak failed", "subject", t.msg.Subject(), "err", err)
	}
}

// takeHeld returns the held deliveries, oldest first, and forgets them;
// with wait it records them all as waiting for a processor (fetched), so
// they keep their in-progress acks meanwhile.
func (w *Worker) takeHeld(wait bool) []*task {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	out := w.held
	w.held = nil
	w.m.Held.Set(0)
	if wait {
		for _, t := range out {
			w.waiting[t] = struct{}{}
		}
	}
	return out
}

// releaseHeld starts the drain: from now on hold NAKs, and what is held is
// NAKed (without delay) for another worker.
func (w *Worker) releaseHeld() {
	w.heldMu.Lock()
	w.draining = true
	w.heldMu.Unlock()
	for _, t := range w.takeHeld(false) {
		w.nak(t)
	}
}

// fetched records that t waits for a processor; taken that it no longer
// does (a processor took it, or it was held or NAKed).
func (w *Worker) fetched(t *task) {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	w.waiting[t] = struct{}{}
}

func (w *Worker) taken(t *task) {
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	delete(w.waiting, t)
}

// holdHeartbeat sends in-progress acks every AckWait/3, until ctx ends,
// for the held deliveries and for those waiting for a processor
// (doc.go, "Pulling").
func (w *Worker) holdHeartbeat(ctx context.Context) {
	tick := time.NewTicker(w.cfg.AckWait / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.heldMu.Lock()
		held := append([]*task(nil), w.held...)
		for t := range w.waiting {
			held = append(held, t)
		}
		w.heldMu.Unlock()
		for _, t := range held {
			if err := t.msg.InProgress(); err != nil {
				w.log.Warn("in-progress ack failed", "subject", t.msg.Subject(), "err", err)
			}
		}
	}
}
