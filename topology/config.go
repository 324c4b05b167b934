package topology

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
)

// DefaultIngestSubject is the subject producers publish ingest requests on
// by default; it is under DefaultConfig's IngestSubjects.
const DefaultIngestSubject = "ingest.docs"

// maxAckPending bounds the requests delivered to the whole fleet and not
// yet acknowledged: room for many workers, each of which bounds its own
// share by fetching only for idle processors.
const maxAckPending = 10000

// Config is the stream, bucket and consumer topology. The env tags name
// the variables the commands read (the same for the worker and the
// producer, so one set of variables configures both) and the help tags
// say what each setting is; envDefault and DefaultConfig give the same
// defaults, and a test keeps them in step.
type Config struct {
	IngestStream   string   `env:"CHUNKSTREAM_INGEST_STREAM" envDefault:"INGEST" help:"stream of ingest requests (WorkQueue)"`
	IngestSubjects []string `env:"CHUNKSTREAM_INGEST_SUBJECTS" envDefault:"ingest.>" envSeparator:"," help:"subjects of the ingest stream, comma-separated"`
	ChunksStream   string   `env:"CHUNKSTREAM_CHUNKS_STREAM" envDefault:"CHUNKS" help:"stream of chunk records"`
	// ChunksPrefix is the first token of chunk record subjects; the
	// chunks stream stores ChunksPrefix + ".>".
	ChunksPrefix string `env:"CHUNKSTREAM_CHUNKS_PREFIX" envDefault:"chunks" help:"first subject token of chunk records"`
	DLQStream    string `env:"CHUNKSTREAM_DLQ_STREAM" envDefault:"DLQ" help:"stream of dead letters"`
	// DLQSubject is the subject dead letters are published on; the DLQ
	// stream stores every subject under its first token.
	DLQSubject    string `env:"CHUNKSTREAM_DLQ_SUBJECT" envDefault:"dlq.ingest" help:"subject of dead letters"`
	Consumer      string `env:"CHUNKSTREAM_CONSUMER" envDefault:"chunkers" help:"durable pull consumer name"`
	DocsBucket    string `env:"CHUNKSTREAM_DOCS_BUCKET" envDefault:"CHUNKSTREAM_DOCS" help:"KV bucket of document records"`
	ObjectsBucket string `env:"CHUNKSTREAM_OBJECTS_BUCKET" envDefault:"CHUNKSTREAM_OBJECTS" help:"Object Store bucket of large documents"`
	// Only ObjectsTTL removes objects (package documentation).
	ObjectsTTL      time.Duration `env:"CHUNKSTREAM_OBJECTS_TTL" envDefault:"168h" help:"age at which stored large documents expire"`
	Replicas        int           `env:"CHUNKSTREAM_REPLICAS" envDefault:"1" help:"replicas of streams, buckets and consumer"`
	DuplicateWindow time.Duration `env:"CHUNKSTREAM_DUPLICATE_WINDOW" envDefault:"2m" help:"duplicate window of the ingest stream"`
	// ChunksDuplicateWindow is also the dead letter stream's; keep it
	// longer than the worst redelivery span (the worker checks).
	ChunksDuplicateWindow time.Duration `env:"CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW" envDefault:"1h" help:"duplicate window of the chunks stream"`
	ChunksMaxAge          time.Duration `env:"CHUNKSTREAM_CHUNKS_MAX_AGE" envDefault:"168h" help:"age limit of chunk records"`
	AckWait               time.Duration `env:"CHUNKSTREAM_ACK_WAIT" envDefault:"30s" help:"time before an unacknowledged request is redelivered"`
	// MaxDeliver is the deliveries a request gets: the worker dead-letters
	// it when the last fails, and, without processing it, when it comes
	// after the last (its worker died on it). The consumer itself
	// redelivers without limit (ConsumerConfig), so no request is left in
	// INGEST undelivered.
	MaxDeliver int `env:"CHUNKSTREAM_MAX_DELIVER" envDefault:"8" help:"deliveries before a failing request is dead-lettered"`
	// SetupTimeout bounds Ensure, Objects, StreamForSubject and Retry.
	SetupTimeout time.Duration `env:"CHUNKSTREAM_SETUP_TIMEOUT" envDefault:"2m" help:"longest wait at start for the streams, buckets and consumer (and Qdrant, with the qdrant sink)"`
	// AllowDiscardOld lets Ensure accept a stream or the records bucket
	// whose limits drop data silently (CheckLimits), and shorten the
	// chunk age or objects TTL of existing ones (ErrShrink).
	AllowDiscardOld bool `env:"CHUNKSTREAM_ALLOW_DISCARD_OLD" help:"accept streams whose limits silently remove the oldest messages (discard old), and a shorter chunk age or objects TTL than the existing ones'"`
	// Storage is where the streams and buckets keep their messages:
	// file storage (the zero value, and the only one a variable can
	// ask for), or memory storage for a server that lives as long as
	// one run, as local mode's embedded server does.
	Storage jetstream.StorageType
}

