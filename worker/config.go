package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/topology"
)

// Config holds every worker setting: the topology it consumes from and
// writes to (embedded) and its own. The env tags are read by cmd/worker;
// docs/configuration.md lists the same names and defaults, and a test
// keeps the two in step.
type Config struct {
	topology.Config

	// Concurrency is the number of documents processed at once (0: GOMAXPROCS).
	Concurrency int `env:"CHUNKSTREAM_CONCURRENCY" help:"documents processed at once (0: GOMAXPROCS; 64 × GOMAXPROCS with the subject sink; a quarter of them, at least GOMAXPROCS, for documents from the Object Store; with the Qdrant sink, enough to fill its requests)"`
	// BackoffBase and BackoffMax bound the NAK delay after a transient
	// failure: BackoffBase × 2^(deliveries−1), at most BackoffMax, jittered.
	BackoffBase time.Duration `env:"CHUNKSTREAM_BACKOFF_BASE" envDefault:"1s" help:"first retry delay"`
	BackoffMax  time.Duration `env:"CHUNKSTREAM_BACKOFF_MAX" envDefault:"1m" help:"longest retry delay"`
	// MaxDocBytes is the largest document accepted; larger is permanent.
	MaxDocBytes int64 `env:"CHUNKSTREAM_MAX_DOC_BYTES" envDefault:"67108864" help:"largest document accepted, in bytes"`
	// MaxPendingPublishes is the subject sink's flow control within one
	// atomic batch (package subjectsink).
	MaxPendingPublishes int `env:"CHUNKSTREAM_MAX_PENDING_PUBLISHES" envDefault:"256" help:"chunk records sent before the server confirms them, within one batch"`
	// MetricsAddr is the listen address of /metrics, /healthz and /readyz;
	// an empty variable means the default, an empty -metrics-addr flag none.
	MetricsAddr string `env:"CHUNKSTREAM_METRICS_ADDR" envDefault:":9090" help:"listen address of /metrics, /healthz, /readyz (-metrics-addr '' turns it off)"`
	// DrainTimeout bounds the SIGTERM drain: in-flight work still running
	// after it is NAKed. Keep the pod's grace period longer.
	DrainTimeout time.Duration `env:"CHUNKSTREAM_DRAIN_TIMEOUT" envDefault:"25s" help:"longest SIGTERM drain"`
	// Sink selects the sink: "subject" (chunk records on CHUNKS) or "qdrant".
	Sink string `env:"CHUNKSTREAM_SINK" envDefault:"subject" help:"sink: subject or qdrant"`
	// RecordFormat is the encoding of the chunk records the subject sink
	// publishes: "msgpack" or "json" (readable with the nats CLI).
	RecordFormat string `env:"CHUNKSTREAM_RECORD_FORMAT" envDefault:"msgpack" help:"encoding of chunk records: msgpack or json"`
	// SinkProbeBase and SinkProbeMax bound the wait between probes of a
	// dependency that is down (docs/operations.md, "When the sink is down").
	SinkProbeBase time.Duration `env:"CHUNKSTREAM_SINK_PROBE_BASE" envDefault:"1s" help:"first wait before probing a sink that is down"`
	SinkProbeMax  time.Duration `env:"CHUNKSTREAM_SINK_PROBE_MAX" envDefault:"5s" help:"longest wait between probes of a sink that is down"`
	// MaxChunkTime is the time one document may take to chunk (docs/operations.md,
	// "Budgets per document"). 0 means no limit.
	MaxChunkTime time.Duration `env:"CHUNKSTREAM_MAX_CHUNK_TIME" envDefault:"60s" help:"longest time one document may take to chunk; longer is dead-lettered too_complex (0: no limit)"`
	// MaxChunksPerDoc is the largest number of chunks one document may
	// give (docs/operations.md, "Budgets per document"). 0 means no limit.
	MaxChunksPerDoc int `env:"CHUNKSTREAM_MAX_CHUNKS_PER_DOC" envDefault:"100000" help:"most chunks one document may give; more is dead-lettered too_complex (0: no limit)"`
	// MinChunkChars, MinChunkWords and MinChunkTokens are the smallest
	// chunk size a request may ask for, in the unit its chunker's size
	// option counts (docs/operations.md, "Budgets per document"). 0 means no bound.
	MinChunkChars  int `env:"CHUNKSTREAM_MIN_CHUNK_CHARS" envDefault:"32" help:"smallest chunk size in characters a request may ask for: max_char (markdown, html, code), max_chars (email) (0: no bound)"`
	MinChunkWords  int `env:"CHUNKSTREAM_MIN_CHUNK_WORDS" envDefault:"8" help:"smallest chunk size in words a request may ask for: max_chunk_size (twostep) (0: no bound)"`
	MinChunkTokens int `env:"CHUNKSTREAM_MIN_CHUNK_TOKENS" envDefault:"8" help:"smallest chunk size in tokens a request may ask for, with a tokenizer (0: no bound)"`
	// Chunker is the worker's own chunker of requests that name none, for
	// the formats it reads; empty means each format's default. With
	// ChunkerOptions it is the fleet's default only when it is the first
	// worker's (docs/design.md, "One fleet, one resolution").
	Chunker string `env:"CHUNKSTREAM_CHUNKER" envDefault:"markdown" help:"this worker's own default chunker of requests that name none (the fleet's, set by the first worker, apply)"`
	// ChunkerOptions are options of Chunker beneath a request's own:
	// request > these > the chunker's defaults.
	ChunkerOptions ChunkerOptions `env:"CHUNKSTREAM_CHUNKER_OPTIONS" help:"options of the default chunker beneath a request's own, as a JSON object"`
}

