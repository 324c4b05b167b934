// Package jstest starts in-process NATS servers with JetStream for the
// module's tests: real servers with file storage, never mocks.
package jstest

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Start starts a JetStream server on 127.0.0.1:port (-1 picks a free port)
// storing in dir, after applying modify to its options, and waits until it
// accepts connections. It is shut down when the test ends (Shutdown is
// idempotent, so a test may stop it earlier and restart another on the
// same dir). CHUNKSTREAM_TEST_SERVER_LOG=1 turns the server's log on.
func Start(tb testing.TB, dir string, port int, modify ...func(*server.Options)) *server.Server {
	tb.Helper()
	logs := os.Getenv("CHUNKSTREAM_TEST_SERVER_LOG") != ""
	opts := &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: !logs, NoSigs: true}
	for _, m := range modify {
		m(opts)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	if logs {
		ns.ConfigureLogger()
	}
	go ns.Start()
	if !ns.ReadyForConnections(20 * time.Second) {
		tb.Fatal("nats-server not ready")
	}
	tb.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// Connect connects to url with opts and returns the connection and its
// JetStream context; the connection is closed when the test ends.
func Connect(tb testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return nc, js
}

// apiWritePrefixes are the subjects of the JetStream API requests that
// create or change a stream or a consumer.
var apiWritePrefixes = []string{"$JS.API.STREAM.CREATE.", "$JS.API.STREAM.UPDATE.", "$JS.API.CONSUMER.CREATE.", "$JS.API.CONSUMER.DURABLE.CREATE."}

// WatchAPIWrites subscribes nc to the JetStream API subjects and returns a
// function that returns, by subject, the requests to create or change a
// stream or a consumer seen since its previous call. Every request sent on
// nc before the call is among them, with no waiting: the server copies a
// request to the subscription while it reads it, before the request is
// answered, and answers the call's flush of nc after the copies it queued
// before. Requests sent on other connections may arrive later.
func WatchAPIWrites(tb testing.TB, nc *nats.Conn) func() []string {
	tb.Helper()
	sub, err := nc.SubscribeSync("$JS.API.>")
	if err != nil {
		tb.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return func() []string {
		tb.Helper()
		if err := nc.Flush(); err != nil {
			tb.Fatal(err)
		}
		var got []string
		for {
			n, _, err := sub.Pending()
			if err != nil {
				tb.Fatal(err)
			}
			if n == 0 {
				return got
			}
			m, err := sub.NextMsg(time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			if slices.ContainsFunc(apiWritePrefixes, func(p string) bool { return strings.HasPrefix(m.Subject, p) }) {
				got = append(got, m.Subject)
			}
		}
	}
}