// DefaultConfig returns the topology with every default applied, as the
// env defaults give it.
func DefaultConfig() Config {
	return Config{
		IngestStream:          "INGEST",
		IngestSubjects:        []string{"ingest.>"},
		ChunksStream:          "CHUNKS",
		ChunksPrefix:          "chunks",
		DLQStream:             "DLQ",
		DLQSubject:            "dlq.ingest",
		Consumer:              "chunkers",
		DocsBucket:            "CHUNKSTREAM_DOCS",
		ObjectsBucket:         "CHUNKSTREAM_OBJECTS",
		ObjectsTTL:            7 * 24 * time.Hour,
		Replicas:              1,
		DuplicateWindow:       2 * time.Minute,
		ChunksDuplicateWindow: time.Hour,
		ChunksMaxAge:          7 * 24 * time.Hour,
		AckWait:               30 * time.Second,
		MaxDeliver:            8,
		SetupTimeout:          2 * time.Minute,
	}
}

// WithDefaults returns c with every zero setting replaced by
// DefaultConfig's, for library callers that set only some. No setting's
// zero value is valid but AllowDiscardOld's and Storage's, which are
// their defaults, so nothing that could be asked for is lost.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	cv, dv := reflect.ValueOf(&c).Elem(), reflect.ValueOf(d)
	for i := range cv.NumField() {
		if cv.Field(i).IsZero() {
			cv.Field(i).Set(dv.Field(i))
		}
	}
	return c
}

// Validate reports every bad setting as a fault.FieldError naming its
// field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, &fault.FieldError{Pkg: "topology", Field: name, Problem: fmt.Sprintf(format, args...)})
	}
	for _, n := range [][2]string{
		{"IngestStream", c.IngestStream}, {"ChunksStream", c.ChunksStream},
		{"DLQStream", c.DLQStream}, {"Consumer", c.Consumer},
		{"DocsBucket", c.DocsBucket}, {"ObjectsBucket", c.ObjectsBucket},
	} {
		if n[1] == "" || strings.ContainsAny(n[1], " .*>\t\r\n") {
			bad(n[0], "%q is not a valid name", n[1])
		}
	}
	if len(c.IngestSubjects) == 0 {
		bad("IngestSubjects", "empty")
	}
	for _, s := range c.IngestSubjects {
		if !validSubject(s, true) {
			bad("IngestSubjects", "%q is not a subject", s)
		}
	}
	if c.ChunksPrefix == "" || strings.ContainsAny(c.ChunksPrefix, " *>") {
		bad("ChunksPrefix", "%q is not a subject token", c.ChunksPrefix)
	}
	if !validSubject(c.DLQSubject, false) {
		bad("DLQSubject", "%q is not a subject", c.DLQSubject)
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		bad("Replicas", "%d, want 1 to 5", c.Replicas)
	}
	if c.DuplicateWindow <= 0 {
		bad("DuplicateWindow", "%v, want a positive duration", c.DuplicateWindow)
	}
	if c.ChunksDuplicateWindow <= 0 {
		bad("ChunksDuplicateWindow", "%v, want a positive duration", c.ChunksDuplicateWindow)
	}
	if c.ChunksMaxAge <= 0 {
		bad("ChunksMaxAge", "%v, want a positive duration", c.ChunksMaxAge)
	} else if c.ChunksDuplicateWindow > c.ChunksMaxAge {
		bad("ChunksDuplicateWindow", "%v is longer than ChunksMaxAge %v", c.ChunksDuplicateWindow, c.ChunksMaxAge)
	}
	if c.ObjectsTTL <= 0 {
		bad("ObjectsTTL", "%v, want a positive duration (nothing else removes objects)", c.ObjectsTTL)
	}
	if c.AckWait < 100*time.Millisecond {
		bad("AckWait", "%v, want at least 100ms", c.AckWait)
	}
	if c.MaxDeliver < 1 {
		bad("MaxDeliver", "%d, want at least 1", c.MaxDeliver)
	}
	if c.SetupTimeout <= 0 {
		bad("SetupTimeout", "%v, want a positive duration", c.SetupTimeout)
	}
	if c.Storage != jetstream.FileStorage && c.Storage != jetstream.MemoryStorage {
		bad("Storage", "%v, want file or memory", c.Storage)
	}
	return errors.Join(errs...)
}