// ChunkerOptions are raw chunker options, read from a JSON object;
// numbers stay json.Number, which the registry decodes.
type ChunkerOptions map[string]any

// UnmarshalText reads a JSON object; empty text is no options.
func (o *ChunkerOptions) UnmarshalText(text []byte) error {
	if len(bytes.TrimSpace(text)) == 0 {
		*o = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("want a JSON object of chunker options: %w", err)
	}
	if dec.More() {
		return errors.New("want one JSON object of chunker options, got more")
	}
	*o = m
	return nil
}

// Set implements flag.Value as UnmarshalText.
func (o *ChunkerOptions) Set(s string) error { return o.UnmarshalText([]byte(s)) }

// String returns the options as a JSON object ("" when there are none).
func (o *ChunkerOptions) String() string {
	if o == nil || len(*o) == 0 {
		return ""
	}
	b, err := json.Marshal(map[string]any(*o))
	if err != nil {
		return fmt.Sprint(map[string]any(*o))
	}
	return string(b)
}

// Record formats.
const (
	RecordFormatMsgpack = "msgpack"
	RecordFormatJSON    = "json"
)

// Sink names.
const (
	SinkSubject = "subject"
	SinkQdrant  = "qdrant"
)

// DefaultConfig returns the configuration with every default applied, as
// the env defaults give it.
func DefaultConfig() Config {
	return Config{
		Config:              topology.DefaultConfig(),
		BackoffBase:         time.Second,
		BackoffMax:          time.Minute,
		MaxDocBytes:         64 << 20,
		MaxPendingPublishes: 256,
		MetricsAddr:         ":9090",
		DrainTimeout:        25 * time.Second,
		Sink:                SinkSubject,
		RecordFormat:        RecordFormatMsgpack,
		Chunker:             "markdown",
		SinkProbeBase:       time.Second,
		SinkProbeMax:        5 * time.Second,
		MaxChunkTime:        time.Minute,
		MaxChunksPerDoc:     100_000,
		MinChunkChars:       32,
		MinChunkWords:       8,
		MinChunkTokens:      8,
	}
}

// Workers returns Concurrency, or GOMAXPROCS when it is 0.
func (c *Config) Workers() int {
	if c.Concurrency > 0 {
		return c.Concurrency
	}
	return runtime.GOMAXPROCS(0)
}

// Validate reports every bad setting as a fault.FieldError naming its
// field: the topology's, then the worker's own.
func (c *Config) Validate() error {
	errs := []error{c.Config.Validate()}
	bad := func(name, format string, args ...any) {
		errs = append(errs, &fault.FieldError{Pkg: "worker", Field: name, Problem: fmt.Sprintf(format, args...)})
	}
	if c.Concurrency < 0 {
		bad("Concurrency", "%d is negative", c.Concurrency)
	}
	if c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase {
		bad("BackoffBase", "%v with BackoffMax %v, want 0 < base <= max", c.BackoffBase, c.BackoffMax)
	}
	if c.MaxDocBytes < 1 {
		bad("MaxDocBytes", "%d, want at least 1", c.MaxDocBytes)
	}
	if c.MaxPendingPublishes < 1 {
		bad("MaxPendingPublishes", "%d, want at least 1", c.MaxPendingPublishes)
	}
	if span := time.Duration(c.MaxDeliver) * (c.AckWait + c.BackoffMax); c.ChunksDuplicateWindow > 0 && c.ChunksDuplicateWindow < span {
		bad("ChunksDuplicateWindow", "%v is shorter than the worst redelivery span MaxDeliver × (AckWait + BackoffMax) = %v", c.ChunksDuplicateWindow, span)
	}
	if c.DrainTimeout < 0 {
		bad("DrainTimeout", "%v is negative", c.DrainTimeout)
	}
	if c.Sink != SinkSubject && c.Sink != SinkQdrant {
		bad("Sink", "%q, want subject or qdrant", c.Sink)
	}
	if c.RecordFormat != RecordFormatMsgpack && c.RecordFormat != RecordFormatJSON {
		bad("RecordFormat", "%q, want msgpack or json", c.RecordFormat)
	}
	if c.SinkProbeBase <= 0 || c.SinkProbeMax < c.SinkProbeBase {
		bad("SinkProbeBase", "%v with SinkProbeMax %v, want 0 < base <= max", c.SinkProbeBase, c.SinkProbeMax)
	}
	if c.MaxChunkTime < 0 {
		bad("MaxChunkTime", "%v is negative", c.MaxChunkTime)
	}
	if c.MaxChunksPerDoc < 0 {
		bad("MaxChunksPerDoc", "%d is negative", c.MaxChunksPerDoc)
	}
	if c.MinChunkChars < 0 {
		bad("MinChunkChars", "%d is negative", c.MinChunkChars)
	}
	if c.MinChunkWords < 0 {
		bad("MinChunkWords", "%d is negative", c.MinChunkWords)
	}
	if c.MinChunkTokens < 0 {
		bad("MinChunkTokens", "%d is negative", c.MinChunkTokens)
	}
	return errors.Join(errs...)
}
