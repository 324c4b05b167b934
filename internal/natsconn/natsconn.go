// Package natsconn builds the NATS connection options shared by the
// worker and the producer from their credential settings, so both commands
// authenticate, reconnect and log connection events the same way.
package natsconn

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// Auth holds the NATS credential settings (CHUNKSTREAM_NATS_*). Its
// secrets are passed to the client and never logged.
type Auth struct {
	User, Password string // user and password
	Token          string // token
	Creds          string // creds file (JWT + NKey seed)
	NKey           string // NKey seed file
	TLSCert        string // client certificate file (with TLSKey)
	TLSKey         string // client key file
	TLSCA          string // CA file that signed the server's certificate
}

// Options returns the connection options of a chunkstream client called
// name: endless reconnects every 250 ms, connection events logged on log,
// and the credentials of a. An unreadable NKey seed makes Connect fail
// with an error naming CHUNKSTREAM_NATS_NKEY.
func Options(name string, a Auth, log *slog.Logger) []nats.Option {
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
	if a.User != "" {
		opts = append(opts, nats.UserInfo(a.User, a.Password))
	}
	if a.Token != "" {
		opts = append(opts, nats.Token(a.Token))
	}
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	if a.NKey != "" {
		if o, err := nats.NkeyOptionFromSeed(a.NKey); err == nil {
			opts = append(opts, o)
		} else {
			opts = append(opts, func(*nats.Options) error { return fmt.Errorf("CHUNKSTREAM_NATS_NKEY: %w", err) })
		}
	}
	if a.TLSCert != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	return opts
}
