package testutil

import (
	"fmt"
	"strings"
	"testing"
)

func TestOptIn(t *testing.T) {
	for _, tc := range []struct {
		env   map[string]string
		names []string
		skip  string // "" when the test runs
	}{
		{nil, []string{Processes}, "opt-in: set CHUNKSTREAM_TEST_PROCESSES=1 to run this test"},
		{map[string]string{Processes: "0"}, []string{Processes}, "opt-in: set CHUNKSTREAM_TEST_PROCESSES=1 to run this test"},
		{map[string]string{Processes: "1"}, []string{Processes}, ""},
		{map[string]string{Processes: "1"}, []string{Processes, JaegerBin},
			"opt-in: set CHUNKSTREAM_TEST_JAEGER_BIN=<path of a jaeger binary> to run this test"},
		{nil, []string{Processes, JaegerBin},
			"opt-in: set CHUNKSTREAM_TEST_PROCESSES=1 and CHUNKSTREAM_TEST_JAEGER_BIN=<path of a jaeger binary> to run this test"},
		{map[string]string{Processes: "1", JaegerBin: "/opt/jaeger"}, []string{Processes, JaegerBin}, ""},
	} {
		for _, v := range OptIns() {
			t.Setenv(v.Name, tc.env[v.Name])
		}
		r := &recorder{TB: t}
		func() {
			defer func() { _ = recover() }() // Skipf ends the recorder's "test"
			OptIn(r, tc.names...)
		}()
		if r.skip != tc.skip || r.fatal != "" {
			t.Errorf("OptIn(%v) with %v: skipped %q (fatal %q), want skipped %q", tc.names, tc.env, r.skip, r.fatal, tc.skip)
		}
	}
	r := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		OptIn(r, "CHUNKSTREAM_TEST_NO_SUCH")
	}()
	if r.fatal == "" {
		t.Error("OptIn of a variable that is not an opt-in did not fail the test")
	}
}

// recorder is a testing.TB whose Skipf and Fatalf record their message
// and end the call (as the real ones end the test).
type recorder struct {
	testing.TB
	skip, fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = strings.TrimSpace(fmt.Sprintf(format, args...))
	panic(r)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(r)
}
