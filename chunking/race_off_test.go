//go:build !race

package chunking

// raceEnabled reports a -race build, where tests over the corpus sample less.
const raceEnabled = false
