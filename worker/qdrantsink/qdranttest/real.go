package qdranttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
)

// EnvURL is the variable that names a real Qdrant for the tests that can
// run against one ("http://host:6334", "https://host:6334" or
// "host:6334": the gRPC port); EnvAPIKey is its API key, if any.
const (
	EnvURL    = "CHUNKSTREAM_TEST_QDRANT_URL"
	EnvAPIKey = "CHUNKSTREAM_TEST_QDRANT_API_KEY"
)

// Remote is a real Qdrant reached through EnvURL.
type Remote struct {
	// Addr is its gRPC "host:port"; TLS is true for an https URL.
	Addr   string
	TLS    bool
	APIKey string
}

// Real returns the Qdrant EnvURL names, or skips the test saying that it
// runs against a real Qdrant only when the variable is set.
func Real(tb testing.TB) Remote {
	tb.Helper()
	raw := os.Getenv(EnvURL)
	if raw == "" {
		tb.Skipf("%s is not set: this test runs against a real Qdrant only (the double's tests cover the same behaviour)", EnvURL)
	}
	r := Remote{Addr: raw, APIKey: os.Getenv(EnvAPIKey)}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		r.Addr, r.TLS = u.Host, u.Scheme == "https"
	}
	if _, _, err := net.SplitHostPort(r.Addr); err != nil {
		tb.Fatalf("%s=%q: want host:port of Qdrant's gRPC API: %v", EnvURL, raw, err)
	}
	return r
}

// Client returns a go-client of the remote Qdrant, closed when the test
// ends.
func (r Remote) Client(tb testing.TB) *qdrant.Client {
	tb.Helper()
	host, port, _ := net.SplitHostPort(r.Addr)
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, APIKey: r.APIKey, UseTLS: r.TLS, SkipCompatibilityCheck: true})
	if err != nil {
		tb.Fatalf("qdranttest: client of %s: %v", r.Addr, err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Collection returns the name of a collection no other test uses, and
// deletes the collection when the test ends.
func (r Remote) Collection(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "chunkstream_test_" + strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name()))
	if len(name) > 80 {
		name = name[:80]
	}
	name += "_" + hex.EncodeToString(b)
	c := r.Client(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.DeleteCollection(ctx, name)
	})
	return name
}
