package testutil

import (
	"testing"
	"time"
)

// Condition is what WaitFor polls: a func() bool, or a
// func() (bool, string) that also describes the state it saw, which the
// failure message quotes.
type Condition interface {
	func() bool | func() (bool, string)
}

// Polling intervals of WaitFor: the first poll comes quickly, later ones
// back off so that a long wait does not load the servers it asks.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// WaitFor polls cond until it holds, and fails the test, naming what it
// waited for (and the last state cond described), when timeout passes
// first. cond runs on the test's goroutine, so it may call tb.Fatal.
func WaitFor[C Condition](tb testing.TB, timeout time.Duration, what string, cond C) {
	tb.Helper()
	var check func() (bool, string)
	switch c := any(cond).(type) {
	case func() bool:
		check = func() (bool, string) { return c(), "" }
	case func() (bool, string):
		check = c
	}
	deadline := time.Now().Add(timeout)
	poll := firstPoll
	for {
		ok, state := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				tb.Fatalf("timed out after %v waiting for %s (last: %s)", timeout, what, state)
			}
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(poll)
		poll = min(2*poll, maxPoll)
	}
}
