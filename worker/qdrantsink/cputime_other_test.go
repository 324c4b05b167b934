//go:build !linux

package qdrantsink

import "time"

// threadCPU falls back to wall time.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
