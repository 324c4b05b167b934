package worker

import (
	"errors"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
)

// TestDecide: decide is the table of docs/design.md ("Delivery
// semantics"), row by row in its order: each row's cells are the page's
// (the test reads them from it), and each row's examples, which match
// no row above it, get the row's action.
func TestDecide(t *testing.T) {
	errX := errors.New("x")
	transient := fault.WithCause(fault.CauseSink, errX)
	perm := permanent(fault.CauseNoContent, errX)
	pastLimit := fault.WithCause(fault.CauseMaxDeliveries, errX)
	const max = 8
	d := func(n uint64, tries int, stopping bool) delivery {
		return delivery{n: n, max: max, tries: tries, stopping: stopping}
	}
	dep := down{dep: "qdrant"}
	full := down{dep: DependencyJetStream, noRoom: true}
	js := down{dep: DependencyJetStream}
	type example struct {
		v verdict
		d delivery
		o down
	}
	rows := []struct {
		cells    string // the page's row: verdict | delivery | outage | action
		examples []example
		want     action // an ack's outcome is its verdict's, a hold's outage its example's, the cause the verdict's unless set
	}{
		{"written, superseded or a duplicate | any | — | ack",
			[]example{{verdict{outcome: OutcomeAcked}, d(1, 0, false), down{}}, {verdict{outcome: OutcomeDuplicate}, d(9, 3, true), dep}},
			action{verb: ack}},
		{"failed, its dead letter not stored | not stopping | JetStream down or full | hold",
			[]example{{verdict{err: perm, deadLetter: errX}, d(1, 0, false), js}, {verdict{err: transient, deadLetter: errX}, d(8, 8, false), full}},
			action{verb: hold, outcome: OutcomePaused}},
		{"failed, its dead letter not stored | any | any | NAK with backoff",
			[]example{{verdict{err: perm, deadLetter: errX}, d(8, 0, false), down{}}, {verdict{err: perm, deadLetter: errX}, d(1, 0, true), js}},
			action{verb: retry, outcome: OutcomeRetried}},
		{"failed, not permanent | stopping | any | NAK at once",
			[]example{{verdict{err: transient}, d(1, 0, true), down{}}, {verdict{err: transient}, d(8, 0, true), dep}},
			action{verb: abandon, outcome: OutcomeAbandoned, cause: fault.CauseShutdown}},
		{"failed, permanent | any | any | dead letter `permanent`",
			[]example{{verdict{err: perm}, d(1, 0, false), down{}}, {verdict{err: perm}, d(3, 0, true), dep}},
			action{verb: deadLetter, outcome: OutcomePermanent, kind: messages.KindPermanent}},
		{"failed | held through fewer than `MAX_DELIVER` outages | a dependency down | hold",
			[]example{{verdict{err: transient}, d(1, 0, false), dep}, {verdict{err: transient}, d(8, max-1, false), dep}},
			action{verb: hold, outcome: OutcomePaused}},
		{"failed | any | JetStream without room | hold",
			[]example{{verdict{err: transient}, d(8, max+5, false), full}},
			action{verb: hold, outcome: OutcomePaused}},
		{"not processed: not done after its last delivery | n > `MAX_DELIVER` | none | dead letter `exhausted`, cause `max_deliveries`",
			[]example{{verdict{err: pastLimit}, d(max+1, 0, false), down{}}},
			action{verb: deadLetter, outcome: OutcomeExhausted, kind: messages.KindExhausted}},
		{"failed | n < `MAX_DELIVER` | none, or held through `MAX_DELIVER` outages | NAK with backoff",
			[]example{{verdict{err: transient}, d(1, 0, false), down{}}, {verdict{err: transient}, d(max-1, max, false), dep}},
			action{verb: retry, outcome: OutcomeRetried}},
		{"failed | n ≥ `MAX_DELIVER` | none, or held through `MAX_DELIVER` outages | dead letter `exhausted`",
			[]example{{verdict{err: transient}, d(max, 0, false), down{}}, {verdict{err: transient}, d(max+2, max, false), dep}},
			action{verb: deadLetter, outcome: OutcomeExhausted, kind: messages.KindExhausted}},
	}

	section, ok := testutil.DocSection(t, "docs/design.md", "Delivery semantics")
	if !ok {
		t.Fatal(`docs/design.md has no section "Delivery semantics"`)
	}
	var page []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| verdict") || strings.HasPrefix(line, "| ---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "| "), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		page = append(page, strings.Join(cells, " | "))
	}
	if len(page) != len(rows) {
		t.Errorf("the page's table has %d rows, decide's %d", len(page), len(rows))
	}
	for i, r := range rows {
		if i < len(page) && !strings.HasPrefix(page[i], r.cells) {
			t.Errorf("row %d: the page says\n\t%s\nthe test\n\t%s", i+1, page[i], r.cells)
		}
		for j, e := range r.examples {
			want := r.want
			switch want.verb {
			case ack:
				want.outcome = e.v.outcome
			case hold:
				want.down = e.o
			}
			if want.cause == "" {
				want.cause, _ = fault.CauseOf(e.v.err)
			}
			if got := decide(e.v, e.d, e.o); got != want {
				t.Errorf("row %d (%s), example %d: decide = %+v, want %+v", i+1, r.cells, j+1, got, want)
			}
		}
	}
}
