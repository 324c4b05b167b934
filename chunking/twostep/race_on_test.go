//go:build race

package twostep

// raceEnabled is true under the race detector, whose overhead makes
// timing assertions meaningless.
const raceEnabled = true
