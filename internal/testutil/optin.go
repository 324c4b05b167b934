package testutil

import (
	"os"
	"strings"
	"testing"
)

// OptInVar is an environment variable that turns on tests that do not run
// by default: they take long, build the module's commands or need a tool
// or service that go test cannot provide.
type OptInVar struct {
	// Name is the variable.
	Name string
	// Set is how to set it, as the skip line shows it: "1", or what the
	// value names.
	Set string
}

// The opt-in variables; OptIn accepts these only. README.md and
// docs/development.md name each one (TestOptInsDocumented), and .ci/run
// sets every one it can.
const (
	// Processes runs the tests that build the module's commands and
	// nats-server and run them as processes: kills, restarts, clusters,
	// TLS and the Compose and Kubernetes configurations.
	Processes = "CHUNKSTREAM_TEST_PROCESSES"
	// Outages runs the long outage and resource scenarios with real
	// processes (minutes each), with Processes.
	Outages = "CHUNKSTREAM_TEST_OUTAGES"
	// Full runs the long forms: every file of the optional corpus instead
	// of a sample, and the exhaustive comparisons with the JavaScript
	// oracles.
	Full = "CHUNKSTREAM_TEST_FULL"
	// JaegerBin names a jaeger binary for the tests that read traces back
	// from a real Jaeger.
	JaegerBin = "CHUNKSTREAM_TEST_JAEGER_BIN"
	// QdrantURL names a real Qdrant's gRPC address for the tests that
	// compare the double with it.
	QdrantURL = "CHUNKSTREAM_TEST_QDRANT_URL"
)

// OptIns returns the opt-in variables, in the order the docs list them.
func OptIns() []OptInVar {
	return []OptInVar{
		{Processes, "1"},
		{Outages, "1"},
		{Full, "1"},
		{JaegerBin, "path of a jaeger binary"},
		{QdrantURL, "a real Qdrant's gRPC address"},
	}
}

// OptIn skips the test unless every variable of names is set (a flag to
// "1", a path or address to anything but ""), with one line naming what
// to set. names must be OptIns; an unknown one fails the test.
func OptIn(tb testing.TB, names ...string) {
	tb.Helper()
	var missing []string
	for _, name := range names {
		v, ok := optIn(name)
		if !ok {
			tb.Fatalf("testutil: %s is not an opt-in variable (testutil.OptIns)", name)
		}
		if !Enabled(name) {
			missing = append(missing, name+"="+quoteSet(v.Set))
		}
	}
	if len(missing) > 0 {
		tb.Skipf("opt-in: set %s to run this test", strings.Join(missing, " and "))
	}
}

// Enabled reports whether the opt-in variable name is set, for a test
// that runs a shorter form when it is not (a sample of the corpus): a
// flag to "1", a path or address to anything but "".
func Enabled(name string) bool {
	v, ok := optIn(name)
	if !ok {
		return false
	}
	if v.Set == "1" {
		return os.Getenv(name) == "1"
	}
	return os.Getenv(name) != ""
}

func optIn(name string) (OptInVar, bool) {
	for _, v := range OptIns() {
		if v.Name == name {
			return v, true
		}
	}
	return OptInVar{}, false
}

// quoteSet writes a value the skip line describes in words as <words>.
func quoteSet(set string) string {
	if set == "1" {
		return set
	}
	return "<" + set + ">"
}
