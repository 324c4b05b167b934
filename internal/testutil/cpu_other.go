//go:build !linux

package testutil

import "time"

// ThreadCPU is only measured on Linux; elsewhere it is 0, so timing checks
// see no time at all and pass.
func ThreadCPU() time.Duration { return 0 }

// ProcessCPU is only measured on Linux; elsewhere it is 0.
func ProcessCPU() time.Duration { return 0 }
