//go:build race

package html_test

// raceEnabled is true under the race detector, whose overhead makes the
// benchmarks' figures meaningless.
const raceEnabled = true
