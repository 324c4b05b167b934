//go:build race

package mdblocks

func init() { raceEnabled = true }
