package poll

import (
	"context"
	"errors"
	"testing"
)

func TestPoller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := New(ctx)
	if p.Add(Every-1) || p.Check() || p.Err() != nil {
		t.Fatal("Poller stopped before its context ended")
	}
	cancel()
	// The end is seen at the next look: after Every units, or at Check.
	if p.Add(0) {
		t.Error("Add looked before Every units of work")
	}
	if !p.Add(1) || !errors.Is(p.Err(), context.Canceled) || !p.Stopped() {
		t.Errorf("Add after Every units: stopped %v, err %v; want context.Canceled", p.Stopped(), p.Err())
	}
	p.Add(10)
	p.Check()
	if p.Work() != Every+10 || p.CallsAfterEnd() != 2 {
		t.Errorf("Work() = %d, CallsAfterEnd() = %d; want %d, 2", p.Work(), p.CallsAfterEnd(), Every+10)
	}

	q := New(ctx)
	if !q.Check() {
		t.Error("Check on an ended context = false")
	}

	// A context that never ends is never looked at; the zero Poller is one.
	for _, p := range []*Poller{New(context.Background()), new(Poller)} {
		for range 10 {
			if p.Add(Every) || p.Check() {
				t.Fatal("a Poller of a context that never ends stopped")
			}
		}
		if p.CallsAfterEnd() != 0 {
			t.Errorf("CallsAfterEnd() = %d before any end", p.CallsAfterEnd())
		}
	}
}

func TestEndAfter(t *testing.T) {
	p := EndAfter(3 * Every / 2)
	if p.Add(Every) {
		t.Fatal("stopped before the end")
	}
	if p.Check() {
		t.Fatal("Check saw an end before it came")
	}
	if p.Add(Every/2) || !p.Check() {
		t.Fatal("Check did not see the end once the work reached it")
	}
	if !errors.Is(p.Err(), context.Canceled) {
		t.Errorf("Err() = %v, want context.Canceled", p.Err())
	}
	r := EndAfter(10)
	if !r.Add(Every) {
		t.Error("Add did not see the end at its look")
	}
}
