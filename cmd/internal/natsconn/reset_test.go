package natsconn

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/jstest"
)

// resetProxy listens on a loopback port and resets the first `resets`
// connections it accepts (an RST, as from a load balancer or a server
// restarting mid-handshake); later ones are forwarded to target.
func resetProxy(t *testing.T, target string, resets int32) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted.Add(1) <= resets {
				// The server's INFO gets through, then the connection is
				// reset while the client answers it.
				if s, err := net.Dial("tcp", target); err == nil {
					line, _ := bufio.NewReader(s).ReadString('\n')
					c.Write([]byte(line))
					s.Close()
					bufio.NewReader(c).ReadString('\n') // the client's CONNECT
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
				continue
			}
			go func() {
				s, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				go func() { io.Copy(s, c); s.Close() }()
				io.Copy(c, s)
				c.Close()
			}()
		}
	}()
	return "nats://" + ln.Addr().String(), &accepted
}

// TestConnectRetriesReset: a connection reset during the handshake is an
// outage like a refused connection: Connect tries again and connects.
func TestConnectRetriesReset(t *testing.T) {
	srv := jstest.Start(t, t.TempDir(), -1)
	url, accepted := resetProxy(t, srv.Addr().String(), 2)
	cfg := DefaultConfig()
	cfg.URL = url
	cfg.ConnectTimeout = time.Minute
	rec := newRecords()
	nc, err := Connect(context.Background(), cfg, "test", slog.New(rec))
	if err != nil {
		t.Fatalf("Connect through connections reset twice = %v, want a connection on the third", err)
	}
	defer nc.Close()
	if n := accepted.Load(); n < 3 {
		t.Errorf("%d connections accepted, want the two reset and one more", n)
	}
	if !rec.logged("waiting for NATS") {
		t.Error("no \"waiting for NATS\" log while the connections were reset")
	}
}
