//go:build linux

package qdrantsink

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (lock it first):
// on a loaded machine it measures the work, not the waiting.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
