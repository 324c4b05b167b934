package worker

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/messages"
)

// Config holds every worker setting. The env tags are read by cmd/worker
// (caarlos0/env); the README's configuration table lists the same names
// and defaults, and a test keeps the two in step.
type Config struct {
	// NATSURL is the NATS server URL (comma-separated for several).
	NATSURL string `env:"NATS_URL" envDefault:"nats://127.0.0.1:4222" help:"NATS server URL(s), comma-separated"`
	// NATSUser and NATSPassword authenticate with user and password.
	NATSUser     string `env:"CHUNKSTREAM_NATS_USER" help:"NATS user name"`
	NATSPassword string `env:"CHUNKSTREAM_NATS_PASSWORD" help:"NATS password (environment only)"`
	// NATSToken authenticates with a token.
	NATSToken string `env:"CHUNKSTREAM_NATS_TOKEN" help:"NATS token (environment only)"`
	// NATSCreds is a credentials file (JWT and NKey seed).
	NATSCreds string `env:"CHUNKSTREAM_NATS_CREDS" help:"NATS credentials file (JWT and NKey seed)"`
	// NATSNKey is an NKey seed file.
	NATSNKey string `env:"CHUNKSTREAM_NATS_NKEY" help:"NATS NKey seed file"`
	// NATSTLSCert and NATSTLSKey are a client certificate and its key.
	NATSTLSCert string `env:"CHUNKSTREAM_NATS_TLS_CERT" help:"TLS client certificate file"`
	NATSTLSKey  string `env:"CHUNKSTREAM_NATS_TLS_KEY" help:"TLS client key file"`
	// NATSTLSCA is a CA bundle that verifies the server.
	NATSTLSCA string `env:"CHUNKSTREAM_NATS_TLS_CA" help:"CA bundle that verifies the NATS server"`

	// IngestStream is the stream of ingest requests (WorkQueue).
	IngestStream string `env:"CHUNKSTREAM_INGEST_STREAM" envDefault:"INGEST" help:"stream of ingest requests (WorkQueue)"`
	// IngestSubjects are the subjects of IngestStream.
	IngestSubjects []string `env:"CHUNKSTREAM_INGEST_SUBJECTS" envDefault:"ingest.>" envSeparator:"," help:"subjects of the ingest stream, comma-separated"`
	// ChunksStream is the stream of chunk records.
	ChunksStream string `env:"CHUNKSTREAM_CHUNKS_STREAM" envDefault:"CHUNKS" help:"stream of chunk records"`
	// ChunksPrefix is the first token of chunk record subjects.
	ChunksPrefix string `env:"CHUNKSTREAM_CHUNKS_PREFIX" envDefault:"chunks" help:"first subject token of chunk records"`
	// DLQStream is the stream of dead letters.
	DLQStream string `env:"CHUNKSTREAM_DLQ_STREAM" envDefault:"DLQ" help:"stream of dead letters"`
	// DLQSubject is the subject dead letters are published on.
	DLQSubject string `env:"CHUNKSTREAM_DLQ_SUBJECT" envDefault:"dlq.ingest" help:"subject of dead letters"`
	// Consumer is the durable pull consumer's name.
	Consumer string `env:"CHUNKSTREAM_CONSUMER" envDefault:"chunkers" help:"durable pull consumer name"`
	// DocsBucket is the KV bucket of document records.
	DocsBucket string `env:"CHUNKSTREAM_DOCS_BUCKET" envDefault:"CHUNKSTREAM_DOCS" help:"KV bucket of document records"`
	// ObjectsBucket is the Object Store bucket of large documents.
	ObjectsBucket string `env:"CHUNKSTREAM_OBJECTS_BUCKET" envDefault:"CHUNKSTREAM_OBJECTS" help:"Object Store bucket of large documents"`
	// Replicas is the replica count of every stream, bucket and the consumer.
	Replicas int `env:"CHUNKSTREAM_REPLICAS" envDefault:"1" help:"replicas of streams, buckets and consumer"`
	// DuplicateWindow is INGEST's de-duplication window.
	DuplicateWindow time.Duration `env:"CHUNKSTREAM_DUPLICATE_WINDOW" envDefault:"2m" help:"duplicate window of the ingest stream"`
	// ChunksDuplicateWindow is CHUNKS' de-duplication window; keep it
	// longer than MaxDeliver × (AckWait + BackoffMax).
	ChunksDuplicateWindow time.Duration `env:"CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW" envDefault:"1h" help:"duplicate window of the chunks stream"`
	// ChunksMaxAge is CHUNKS' age limit.
	ChunksMaxAge time.Duration `env:"CHUNKSTREAM_CHUNKS_MAX_AGE" envDefault:"168h" help:"age limit of chunk records"`

	// Concurrency is the number of documents processed at once; 0 means
	// GOMAXPROCS.
	Concurrency int `env:"CHUNKSTREAM_CONCURRENCY" help:"documents processed at once (0: GOMAXPROCS)"`
	// AckWait is how long the server waits for an ack before redelivering;
	// in-progress acks are sent every AckWait/3 during work.
	AckWait time.Duration `env:"CHUNKSTREAM_ACK_WAIT" envDefault:"30s" help:"time before an unacknowledged request is redelivered"`
	// MaxDeliver is how many deliveries a request gets before it is
	// dead-lettered as exhausted.
	MaxDeliver int `env:"CHUNKSTREAM_MAX_DELIVER" envDefault:"8" help:"deliveries before a failing request is dead-lettered"`
	// BackoffBase and BackoffMax bound the NAK delay after a transient
	// failure: BackoffBase × 2^(deliveries−1), at most BackoffMax, jittered.
	BackoffBase time.Duration `env:"CHUNKSTREAM_BACKOFF_BASE" envDefault:"1s" help:"first retry delay"`
	BackoffMax  time.Duration `env:"CHUNKSTREAM_BACKOFF_MAX" envDefault:"1m" help:"longest retry delay"`
	// MaxDocBytes is the largest document accepted; larger is permanent.
	MaxDocBytes int64 `env:"CHUNKSTREAM_MAX_DOC_BYTES" envDefault:"67108864" help:"largest document accepted, in bytes"`
	// MaxPendingPublishes bounds the chunk records in flight per document.
	MaxPendingPublishes int `env:"CHUNKSTREAM_MAX_PENDING_PUBLISHES" envDefault:"256" help:"chunk records in flight per document"`
	// MetricsAddr is the listen address of /metrics, /healthz and /readyz.
	// An empty variable means the default; an empty -metrics-addr flag
	// disables the server.
	MetricsAddr string `env:"CHUNKSTREAM_METRICS_ADDR" envDefault:":9090" help:"listen address of /metrics, /healthz, /readyz (-metrics-addr '' turns it off)"`
	// DrainTimeout bounds the SIGTERM drain: in-flight work still running
	// after it is NAKed. Keep the pod's grace period longer.
	DrainTimeout time.Duration `env:"CHUNKSTREAM_DRAIN_TIMEOUT" envDefault:"25s" help:"longest SIGTERM drain"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `env:"CHUNKSTREAM_LOG_LEVEL" envDefault:"info" help:"log level: debug, info, warn, error"`
	// Sink selects the sink: "subject" (chunk records on CHUNKS) or
	// "qdrant".
	Sink string `env:"CHUNKSTREAM_SINK" envDefault:"subject" help:"sink: subject or qdrant"`
	// SinkProbeBase and SinkProbeMax bound the wait between probes of a
	// dependency of the sink that is down (Unavailable): SinkProbeBase ×
	// 2^(n−1), at most SinkProbeMax, jittered. The worker resumes at most
	// about SinkProbeMax after the dependency answers again.
	SinkProbeBase time.Duration `env:"CHUNKSTREAM_SINK_PROBE_BASE" envDefault:"1s" help:"first wait before probing a sink that is down"`
	SinkProbeMax  time.Duration `env:"CHUNKSTREAM_SINK_PROBE_MAX" envDefault:"5s" help:"longest wait between probes of a sink that is down"`
}

// Sink names.
const (
	SinkSubject = "subject"
	SinkQdrant  = "qdrant"
)

// DefaultConfig returns the configuration with every default applied, as
// the env defaults give it.
func DefaultConfig() Config {
	return Config{
		NATSURL:               "nats://127.0.0.1:4222",
		IngestStream:          messages.DefaultIngestStream,
		IngestSubjects:        []string{messages.DefaultIngestSubjects},
		ChunksStream:          messages.DefaultChunksStream,
		ChunksPrefix:          messages.DefaultChunksPrefix,
		DLQStream:             messages.DefaultDLQStream,
		DLQSubject:            messages.DefaultDLQSubject,
		Consumer:              messages.DefaultConsumer,
		DocsBucket:            messages.DefaultDocsBucket,
		ObjectsBucket:         messages.DefaultObjectsBucket,
		Replicas:              1,
		DuplicateWindow:       2 * time.Minute,
		ChunksDuplicateWindow: time.Hour,
		ChunksMaxAge:          168 * time.Hour,
		AckWait:               30 * time.Second,
		MaxDeliver:            8,
		BackoffBase:           time.Second,
		BackoffMax:            time.Minute,
		MaxDocBytes:           64 << 20,
		MaxPendingPublishes:   256,
		MetricsAddr:           ":9090",
		DrainTimeout:          25 * time.Second,
		LogLevel:              "info",
		Sink:                  SinkSubject,
		SinkProbeBase:         time.Second,
		SinkProbeMax:          5 * time.Second,
	}
}

// Workers returns Concurrency, or GOMAXPROCS when it is 0.
func (c *Config) Workers() int {
	if c.Concurrency > 0 {
		return c.Concurrency
	}
	return runtime.GOMAXPROCS(0)
}

// Validate reports the first bad setting, naming its variable.
func (c *Config) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("worker: config %s: %s", name, fmt.Sprintf(format, args...)))
	}
	for _, n := range [][2]string{
		{"CHUNKSTREAM_INGEST_STREAM", c.IngestStream}, {"CHUNKSTREAM_CHUNKS_STREAM", c.ChunksStream},
		{"CHUNKSTREAM_DLQ_STREAM", c.DLQStream}, {"CHUNKSTREAM_CONSUMER", c.Consumer},
		{"CHUNKSTREAM_DOCS_BUCKET", c.DocsBucket}, {"CHUNKSTREAM_OBJECTS_BUCKET", c.ObjectsBucket},
	} {
		if n[1] == "" || strings.ContainsAny(n[1], " .*>\t\r\n") {
			bad(n[0], "%q is not a valid name", n[1])
		}
	}
	if len(c.IngestSubjects) == 0 {
		bad("CHUNKSTREAM_INGEST_SUBJECTS", "empty")
	}
	if c.ChunksPrefix == "" || strings.ContainsAny(c.ChunksPrefix, " *>") {
		bad("CHUNKSTREAM_CHUNKS_PREFIX", "%q is not a subject token", c.ChunksPrefix)
	}
	if c.DLQSubject == "" || strings.ContainsAny(c.DLQSubject, " *>") {
		bad("CHUNKSTREAM_DLQ_SUBJECT", "%q is not a subject", c.DLQSubject)
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		bad("CHUNKSTREAM_REPLICAS", "%d, want 1 to 5", c.Replicas)
	}
	if c.Concurrency < 0 {
		bad("CHUNKSTREAM_CONCURRENCY", "%d is negative", c.Concurrency)
	}
	if c.AckWait < 100*time.Millisecond {
		bad("CHUNKSTREAM_ACK_WAIT", "%v, want at least 100ms", c.AckWait)
	}
	if c.MaxDeliver < 1 {
		bad("CHUNKSTREAM_MAX_DELIVER", "%d, want at least 1", c.MaxDeliver)
	}
	if c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase {
		bad("CHUNKSTREAM_BACKOFF_BASE", "%v with max %v, want 0 < base <= max", c.BackoffBase, c.BackoffMax)
	}
	if c.MaxDocBytes < 1 {
		bad("CHUNKSTREAM_MAX_DOC_BYTES", "%d, want at least 1", c.MaxDocBytes)
	}
	if c.MaxPendingPublishes < 1 {
		bad("CHUNKSTREAM_MAX_PENDING_PUBLISHES", "%d, want at least 1", c.MaxPendingPublishes)
	}
	if c.DuplicateWindow <= 0 || c.ChunksDuplicateWindow <= 0 || c.ChunksMaxAge <= 0 {
		bad("CHUNKSTREAM_DUPLICATE_WINDOW", "windows and max age must be positive")
	}
	if span := time.Duration(c.MaxDeliver) * (c.AckWait + c.BackoffMax); c.ChunksDuplicateWindow > 0 && c.ChunksDuplicateWindow < span {
		bad("CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW", "%v is shorter than the worst redelivery span MaxDeliver × (AckWait + BackoffMax) = %v", c.ChunksDuplicateWindow, span)
	}
	if c.DrainTimeout < 0 {
		bad("CHUNKSTREAM_DRAIN_TIMEOUT", "%v is negative", c.DrainTimeout)
	}
	if c.Sink != SinkSubject && c.Sink != SinkQdrant {
		bad("CHUNKSTREAM_SINK", "%q, want subject or qdrant", c.Sink)
	}
	if c.SinkProbeBase <= 0 || c.SinkProbeMax < c.SinkProbeBase {
		bad("CHUNKSTREAM_SINK_PROBE_BASE", "%v with max %v, want 0 < base <= max", c.SinkProbeBase, c.SinkProbeMax)
	}
	if (c.NATSTLSCert == "") != (c.NATSTLSKey == "") {
		bad("CHUNKSTREAM_NATS_TLS_CERT", "certificate and key go together")
	}
	return errors.Join(errs...)
}
