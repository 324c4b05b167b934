package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
)

// config is every setting of the producer. Each is an environment
// variable (caarlos0/env) and, mostly, a flag whose default is the
// variable's value, so a flag beats its variable. The NATS settings and
// the topology are the workers' (the same variables, so one set of
// variables configures both); the producer's own start
// CHUNKSTREAM_PRODUCER_.
type config struct {
	NATS natsconn.Config
	// Config is the topology. The producer acts on its buckets, the
	// objects bucket's TTL and replicas and the set-up timeout
	// (producerTopology, which are flags too); it reads the rest from the
	// environment only and validates it, as the workers do.
	topology.Config
	Log tty.Log

	// Dir is a folder or file to send, besides the PATH arguments.
	Dir string `env:"CHUNKSTREAM_PRODUCER_DIR"`
	// Subject is where requests are published.
	Subject string `env:"CHUNKSTREAM_PRODUCER_SUBJECT" envDefault:"ingest.docs"`
	// IDPrefix is put before every document id.
	IDPrefix string `env:"CHUNKSTREAM_PRODUCER_ID_PREFIX"`
	// Ext lists the extensions picked in folders (default: the chunker's).
	Ext string `env:"CHUNKSTREAM_PRODUCER_EXT"`
	// Chunker names the chunker of every request ("" = each format's
	// default); email sends each path as a mailbox, one request per thread.
	Chunker string `env:"CHUNKSTREAM_PRODUCER_CHUNKER"`
	// Options are chunker options as a JSON object (the chunker's option
	// flags override its keys).
	Options string `env:"CHUNKSTREAM_PRODUCER_OPTIONS"`
	// Format sets the format of every request ("" = from the extension).
	Format string `env:"CHUNKSTREAM_PRODUCER_FORMAT"`
	// Source and Collection are request fields set on every request.
	Source     string `env:"CHUNKSTREAM_PRODUCER_SOURCE"`
	Collection string `env:"CHUNKSTREAM_PRODUCER_COLLECTION"`
	// Tenant is the tenant of every document sent from files (a stdin
	// line names its own: with -stdin it is a usage error), and the one whose records -wait, skipping of
	// unchanged documents and -delete-missing read.
	Tenant string `env:"CHUNKSTREAM_TENANT"`
	// Stdin reads ingest requests as JSON lines from standard input.
	Stdin bool `env:"CHUNKSTREAM_PRODUCER_STDIN"`
	// Force sends unchanged documents too.
	Force bool `env:"CHUNKSTREAM_PRODUCER_FORCE"`
	// SendInvalidUTF8 sends text files that are not valid UTF-8 as they
	// are (the workers dead-letter them) instead of reporting them.
	SendInvalidUTF8 bool `env:"CHUNKSTREAM_PRODUCER_SEND_INVALID_UTF8"`
	// DeleteMissing sends deletes for documents whose file is gone.
	DeleteMissing bool `env:"CHUNKSTREAM_PRODUCER_DELETE_MISSING"`
	// All scopes -delete-missing to every id, and Yes confirms deletes of
	// more than producer.ConfirmDeletesAbove percent of the scope: flags
	// only, since a confirmation belongs to one command line.
	All, Yes bool
	// Bulk packs small documents into bulk requests (docs/wire.md, "Bulk
	// requests"), which workers older than them do not read.
	Bulk bool `env:"CHUNKSTREAM_PRODUCER_BULK"`
	// ResendStale sends only the documents processed with other settings
	// than their request would now get.
	ResendStale bool `env:"CHUNKSTREAM_PRODUCER_RESEND_STALE"`
	// Wait waits, after publishing, until the workers have processed
	// every request sent (done, dead-lettered or superseded).
	Wait bool `env:"CHUNKSTREAM_PRODUCER_WAIT"`
	// WaitTimeout ends the wait when no request has finished for this
	// long (0: wait as long as it takes).
	WaitTimeout time.Duration `env:"CHUNKSTREAM_PRODUCER_WAIT_TIMEOUT" envDefault:"15m"`
	// DryRun lists what would be sent and sends nothing.
	DryRun bool `env:"CHUNKSTREAM_PRODUCER_DRY_RUN"`
	// Rate limits documents per second (0: no limit).
	Rate float64 `env:"CHUNKSTREAM_PRODUCER_RATE" envDefault:"0"`
	// MaxPending bounds the publishes awaiting their PubAck.
	MaxPending int `env:"CHUNKSTREAM_PRODUCER_MAX_PENDING" envDefault:"1024"`
	// MaxPendingBytes bounds the bytes of the publishes awaiting their PubAck.
	MaxPendingBytes int `env:"CHUNKSTREAM_PRODUCER_MAX_PENDING_BYTES" envDefault:"67108864"`
	// RetryWait is the first delay before probing a server that stopped
	// answering (doubling, at most 2s).
	RetryWait time.Duration `env:"CHUNKSTREAM_PRODUCER_RETRY_WAIT" envDefault:"250ms"`
	// AckTimeout bounds the wait for one PubAck.
	AckTimeout time.Duration `env:"CHUNKSTREAM_PRODUCER_ACK_TIMEOUT" envDefault:"10s"`
	// Readers is how many files are read and hashed at once.
	Readers int `env:"CHUNKSTREAM_PRODUCER_READERS" envDefault:"8"`
	// JSON sends JSON requests instead of msgpack.
	JSON bool `env:"CHUNKSTREAM_PRODUCER_JSON"`
	// Progress shows a progress bar (default: when stderr is a terminal).
	Progress string `env:"CHUNKSTREAM_PRODUCER_PROGRESS" envDefault:"auto"`
	// RetryFor is how long publishing may fail without a success before
	// the run gives up (0: at the first failure).
	RetryFor time.Duration `env:"CHUNKSTREAM_PRODUCER_RETRY_FOR" envDefault:"1m"`
	// MaxDocBytes is the largest document sent: the workers' limit, under
	// the worker's variable name.
	MaxDocBytes int64 `env:"CHUNKSTREAM_MAX_DOC_BYTES" envDefault:"67108864"`
}

