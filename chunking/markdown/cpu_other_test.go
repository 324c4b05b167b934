//go:build !linux

package markdown_test

import "time"

// threadCPU is only measured on Linux; elsewhere the timing checks see no
// time at all and pass.
func threadCPU() time.Duration { return 0 }

// cpuTime is only measured on Linux.
func cpuTime() time.Duration { return 0 }
