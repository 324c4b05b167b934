// Package outage is the one outage machine of the worker and the
// producer: which dependencies are down, when to try them again, when
// the work resumes, and what the rest of the fleet is told. Its rules are
// in docs/design.md ("Outages hold deliveries") and docs/operations.md
// ("When the sink is down").
//
// A Machine is up, or down with a set of dependencies. Work that fails as
// an outage of a dependency takes it down (Fail); new work then waits
// (Await). While it is down the machine gives turns, one per wait of
// Base·2^(n−1), at most Max, jittered: a turn is given only after every
// Probe passed, and lets one piece of real work through (the trial,
// Await with turn). The outage ends when work that started after it
// began succeeds (Succeed), so a dependency that answers probes but
// fails real work keeps the machine down, with growing waits, and the
// outage is logged once. A failure of work started before a later
// success is stale and changes nothing.
package outage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chunkstream/chunkstream/fault"
)

// Notices tell the members of a fleet of each other's outages.
type Notices interface {
	// Announce tells the fleet that dependency is down here.
	Announce(ctx context.Context, dependency string) error
	// Watch returns the dependencies other members announce; the channel
	// closes when the watch ends, and the machine watches again.
	Watch(ctx context.Context) (<-chan string, error)
}

// Options configure a Machine.
type Options struct {
	// Logger receives DownMessage once per dependency and outage and
	// UpMessage when it ends; nil discards them.
	Logger                 *slog.Logger
	DownMessage, UpMessage string
	Base, Max              time.Duration // the wait between turns
	ProbeTimeout           time.Duration // bounds one Probe (default 10 s)
	Probe                  func(ctx context.Context, dependency string) error
	GiveUpAfter            time.Duration // down this long stops the machine; 0 never, negative at the first failure
	GiveUpErr              error         // what Err wraps once it stopped
	Notices                Notices
	NoticeEvery            time.Duration // how often an outage is announced again (default 6 × Max)
	OnChange               func(dependency string, down bool, since time.Time)
	OnProbe                func(dependency string, err error)
}

// Machine is one outage machine; it is safe for concurrent use. Run gives
// the turns and handles the notices.
type Machine struct {
	o       Options
	lastOK  atomic.Int64 // UnixNano start of the latest-started success
	downAt  atomic.Int64 // UnixNano start of the latest outage
	isDown  atomic.Bool
	found   chan string          // outages found here, to announce
	mu      sync.Mutex           // guards the rest
	down    map[string]time.Time // dependency → since
	since   time.Time            // the outage's start
	turn    turns
	lastErr error
	err     error         // set once it gave up
	changed chan struct{} // closed and replaced on every change
	downCh  chan struct{} // closed while down
	epoch   epoch
	stats   Stats
}

// turns is when the next turn of an outage is due.
type turns struct {
	attempt int           // turns and failed probe rounds in this outage
	next    time.Time     // the next turn is due
	open    bool          // a turn is open
	floor   time.Duration // longest RetryAfter in this outage
}

// epoch ends at the machine's next change between up and down.
type epoch struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// Stats count a machine's outages.
type Stats struct {
	Outages int
	Down    time.Duration // finished outages, and the current one so far
	Turns   int
}

// New returns a machine that is up.
func New(o Options) *Machine {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 10 * time.Second
	}
	if o.NoticeEvery <= 0 {
		o.NoticeEvery = 6 * o.Max
	}
	if o.GiveUpErr == nil {
		o.GiveUpErr = ErrStopped
	}
	m := &Machine{o: o, found: make(chan string, 8), down: map[string]time.Time{}, changed: make(chan struct{}), downCh: make(chan struct{})}
	m.epoch.ctx, m.epoch.cancel = context.WithCancel(context.Background())
	return m
}

// Down reports whether some dependency is down.
func (m *Machine) Down() bool { return m.isDown.Load() }

// WhenDown returns a channel closed while the machine is down.
func (m *Machine) WhenDown() <-chan struct{} { m.mu.Lock(); defer m.mu.Unlock(); return m.downCh }

// Changes returns a channel closed at the machine's next change.
func (m *Machine) Changes() <-chan struct{} { m.mu.Lock(); defer m.mu.Unlock(); return m.changed }

// Began reports whether an outage began after start: work sent at start
// that still awaits its answer has presumably lost it.
func (m *Machine) Began(start time.Time) bool { return start.UnixNano() < m.downAt.Load() }

// deps returns the dependencies that are down, in name order.
func (m *Machine) deps() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.down))
}

// Err returns the error the machine gave up with, or nil.
func (m *Machine) Err() error { m.mu.Lock(); defer m.mu.Unlock(); return m.err }

// Stats returns the counts so far.
func (m *Machine) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	if len(m.down) > 0 {
		s.Down += time.Since(m.since)
	}
	return s
}

