package natsconn

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

func startServer(t *testing.T, opts *server.Options) string {
	t.Helper()
	return jstest.Start(t, t.TempDir(), -1, func(o *server.Options) {
		o.Username, o.Password, o.Authorization = opts.Username, opts.Password, opts.Authorization
	}).ClientURL()
}

func TestOptionsAuthenticate(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		server  server.Options
		auth    Auth
		wantErr string
	}{
		{"user and password", server.Options{Username: "u", Password: "p"}, Auth{User: "u", Password: "p"}, ""},
		{"wrong password", server.Options{Username: "u", Password: "p"}, Auth{User: "u", Password: "x"}, "authorization"},
		{"token", server.Options{Authorization: "tok"}, Auth{Token: "tok"}, ""},
		{"no credentials", server.Options{Authorization: "tok"}, Auth{}, "authorization"},
		{"unreadable nkey seed", server.Options{}, Auth{NKey: filepath.Join(t.TempDir(), "missing.nk")}, "CHUNKSTREAM_NATS_NKEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := startServer(t, &tt.server)
			opts := append(Options("test", tt.auth, log), nats.MaxReconnects(0))
			nc, err := nats.Connect(url, opts...)
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
		})
	}
}
