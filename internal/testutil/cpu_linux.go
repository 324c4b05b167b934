//go:build linux

package testutil

import (
	"syscall"
	"time"
)

// ThreadCPU returns the CPU time the calling OS thread has used (lock the
// goroutine to its thread first): unlike wall-clock time it does not grow
// while other processes take the machine. It is 0 where it is not
// measured (outside Linux).
func ThreadCPU() time.Duration { return rusage(1 /* RUSAGE_THREAD */) }

// ProcessCPU returns the process's user + system CPU time, 0 where it is
// not measured (outside Linux).
func ProcessCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