// Fail records that work started at start failed as an outage of
// dependency, and announces a new outage; see the package documentation.
func (m *Machine) Fail(dependency string, err error, start time.Time) {
	if start.UnixNano() < m.lastOK.Load() {
		return // stale: later work succeeded since
	}
	m.fail(dependency, err, start, true)
}

// Hold takes dependency down for a reason found here (it is not
// announced, and no work's start can make it stale).
func (m *Machine) Hold(dependency string, err error) { m.fail(dependency, err, time.Now(), false) }

func (m *Machine) fail(dependency string, err error, start time.Time, announce bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastErr = err
	if m.err != nil {
		return
	}
	now := time.Now()
	if d, ok := fault.RetryDelay(err); ok {
		m.turn.floor = max(m.turn.floor, d)
	}
	if len(m.down) == 0 {
		m.since, m.turn.attempt, m.turn.open = now, 1, false
		m.turn.next = now.Add(max(m.wait(1), m.turn.floor))
		m.downAt.Store(now.UnixNano())
		m.isDown.Store(true)
		m.stats.Outages++
		close(m.downCh)
		m.flip()
	} else if !start.Before(m.since) {
		// A trial (or a retry) failed: the outage goes on, tried less often.
		m.turn.open = false
		m.turn.next = now.Add(max(m.wait(m.turn.attempt), m.turn.floor))
	}
	if _, ok := m.down[dependency]; !ok {
		m.down[dependency] = now
		m.o.Logger.Warn(m.o.DownMessage, "dependency", dependency, "since", now.UTC().Format(time.RFC3339Nano), "err", err)
		if m.o.OnChange != nil {
			m.o.OnChange(dependency, true, now)
		}
		if announce && m.o.Notices != nil {
			select {
			case m.found <- dependency:
			default: // announcements pending: the fleet hears of it from them or its own work
			}
		}
	}
	if m.o.GiveUpAfter < 0 || m.o.GiveUpAfter > 0 && now.Sub(m.since) >= m.o.GiveUpAfter {
		m.giveUp(now, err)
	}
	m.broadcast()
}

// Succeed records that work started at start succeeded: it ends an
// outage that began before start.
func (m *Machine) Succeed(start time.Time) {
	for t, ok := start.UnixNano(), m.lastOK.Load(); t > ok && !m.lastOK.CompareAndSwap(ok, t); ok = m.lastOK.Load() {
	}
	if !m.isDown.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.down) > 0 && m.err == nil && !start.Before(m.since) {
		m.up(slices.Collect(maps.Keys(m.down))...)
	}
}

// Resume ends the outage when no work is there to try it with (the
// probes passed): unlike Succeed, it makes no failure stale.
func (m *Machine) Resume() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.down) > 0 && m.err == nil {
		m.up(slices.Collect(maps.Keys(m.down))...)
	}
}

// Clear ends the outage of dependency, found answering here.
func (m *Machine) Clear(dependency string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.down[dependency]; ok && m.err == nil {
		m.up(dependency)
	}
}

// up marks deps up, ending the outage with the last; called with mu held.
func (m *Machine) up(deps ...string) {
	now := time.Now()
	for _, dep := range deps {
		since := m.down[dep]
		delete(m.down, dep)
		m.o.Logger.Info(m.o.UpMessage, "dependency", dep, "since", since.UTC().Format(time.RFC3339Nano), "duration", now.Sub(since))
		if m.o.OnChange != nil {
			m.o.OnChange(dep, false, since)
		}
	}
	if len(m.down) == 0 {
		m.stats.Down += now.Sub(m.since)
		m.turn.floor, m.turn.open = 0, false
		m.isDown.Store(false)
		m.downCh = make(chan struct{})
		m.flip()
	}
	m.broadcast()
}

// GiveUp stops the machine for good with err (a connection closed).
func (m *Machine) GiveUp(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.lastErr = err
		m.giveUp(time.Now(), err)
		m.broadcast()
	}
}

// giveUp stops the machine; called with mu held.
func (m *Machine) giveUp(now time.Time, last error) {
	if len(m.down) > 0 {
		m.err = fmt.Errorf("%w (nothing succeeded for %v, the limit is %v; last error: %w)",
			m.o.GiveUpErr, now.Sub(m.since).Round(time.Millisecond), max(m.o.GiveUpAfter, 0), last)
	} else {
		m.err = fmt.Errorf("%w (%w)", m.o.GiveUpErr, last)
	}
	m.flip()
}

