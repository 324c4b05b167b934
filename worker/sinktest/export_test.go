package sinktest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// Failures runs every check of the suite against sinks made by newSink,
// as Run does, but records failures instead of reporting them, and
// returns the first failure of each check that failed, by check name. It
// lets the suite's own tests show that it fails broken sinks.
func Failures(t *testing.T, newSink NewSink) map[string]string {
	out := map[string]string{}
	for _, c := range checks {
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // a Fatal ends this goroutine, as it ends a test's
			defer close(done)
			c.run(newHarness(rec, t, newSink))
		}()
		<-done
		if msg, failed := rec.result(); failed {
			out[c.name] = msg
		}
	}
	return out
}

// recorder is a testing.TB that keeps a check's first failure; the rest of
// testing.TB goes to the test that runs the checks.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) { r.fail(fmt.Sprint(args...)) }

func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }

func (r *recorder) Fatal(args ...any) { r.fail(fmt.Sprint(args...)); runtime.Goexit() }

func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Fail() { r.fail("failed") }

func (r *recorder) FailNow() { r.fail("failed"); runtime.Goexit() }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failed {
		r.failed, r.msg = true, msg
	}
}

func (r *recorder) result() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msg, r.failed
}
