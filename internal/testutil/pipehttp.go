package testutil

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// PipeHTTP is an HTTP server reached over in-memory connections
// (net.Pipe), for tests in a testing/synctest bubble: a request in flight
// over a loopback socket blocks outside the bubble, so fake time would
// stand still, while over a pipe it blocks inside it and a client's
// timeout passes at once in fake time. Start it inside the bubble.
type PipeHTTP struct {
	// URL is the server's base URL (its host is never resolved).
	URL string
	// Client sends requests to the server, one connection per request in
	// flight.
	Client *http.Client

	srv *http.Server
	ln  *pipeListener
}

// StartPipeHTTP serves h until the test ends (its cleanup closes the
// server and every connection, so the bubble's goroutines end).
func StartPipeHTTP(tb testing.TB, h http.Handler) *PipeHTTP {
	tb.Helper()
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	p := &PipeHTTP{URL: "http://pipe.test", srv: &http.Server{Handler: h}, ln: ln}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.dial(ctx) },
	}
	p.Client = &http.Client{Transport: tr}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = p.srv.Serve(ln)
	}()
	tb.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = p.srv.Close() // closes ln and the server's ends of the pipes
		<-served
	})
	return p
}

// pipeListener hands the server ends of the pipes dial makes to Accept.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe.test:80" }
