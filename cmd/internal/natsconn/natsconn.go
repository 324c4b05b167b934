// Package natsconn is the one home of the NATS connection settings of the
// worker and the producer: one struct with the variables both commands
// read (Config), one way of binding its flags (BindFlags), and one way of
// connecting (Connect), so both commands authenticate, wait for the
// server at start, reconnect and log connection events the same way.
//
// Decisions:
//
//   - Connect waits for NATS at start: while no server answers (connection
//     refused, a dial time-out, a name that does not resolve yet, as when
//     the server's pod starts after the worker's) it tries again, 250 ms
//     doubling to 2 s with jitter, for up to ConnectTimeout; then it fails
//     with an error naming the URL (credentials hidden) and the variables
//     to check. It says so at once, and how long it will go on waiting
//     every 5 s. A connection reset during the handshake is waited for
//     too: a server restarting or a proxy with no server behind it resets,
//     where a refusing server closes. A server that answers and refuses
//     (authorization, TLS, a connection closed in the handshake) is not
//     waited for: the error is returned at once.
//   - Once connected, reconnects are endless (every 250 ms): a running
//     worker rides out a server restart.
//   - The password and the token are environment variables only (flags
//     show in process lists) and are never logged.
package natsconn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// Config holds the NATS connection settings. The env tags name the
// variables and the help tags say what each is; BindFlags defines the
// flags of all but the secrets.
type Config struct {
	URL            string        `env:"NATS_URL" envDefault:"nats://127.0.0.1:4222" help:"NATS server URL(s), comma-separated"`
	User           string        `env:"CHUNKSTREAM_NATS_USER" help:"NATS user name"`
	Password       string        `env:"CHUNKSTREAM_NATS_PASSWORD" help:"NATS password (environment only)"`
	Token          string        `env:"CHUNKSTREAM_NATS_TOKEN" help:"NATS token (environment only)"`
	Creds          string        `env:"CHUNKSTREAM_NATS_CREDS" help:"NATS credentials file (JWT and NKey seed)"`
	NKey           string        `env:"CHUNKSTREAM_NATS_NKEY" help:"NATS NKey seed file"`
	TLSCert        string        `env:"CHUNKSTREAM_NATS_TLS_CERT" help:"TLS client certificate file"`
	TLSKey         string        `env:"CHUNKSTREAM_NATS_TLS_KEY" help:"TLS client key file"`
	TLSCA          string        `env:"CHUNKSTREAM_NATS_TLS_CA" help:"CA bundle that verifies the NATS server"`
	ConnectTimeout time.Duration `env:"CHUNKSTREAM_CONNECT_TIMEOUT" envDefault:"30s" help:"longest wait at start for a NATS server to answer"`
}

// DefaultConfig returns the settings with every default applied, as the
// env defaults give them.
func DefaultConfig() Config {
	return Config{URL: "nats://127.0.0.1:4222", ConnectTimeout: 30 * time.Second}
}

// BindFlags defines the flags of c's settings (-nats-url, -nats-user, …,
// -connect-timeout), each defaulting to the value c holds, so a flag
// beats its variable; the password and the token get none.
func BindFlags(fs *flag.FlagSet, c *Config) {
	envflag.Bind(fs, c, func(v string) bool { return v != "CHUNKSTREAM_NATS_PASSWORD" && v != "CHUNKSTREAM_NATS_TOKEN" })
}

// Validate reports every bad setting, each naming its variable.
func (c *Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.URL) == "" {
		errs = append(errs, errors.New("natsconn: config NATS_URL: empty"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("natsconn: config CHUNKSTREAM_NATS_TLS_CERT: certificate and key (CHUNKSTREAM_NATS_TLS_KEY) go together"))
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, fmt.Errorf("natsconn: config CHUNKSTREAM_CONNECT_TIMEOUT: %v, want a positive duration", c.ConnectTimeout))
	}
	return errors.Join(errs...)
}

// options returns the connection options of a chunkstream client called
// name (see Connect). An unreadable NKey seed makes the connection fail
// with an error naming CHUNKSTREAM_NATS_NKEY.
func options(name string, c Config, log *slog.Logger) []nats.Option {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil on a clean close
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "server", nc.ConnectedUrlRedacted())
		}),
	}
	if c.User != "" {
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		opts = append(opts, nats.Token(c.Token))
	}
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		if o, err := nats.NkeyOptionFromSeed(c.NKey); err == nil {
			opts = append(opts, o)
		} else {
			opts = append(opts, func(*nats.Options) error { return fmt.Errorf("CHUNKSTREAM_NATS_NKEY: %w", err) })
		}
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	return opts
}

// ConnectJetStream is Connect with a JetStream context on the
// connection; the caller closes nc.
func ConnectJetStream(ctx context.Context, c Config, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := Connect(ctx, c, name, log)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Connect connects to c.URL as a client called name (with endless
// reconnects, connection events logged on log, c's credentials, then
// extra), waiting up to c.ConnectTimeout for a server to answer. Errors
// name the URL with its credentials hidden.
func Connect(ctx context.Context, c Config, name string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := append(options(name, c, log), extra...)
	start := time.Now()
	deadline := start.Add(c.ConnectTimeout)
	wait := 250 * time.Millisecond
	var said time.Time // when the wait was last logged
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(c.URL, opts...)
		if err == nil {
			if attempt > 1 {
				log.Info("nats connected", "server", nc.ConnectedUrlRedacted(), "duration", time.Since(start).Round(time.Millisecond))
			}
			return nc, nil
		}
		if !unanswered(err) {
			return nil, fmt.Errorf("natsconn: connect to %s: %w", redact(c.URL), err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("natsconn: no NATS server answered at %s within %v (check NATS_URL, or give the server longer with CHUNKSTREAM_CONNECT_TIMEOUT): %w",
				redact(c.URL), c.ConnectTimeout, err)
		}
		if time.Since(said) >= countdownEvery {
			said = time.Now()
			log.Warn("waiting for NATS", "url", redact(c.URL), "left", left.Round(time.Second), "err", err)
		}
		d := min(wait/2+rand.N(wait/2), left)
		wait = min(2*wait, 2*time.Second)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("natsconn: connect to %s: %w", redact(c.URL), ctx.Err())
		case <-time.After(d):
		}
	}
}

// countdownEvery is how often Connect says, while it waits for a server,
// how long it will go on waiting.
const countdownEvery = 5 * time.Second

// unanswered reports whether a connection error means that no server
// answered (worth waiting for) rather than that one refused the client
// (see the package documentation). A connection closed during the
// handshake is how a server requiring a client certificate refuses.
func unanswered(err error) bool {
	if errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	opErr, ok := errors.AsType[*net.OpError](err)
	return ok && opErr.Op == "dial"
}

// redact returns a comma-separated URL list with every password, and
// every user name (which may be a token), replaced by "xxxxx". A URL
// without a scheme is read as the client reads it, as nats://.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		scheme := ""
		if !strings.Contains(p, "://") {
			scheme = "nats://"
		}
		u, err := url.Parse(scheme + p)
		switch {
		case err != nil && strings.Contains(p, "@"):
			p = "xxxxx@" + p[strings.LastIndexByte(p, '@')+1:]
		case err == nil && u.User != nil:
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			} else {
				u.User = url.User("xxxxx")
			}
			p = strings.TrimPrefix(u.String(), scheme)
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
