package clustertest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// node is one server of a cluster; its options are kept so it can be
// restarted with the same name, ports and store.
type node struct {
	opts *server.Options
	srv  *server.Server
}

// cluster is a three-node JetStream cluster of in-process servers.
type cluster struct {
	t     *testing.T
	nodes []*node
}

func serverLog() bool { return testing.Verbose() && os.Getenv("CHUNKSTREAM_TEST_SERVER_LOG") == "1" }

// newCluster starts n clustered JetStream servers and waits for a meta
// leader. A node that does not come up (a port picked free taken by
// another process before the node bound it, or a machine too busy) has
// the whole cluster started again on other ports, twice at most.
func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	for attempt := 1; ; attempt++ {
		c, err := tryCluster(t, n)
		if err == nil {
			return c
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("%v: starting the cluster again on other ports", err)
	}
}

// tryCluster is one attempt of newCluster: on error the nodes it started
// are shut down.
func tryCluster(t *testing.T, n int) (*cluster, error) {
	t.Helper()
	ports := testutil.FreePorts(t, 2*n)
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]))
	}
	c := &cluster{t: t}
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       ports[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			Cluster: server.ClusterOpts{
				Name: "chunkstream-test",
				Host: "127.0.0.1",
				Port: ports[n+i],
			},
			Routes:   server.RoutesFromStr(strings.Join(routes, ",")),
			NoLog:    !serverLog(),
			NoSigs:   true,
			HTTPPort: -1,
		}
		c.nodes = append(c.nodes, &node{opts: opts})
	}
	for _, nd := range c.nodes {
		if err := c.tryStart(nd); err != nil {
			c.shutdown()
			return nil, err
		}
	}
	t.Cleanup(c.shutdown)
	c.waitMetaReady(30 * time.Second)
	return c, nil
}

// shutdown stops every node that runs.
func (c *cluster) shutdown() {
	for _, nd := range c.nodes {
		if nd.srv != nil {
			nd.srv.Shutdown()
			nd.srv.WaitForShutdown()
		}
	}
}

// start starts nd (again, on its own ports) and fails the test when it
// does not come up.
func (c *cluster) start(nd *node) {
	c.t.Helper()
	if err := c.tryStart(nd); err != nil {
		c.t.Fatal(err)
	}
}

// tryStart starts nd and waits for it to accept connections.
func (c *cluster) tryStart(nd *node) error {
	s, err := server.NewServer(nd.opts)
	if err != nil {
		return fmt.Errorf("server %s: %w", nd.opts.ServerName, err)
	}
	if serverLog() {
		s.ConfigureLogger()
	}
	go s.Start()
	// A generous bound: a busy machine can take long to start a node.
	if !s.ReadyForConnections(time.Minute) {
		s.Shutdown()
		return fmt.Errorf("server %s not ready", nd.opts.ServerName)
	}
	nd.srv = s
	return nil
}

// urls is the comma-separated client URL list of every node.
func (c *cluster) urls() string {
	var u []string
	for _, nd := range c.nodes {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", nd.opts.Port))
	}
	return strings.Join(u, ",")
}

func (c *cluster) byName(name string) *node {
	for _, nd := range c.nodes {
		if nd.opts.ServerName == name {
			return nd
		}
	}
	c.t.Fatalf("no server named %q", name)
	return nil
}

// waitMetaReady waits until a meta leader is elected and counts every
// running node as a placement peer: online, with JetStream, and with
// statistics received. A meta leader alone is not enough: until it has
// every peer's statistics, creating an R3 stream fails with "no suitable
// peers for placement".
func (c *cluster) waitMetaReady(d time.Duration) {
	c.t.Helper()
	testutil.WaitFor(c.t, d, "the JetStream meta group", func() (bool, string) {
		running := 0
		var leader *server.Server
		for _, nd := range c.nodes {
			if nd.srv == nil || !nd.srv.Running() {
				continue
			}
			running++
			if nd.srv.JetStreamIsLeader() {
				leader = nd.srv
			}
		}
		if leader == nil {
			return false, "no meta leader"
		}
		peers := leader.JetStreamClusterPeers()
		return len(peers) >= running, fmt.Sprintf("meta leader %s sees peers %v of %d running", leader.Name(), peers, running)
	})
}

// kill shuts a node down hard (no lame duck).
func (c *cluster) kill(nd *node) {
	nd.srv.Shutdown()
	nd.srv.WaitForShutdown()
	nd.srv = nil
}

// restart starts a killed node again with its name, ports and store.
func (c *cluster) restart(nd *node) { c.start(nd) }

// connect opens a client connection to the cluster that reconnects
// forever, closed at the end of the test.
func (c *cluster) connect(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return jstest.Connect(t, c.urls(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
}

// streamCurrent reports whether a stream has a leader and every replica
// is current, with a description of its state otherwise.
func streamCurrent(ctx context.Context, js jetstream.JetStream, name string, replicas int) (bool, string) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return false, err.Error()
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, err.Error()
	}
	ci := info.Cluster
	if ci == nil || ci.Leader == "" {
		return false, "no leader"
	}
	if len(ci.Replicas)+1 != replicas {
		return false, fmt.Sprintf("leader %s with %d replicas", ci.Leader, len(ci.Replicas))
	}
	for _, r := range ci.Replicas {
		if !r.Current || r.Offline {
			return false, fmt.Sprintf("replica %s current=%v offline=%v lag=%d", r.Name, r.Current, r.Offline, r.Lag)
		}
	}
	return true, ""
}

// certs is a CA and a certificate it signed for 127.0.0.1 and localhost,
// written as PEM files.
type certs struct {
	CAFile, CertFile, KeyFile string
}

// makeCerts creates a CA and a leaf certificate (server and client use)
// in dir.
func makeCerts(t *testing.T, dir, prefix string) certs {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: prefix + " test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := certs{
		CAFile:   filepath.Join(dir, prefix+"-ca.pem"),
		CertFile: filepath.Join(dir, prefix+"-cert.pem"),
		KeyFile:  filepath.Join(dir, prefix+"-key.pem"),
	}
	write := func(path, typ string, b []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(c.CAFile, "CERTIFICATE", caDER)
	write(c.CertFile, "CERTIFICATE", der)
	write(c.KeyFile, "EC PRIVATE KEY", keyDER)
	return c
}

// secureServer starts one JetStream server that requires TLS and a
// user/password (and client certificates when verify is set); configure
// functions may replace the authentication.
func secureServer(t *testing.T, c certs, user, password string, verify bool, configure ...func(*server.Options)) *server.Server {
	t.Helper()
	tlsCfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: c.CertFile, KeyFile: c.KeyFile, CaFile: c.CAFile, Verify: verify})
	if err != nil {
		t.Fatal(err)
	}
	secure := func(o *server.Options) {
		o.ServerName = "secure"
		o.TLS, o.TLSVerify, o.TLSConfig, o.TLSTimeout = true, verify, tlsCfg, 2
		o.Username, o.Password = user, password
	}
	return jstest.Start(t, t.TempDir(), -1, append([]func(*server.Options){secure}, configure...)...)
}

// publishRetry publishes until the cluster acknowledges or ctx ends; each
// try has its own short timeout, because a try sent while a stream leader
// is being elected can wait forever for an answer.
func publishRetry(ctx context.Context, js jetstream.JetStream, subject string, data []byte, hdr nats.Header) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.PublishMsg(tctx, &nats.Msg{Subject: subject, Data: data, Header: hdr})
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("publish %s: %w (last: %v)", subject, ctx.Err(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
