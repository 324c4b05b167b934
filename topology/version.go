package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// MinServerVersion is the oldest nats-server chunkstream runs on: the
// first with atomic batches that de-duplicate by Nats-Msg-Id and commit
// without a final message, and with fast-ingest batches.
const MinServerVersion = "2.14.0"

// ErrServerVersion means the server cannot store what chunkstream needs:
// it is older than MinServerVersion, or a stream does not keep a setting
// such a server has. The error names the version required and the
// server's.
var ErrServerVersion = errors.New("topology: nats-server " + MinServerVersion + " or later is required (atomic batches on CHUNKS)")

// CheckServer refuses a connection to a server older than
// MinServerVersion; nothing is silently run without atomic batches. A
// connection not connected at the moment passes: Ensure also checks that
// CHUNKS keeps allow_atomic, which no older server does.
func CheckServer(nc *nats.Conn) error {
	return errorForVersion(nc.ConnectedServerVersion())
}

// errorForVersion is CheckServer's verdict on a server of version v.
func errorForVersion(v string) error {
	if v != "" && !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("%w: the server is %s", ErrServerVersion, v)
	}
	return nil
}

// versionAtLeast reports whether the version v ("2.14.1", "v2.15.0-beta")
// is at least min, comparing major, minor and patch numbers; an
// unreadable version is not.
func versionAtLeast(v, min string) bool {
	a, okA := parseVersion(v)
	b, _ := parseVersion(min)
	if !okA {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return out, false
	}
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
