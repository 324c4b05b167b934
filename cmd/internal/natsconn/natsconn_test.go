package natsconn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func startServer(t *testing.T, opts *server.Options) string {
	t.Helper()
	return jstest.Start(t, t.TempDir(), -1, func(o *server.Options) {
		o.Username, o.Password, o.Authorization = opts.Username, opts.Password, opts.Authorization
	}).ClientURL()
}

// records is a slog handler that keeps the messages logged.
type records struct {
	mu   sync.Mutex
	msgs []string
	seen chan string
}

func newRecords() *records { return &records{seen: make(chan string, 100)} }

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	select {
	case r.seen <- rec.Message:
	default:
	}
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) logged(msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if m == msg {
			return true
		}
	}
	return false
}

func TestConnectAuthenticates(t *testing.T) {
	tests := []struct {
		name    string
		server  server.Options
		cfg     Config
		wantErr string
	}{
		{"user and password", server.Options{Username: "u", Password: "p"}, Config{User: "u", Password: "p"}, ""},
		{"wrong password", server.Options{Username: "u", Password: "p"}, Config{User: "u", Password: "x"}, "authorization"},
		{"token", server.Options{Authorization: "tok"}, Config{Token: "tok"}, ""},
		{"no credentials", server.Options{Authorization: "tok"}, Config{}, "authorization"},
		{"unreadable nkey seed", server.Options{}, Config{NKey: filepath.Join(t.TempDir(), "missing.nk")}, "CHUNKSTREAM_NATS_NKEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.URL = startServer(t, &tt.server)
			// A refusal is not waited for: the time-out is far beyond the
			// test's, and nothing is logged as waiting.
			cfg.ConnectTimeout = time.Hour
			rec := newRecords()
			nc, err := Connect(context.Background(), cfg, "test", slog.New(rec))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Connect = %v, want success", err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatalf("Connect succeeded, want an error containing %q", tt.wantErr)
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.wantErr)) {
				t.Errorf("Connect error = %v, want it to contain %q", err, tt.wantErr)
			}
			if rec.logged("waiting for NATS") {
				t.Errorf("Connect waited after a refusal (%v)", err)
			}
		})
	}
}

// TestConnectWaitsForServer: with no server listening, Connect keeps
// trying; a server started while it waits is connected to.
func TestConnectWaitsForServer(t *testing.T) {
	port := testutil.FreePort(t)
	cfg := DefaultConfig()
	cfg.URL = fmt.Sprintf("nats://127.0.0.1:%d", port)
	cfg.ConnectTimeout = time.Minute
	rec := newRecords()
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := Connect(context.Background(), cfg, "test", slog.New(rec))
		done <- result{nc, err}
	}()
	// The server starts only once Connect has found none.
waiting:
	for {
		select {
		case msg := <-rec.seen:
			if msg == "waiting for NATS" {
				break waiting
			}
		case r := <-done:
			t.Fatalf("Connect returned before a server started: %v", r.err)
		}
	}
	jstest.Start(t, t.TempDir(), port)
	r := <-done
	if r.err != nil {
		t.Fatalf("Connect = %v, want a connection once the server started", r.err)
	}
	defer r.nc.Close()
	if !r.nc.IsConnected() {
		t.Error("connection not connected")
	}
	if !rec.logged("nats connected") {
		t.Error("no \"nats connected\" log after waiting")
	}
}

// TestConnectGivesUp: with no server, Connect fails after ConnectTimeout
// with an error naming the URL without its password, and the variables.
func TestConnectGivesUp(t *testing.T) {
	port := testutil.FreePort(t)
	cfg := DefaultConfig()
	cfg.URL = fmt.Sprintf("nats://me:s3cret@127.0.0.1:%d", port)
	cfg.ConnectTimeout = 300 * time.Millisecond
	_, err := Connect(context.Background(), cfg, "test", nil)
	if err == nil {
		t.Fatal("Connect succeeded with no server")
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("nats://me:xxxxx@127.0.0.1:%d", port), "NATS_URL", "CHUNKSTREAM_CONNECT_TIMEOUT", "300ms"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Connect error = %q, want it to name %q", msg, want)
		}
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("Connect error shows the password: %q", msg)
	}
	if !errors.Is(err, nats.ErrNoServers) {
		t.Errorf("Connect error = %v, want it to wrap nats.ErrNoServers", err)
	}
}

// TestConnectCancelled: a cancelled context ends the wait.
func TestConnectCancelled(t *testing.T) {
	cfg := DefaultConfig()
	cfg.URL = fmt.Sprintf("nats://127.0.0.1:%d", testutil.FreePort(t))
	cfg.ConnectTimeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecords()
	go func() {
		for msg := range rec.seen {
			if msg == "waiting for NATS" {
				cancel()
				return
			}
		}
	}()
	if _, err := Connect(ctx, cfg, "test", slog.New(rec)); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect = %v, want context.Canceled", err)
	}
}

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://u:p@a:1,nats://b:2", "nats://u:xxxxx@a:1,nats://b:2"},
		{"nats://tok3n@a:1", "nats://xxxxx@a:1"},
		{"tls://u:p@a:1, nats://c:3", "tls://u:xxxxx@a:1,nats://c:3"},
		{"127.0.0.1:4222", "127.0.0.1:4222"},
		{"u:p@a:1", "u:xxxxx@a:1"},
		{"tok@a:1", "xxxxx@a:1"},
	} {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBindFlags(t *testing.T) {
	c := DefaultConfig()
	c.User = "from-env"
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	BindFlags(fs, &c)
	for _, name := range []string{"nats-url", "nats-user", "nats-creds", "nats-nkey", "nats-tls-cert", "nats-tls-key", "nats-tls-ca", "connect-timeout"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no flag -%s", name)
		}
	}
	for _, name := range []string{"nats-password", "nats-token"} {
		if fs.Lookup(name) != nil {
			t.Errorf("secret flag -%s defined; secrets are environment only", name)
		}
	}
	if err := fs.Parse([]string{"-connect-timeout", "5s", "-nats-url", "nats://x:1"}); err != nil {
		t.Fatal(err)
	}
	if c.ConnectTimeout != 5*time.Second || c.URL != "nats://x:1" || c.User != "from-env" {
		t.Errorf("after flags: %+v", c)
	}
}

func TestValidateNamesVariable(t *testing.T) {
	for _, tt := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.URL = " " }, "NATS_URL"},
		{func(c *Config) { c.TLSCert = "c.pem" }, "CHUNKSTREAM_NATS_TLS_CERT"},
		{func(c *Config) { c.ConnectTimeout = 0 }, "CHUNKSTREAM_CONNECT_TIMEOUT"},
	} {
		c := DefaultConfig()
		tt.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}