// loadEnv reads the environment (lookup) into the env-tagged struct c.
func loadEnv(c any, lookup func(string) (string, bool)) error {
	params, err := env.GetFieldParams(c)
	if err != nil {
		return err
	}
	environ := map[string]string{}
	for _, p := range params {
		if v, ok := lookup(p.Key); ok {
			environ[p.Key] = v
		}
	}
	if err := env.ParseWithOptions(c, env.Options{Environment: environ}); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	return nil
}

// producerTopology lists the topology settings that are producer flags.
var producerTopology = map[string]bool{
	"CHUNKSTREAM_DOCS_BUCKET": true, "CHUNKSTREAM_OBJECTS_BUCKET": true, "CHUNKSTREAM_OBJECTS_TTL": true,
	"CHUNKSTREAM_REPLICAS": true, "CHUNKSTREAM_SETUP_TIMEOUT": true,
}

// bindFlags defines the flags, each defaulting to its variable's value.
// Secrets (password, token) are variables only: flags show in process
// lists. -s is the nats CLI's name for -nats-url.
func bindFlags(fs *flag.FlagSet, c *config) {
	natsconn.BindFlags(fs, &c.NATS)
	fs.Var(fs.Lookup("nats-url").Value, "s", "same as -nats-url (env NATS_URL)")
	envflag.Bind(fs, &c.Config, func(v string) bool { return producerTopology[v] })
	envflag.Bind(fs, &c.Log, nil)
	fs.StringVar(&c.Dir, "dir", c.Dir, "a folder or file to send, besides the PATH arguments (env CHUNKSTREAM_PRODUCER_DIR)")
	fs.StringVar(&c.Subject, "subject", c.Subject, "subject to publish on, under the INGEST stream's subjects (env CHUNKSTREAM_PRODUCER_SUBJECT)")
	fs.StringVar(&c.IDPrefix, "id-prefix", c.IDPrefix, "put before every document id (env CHUNKSTREAM_PRODUCER_ID_PREFIX)")
	fs.StringVar(&c.Ext, "ext", c.Ext, "comma-separated extensions picked in folders; default: the chunker's (env CHUNKSTREAM_PRODUCER_EXT)")
	fs.StringVar(&c.Options, "options", c.Options, `chunker options as a JSON object, e.g. {"max_chunk_size":800}; option flags override it (env CHUNKSTREAM_PRODUCER_OPTIONS)`)
	fs.StringVar(&c.Format, "format", c.Format, "format of every document: "+strings.Join(registry.Default().FormatNames(), ", ")+"; default: from the extension (env CHUNKSTREAM_PRODUCER_FORMAT)")
	fs.StringVar(&c.Source, "source", c.Source, "source field of every request (env CHUNKSTREAM_PRODUCER_SOURCE)")
	fs.StringVar(&c.Collection, "collection", c.Collection, "Qdrant collection override of every request (env CHUNKSTREAM_PRODUCER_COLLECTION)")
	fs.StringVar(&c.Tenant, "tenant", c.Tenant, "tenant of every document: 1 to 64 letters, digits, - or _; its documents are apart from other tenants' of the same ids (env CHUNKSTREAM_TENANT)")
	fs.BoolVar(&c.Stdin, "stdin", c.Stdin, "read ingest requests as JSON lines from standard input (env CHUNKSTREAM_PRODUCER_STDIN)")
	fs.BoolVar(&c.Force, "force", c.Force, "send unchanged documents too (env CHUNKSTREAM_PRODUCER_FORCE)")
	fs.BoolVar(&c.SendInvalidUTF8, "send-invalid-utf8", c.SendInvalidUTF8, "send Markdown, MDX and text files that are not valid UTF-8 as they are, for the workers to dead-letter, instead of reporting them and sending nothing (env CHUNKSTREAM_PRODUCER_SEND_INVALID_UTF8)")
	fs.BoolVar(&c.DeleteMissing, "delete-missing", c.DeleteMissing, "send deletes for ids under -id-prefix whose file is gone, each on its record's subject; needs -id-prefix or -all (env CHUNKSTREAM_PRODUCER_DELETE_MISSING)")
	fs.BoolVar(&c.All, "all", false, "with -delete-missing and no -id-prefix: delete across every recorded id")
	fs.BoolVar(&c.Yes, "yes", false, fmt.Sprintf("with -delete-missing: confirm deleting more than %d%% of the documents under the scope", producer.ConfirmDeletesAbove))
	fs.BoolVar(&c.Bulk, "bulk", c.Bulk, "pack small documents into bulk requests, up to 256 a message: fewer server operations per document; the workers must be of a release that reads them (env CHUNKSTREAM_PRODUCER_BULK)")
	fs.BoolVar(&c.ResendStale, "resend-stale", c.ResendStale, "send only the documents whose record holds their content but other settings (after a change of the workers' chunker defaults); nothing new, changed or deleted (env CHUNKSTREAM_PRODUCER_RESEND_STALE)")
	fs.BoolVar(&c.Wait, "wait", c.Wait, "after publishing, wait until the workers processed every request sent; exit 1 if any was dead-lettered (env CHUNKSTREAM_PRODUCER_WAIT)")
	fs.DurationVar(&c.WaitTimeout, "wait-timeout", c.WaitTimeout, "give up waiting when no request has finished for this long, listing what is still pending, exit 1; 0: no limit (env CHUNKSTREAM_PRODUCER_WAIT_TIMEOUT)")
	fs.BoolVar(&c.DryRun, "dry-run", c.DryRun, "list what would be sent on standard output; send nothing (env CHUNKSTREAM_PRODUCER_DRY_RUN)")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "at most this many documents per second; 0: no limit (env CHUNKSTREAM_PRODUCER_RATE)")
	fs.IntVar(&c.MaxPending, "max-pending", c.MaxPending, "publishes awaiting their PubAck at most (env CHUNKSTREAM_PRODUCER_MAX_PENDING)")
	fs.IntVar(&c.MaxPendingBytes, "max-pending-bytes", c.MaxPendingBytes, "bytes of the publishes awaiting their PubAck at most (env CHUNKSTREAM_PRODUCER_MAX_PENDING_BYTES)")
	fs.DurationVar(&c.RetryWait, "retry-wait", c.RetryWait, "first delay before probing a server that stopped answering, doubling up to 2s (env CHUNKSTREAM_PRODUCER_RETRY_WAIT)")
	fs.DurationVar(&c.AckTimeout, "ack-timeout", c.AckTimeout, "wait for one PubAck at most (env CHUNKSTREAM_PRODUCER_ACK_TIMEOUT)")
	fs.IntVar(&c.Readers, "readers", c.Readers, "files read and hashed at once (env CHUNKSTREAM_PRODUCER_READERS)")
	fs.BoolVar(&c.JSON, "json", c.JSON, "send JSON requests instead of msgpack (env CHUNKSTREAM_PRODUCER_JSON)")
	fs.StringVar(&c.Progress, "progress", c.Progress, "progress bar: auto (when stderr is a terminal), true or false (env CHUNKSTREAM_PRODUCER_PROGRESS)")
	fs.DurationVar(&c.RetryFor, "retry-for", c.RetryFor, "give up when no publish has succeeded for this long; failed publishes are re-sent with the same Nats-Msg-Id until then; with -ack-timeout, keep it under INGEST's duplicate window; 0: give up at the first failure (env CHUNKSTREAM_PRODUCER_RETRY_FOR)")
	fs.Int64Var(&c.MaxDocBytes, "max-doc-bytes", c.MaxDocBytes, "refuse documents larger than this, the workers' limit (env CHUNKSTREAM_MAX_DOC_BYTES)")
}

