//go:build race

package producer

// raceEnabled: the race detector slows the worker ~10x; big tests shrink.
const raceEnabled = true
