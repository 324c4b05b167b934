//go:build race

package code_test

// raceEnabled reports a -race build, where the tests over real trees read less.
const raceEnabled = true
