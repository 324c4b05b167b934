package testutil

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for
// a server that must listen on a known port (one restarted on the same
// address, say). Prefer port 0 (or -1 for the NATS helpers) where the
// server can pick its own.
func FreePort(tb testing.TB) int {
	tb.Helper()
	return FreePorts(tb, 1)[0]
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago: all n are held open together while they are picked, so they
// differ.
func FreePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatalf("testutil: picking a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// SyncBuffer is a bytes.Buffer that a process or goroutine may write while
// the test reads it. The zero value is ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
