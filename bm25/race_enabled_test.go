//go:build race

package bm25

// raceEnabled tells the tests that the race detector is on.
const raceEnabled = true