// Await returns when work may go: at once while up; while down, with
// turn, when it is given a turn (the trial), else when the machine is up.
// The epoch it returns ends at the machine's next change between up and
// down: work still under way then is superseded. It fails with ctx's
// error, or Err once the machine gave up.
func (m *Machine) Await(ctx context.Context, turn bool) (context.Context, error) {
	for {
		m.mu.Lock()
		switch {
		case m.err != nil:
			m.mu.Unlock()
			return nil, m.err
		case len(m.down) == 0 || turn && m.turn.open:
			if len(m.down) > 0 {
				m.turn.open = false
				m.stats.Turns++
				m.turn.attempt++
				m.turn.next = time.Now().Add(max(m.wait(m.turn.attempt), m.turn.floor))
				m.broadcast()
			}
			epoch := m.epoch.ctx
			m.mu.Unlock()
			return epoch, nil
		}
		ch := m.changed
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Run gives the turns while the machine is down (after every Probe
// passed) and handles the notices, until ctx ends.
func (m *Machine) Run(ctx context.Context) {
	if m.o.Notices != nil {
		go m.notices(ctx)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.mu.Lock()
		ch, deps, next := m.changed, slices.Sorted(maps.Keys(m.down)), m.turn.next
		idle := len(deps) == 0 || m.turn.open || m.err != nil
		m.mu.Unlock()
		if wait := time.Until(next); idle || wait > 0 {
			timer.Reset(max(wait, 0))
			if idle {
				timer.Stop()
			}
			select {
			case <-ctx.Done():
				return
			case <-ch:
			case <-timer.C:
			}
			continue
		}
		passed := true
		for _, dep := range deps {
			passed = m.probe(ctx, dep) == nil && passed
		}
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		now := time.Now()
		switch {
		case len(m.down) == 0 || m.err != nil || m.turn.next != next:
			// Changed meanwhile: look again.
		case m.o.GiveUpAfter > 0 && now.Sub(m.since) >= m.o.GiveUpAfter:
			m.giveUp(now, m.lastErr)
		case passed:
			m.turn.open = true
		default:
			m.turn.attempt++
			m.turn.next = now.Add(max(m.wait(m.turn.attempt), m.turn.floor))
		}
		m.broadcast()
		m.mu.Unlock()
	}
}

// probe asks Probe about dependency, if there is one.
func (m *Machine) probe(ctx context.Context, dependency string) error {
	if m.o.Probe == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.o.ProbeTimeout)
	defer cancel()
	err := m.o.Probe(ctx, dependency)
	if m.o.OnProbe != nil {
		m.o.OnProbe(dependency, err)
	}
	if err != nil {
		m.o.Logger.Debug("probe failed", "dependency", dependency, "err", err)
	}
	return err
}

// notices announces the outages found here, again every NoticeEvery
// while they last, and probes a dependency another member announced,
// taking it down (unannounced) when the probe fails here too. A watch
// that ends is started again.
func (m *Machine) notices(ctx context.Context) {
	var updates <-chan string
	rewatch := time.NewTimer(0)
	defer rewatch.Stop()
	repeat := time.NewTicker(m.o.NoticeEvery)
	defer repeat.Stop()
	probed := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-rewatch.C:
			var err error
			if updates, err = m.o.Notices.Watch(ctx); err != nil && ctx.Err() == nil {
				m.o.Logger.Warn("outage notices of other workers not watched: watching again soon", "err", err)
				rewatch.Reset(m.o.NoticeEvery)
			}
		case dep := <-m.found:
			m.announce(ctx, dep)
		case <-repeat.C:
			for _, dep := range m.deps() {
				m.announce(ctx, dep)
			}
		case dep, ok := <-updates:
			if !ok {
				updates = nil
				rewatch.Reset(m.o.Max)
				continue
			}
			if slices.Contains(m.deps(), dep) || time.Since(probed[dep]) < m.o.Max {
				continue
			}
			if err := m.probe(ctx, dep); err != nil && ctx.Err() == nil {
				m.Hold(dep, fmt.Errorf("announced down by another worker, and here: %w", err))
			}
			probed[dep] = time.Now()
		}
	}
}

func (m *Machine) announce(ctx context.Context, dep string) {
	ctx, cancel := context.WithTimeout(ctx, m.o.ProbeTimeout)
	defer cancel()
	if err := m.o.Notices.Announce(ctx, dep); err != nil && ctx.Err() == nil {
		m.o.Logger.Debug("outage notice not written", "dependency", dep, "err", err)
	}
}

// wait is the jittered wait before turn n: Base·2^(n−1), at most Max,
// between half and all of it.
func (m *Machine) wait(n int) time.Duration {
	d := m.o.Base
	for i := 1; i < n && d < m.o.Max; i++ {
		d *= 2
	}
	d = min(d, m.o.Max)
	return d/2 + rand.N(d/2+1)
}

// broadcast wakes every waiter; called with mu held.
func (m *Machine) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// flip ends the epoch and starts the next; called with mu held.
func (m *Machine) flip() {
	m.epoch.cancel()
	m.epoch.ctx, m.epoch.cancel = context.WithCancel(context.Background())
}

// ErrStopped is a GiveUpErr for machines that name none.
var ErrStopped = errors.New("outage: stopped")
