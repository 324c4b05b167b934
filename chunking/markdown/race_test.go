//go:build race

package markdown_test

func init() { raceEnabled = true }