// validate checks the settings the flag package cannot, naming the
// variables and the flags of fs.
func (c *config) validate(fs *flag.FlagSet) error {
	if err := errors.Join(c.NATS.Validate(), c.Log.Validate(), envflag.Explain(c.Config.Validate(), &c.Config, fs)); err != nil {
		return err
	}
	switch {
	case c.Rate < 0:
		return fmt.Errorf("-rate (CHUNKSTREAM_PRODUCER_RATE) must not be negative, got %v", c.Rate)
	case c.MaxPending <= 0:
		return fmt.Errorf("-max-pending (CHUNKSTREAM_PRODUCER_MAX_PENDING) must be positive, got %d", c.MaxPending)
	case c.MaxPendingBytes <= 0:
		return fmt.Errorf("-max-pending-bytes (CHUNKSTREAM_PRODUCER_MAX_PENDING_BYTES) must be positive, got %d", c.MaxPendingBytes)
	case c.RetryFor < 0:
		return fmt.Errorf("-retry-for (CHUNKSTREAM_PRODUCER_RETRY_FOR) must not be negative, got %v", c.RetryFor)
	case c.MaxDocBytes < 1:
		return fmt.Errorf("-max-doc-bytes (CHUNKSTREAM_MAX_DOC_BYTES) must be at least 1, got %d", c.MaxDocBytes)
	case c.WaitTimeout < 0:
		return fmt.Errorf("-wait-timeout (CHUNKSTREAM_PRODUCER_WAIT_TIMEOUT) must not be negative, got %v", c.WaitTimeout)
	case c.Readers <= 0:
		return fmt.Errorf("-readers (CHUNKSTREAM_PRODUCER_READERS) must be positive, got %d", c.Readers)
	case c.Subject == "":
		return fmt.Errorf("-subject (CHUNKSTREAM_PRODUCER_SUBJECT) is empty")
	}
	if err := messages.ValidateTenant(c.Tenant); err != nil {
		return fmt.Errorf("-tenant (CHUNKSTREAM_TENANT) %q: want 1 to %d ASCII letters, digits, '-' or '_'", c.Tenant, messages.MaxTenantLen)
	}
	switch c.Progress {
	case "auto", "true", "false":
	default:
		return fmt.Errorf("-progress (CHUNKSTREAM_PRODUCER_PROGRESS) is auto, true or false, got %q", c.Progress)
	}
	if c.Options != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.Options), &m); err != nil {
			return fmt.Errorf("-options (CHUNKSTREAM_PRODUCER_OPTIONS): want a JSON object: %w", err)
		}
	}
	if c.Format != "" && !slices.Contains(registry.Default().FormatNames(), c.Format) {
		return fmt.Errorf("-format (CHUNKSTREAM_PRODUCER_FORMAT): unknown format %q", c.Format)
	}
	return nil
}