// validSubject reports whether s is a subject of non-empty tokens without
// spaces; wildcards only when wild.
func validSubject(s string, wild bool) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return false
		case t == "*" || (t == ">" && i == len(toks)-1):
			if !wild {
				return false
			}
		case strings.ContainsAny(t, "*>"):
			return false
		}
	}
	return true
}

// IngestStreamConfig returns the ingest stream's configuration: Storage,
// WorkQueue retention (a request leaves the stream when acked or
// terminated), the duplicate window, direct gets (a request read by
// sequence, from any replica) and fast-ingest batches
// (allow_batched: producers' backfills publish through them).
func (c *Config) IngestStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              c.IngestStream,
		Description:       "chunkstream ingest requests",
		Subjects:          c.IngestSubjects,
		Retention:         jetstream.WorkQueuePolicy,
		Storage:           c.Storage,
		Duplicates:        c.DuplicateWindow,
		Replicas:          c.Replicas,
		AllowDirect:       true,
		AllowBatchPublish: true,
	}
}

// ChunksStreamConfig returns the chunks stream's configuration: a change
// feed with its own duplicate window and an age limit, taking atomic
// batches (the subject sink stores each version's records as one).
func (c *Config) ChunksStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:               c.ChunksStream,
		Description:        "chunkstream chunk records",
		Subjects:           []string{c.ChunksPrefix + ".>"},
		Retention:          jetstream.LimitsPolicy,
		Storage:            c.Storage,
		Duplicates:         c.ChunksDuplicateWindow,
		MaxAge:             c.ChunksMaxAge,
		Replicas:           c.Replicas,
		AllowAtomicPublish: true,
	}
}

// DLQStreamConfig returns the dead letter stream's configuration: every
// subject under the dead letter subject's first token, kept until people
// remove them; its duplicate window makes dead-lettering idempotent.
func (c *Config) DLQStreamConfig() jetstream.StreamConfig {
	first, _, _ := strings.Cut(c.DLQSubject, ".")
	return jetstream.StreamConfig{
		Name:        c.DLQStream,
		Description: "chunkstream dead letters",
		Subjects:    []string{first + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     c.Storage,
		Duplicates:  c.ChunksDuplicateWindow,
		Replicas:    c.Replicas,
	}
}

// ConsumerConfig returns the durable pull consumer's configuration. Its
// MaxDeliver is unlimited (-1): the worker keeps Config.MaxDeliver, since
// a request the server stops delivering stays in the work queue with
// nothing to tell that it is there.
func (c *Config) ConsumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       c.Consumer,
		Description:   "chunkstream workers",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: maxAckPending,
		Replicas:      c.Replicas,
	}
}

// DocsBucketConfig returns the document records bucket's configuration:
// one value per key (records only move forward), Storage.
func (c *Config) DocsBucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      c.DocsBucket,
		Description: "chunkstream document records",
		History:     1,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
	}
}

// ObjectsBucketConfig returns the large documents bucket's configuration:
// objects expire after ObjectsTTL, Storage.
func (c *Config) ObjectsBucketConfig() jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket:      c.ObjectsBucket,
		Description: "chunkstream large documents",
		TTL:         c.ObjectsTTL,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
	}
}
