package qdrantsink

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/fault"
)

// Limits of Config.Batch and the request size cap.
const (
	MinBatch = 64
	MaxBatch = 256
	// MaxRequestBytes caps one upsert request (the encoded points); a batch
	// is cut earlier when the next point would cross it.
	MaxRequestBytes = 8 << 20
	// MaxParallel caps Config.Parallel.
	MaxParallel = 64
)

// ErrInvalidConfig reports a Config field out of range.
var ErrInvalidConfig = errors.New("qdrantsink: invalid config")

// Config configures the Qdrant sink. The env tags are the worker's
// environment variables (parsed by cmd/worker); the defaults are in
// envDefault and in DefaultConfig.
type Config struct {
	// Addr is the Qdrant gRPC address, "host:port".
	Addr string `env:"CHUNKSTREAM_QDRANT_ADDR" envDefault:"localhost:6334" help:"Qdrant gRPC address, host:port"`
	// Timeout bounds every request to Qdrant; a request that takes longer
	// counts as an outage (see fault.Unavailable).
	Timeout time.Duration `env:"CHUNKSTREAM_QDRANT_TIMEOUT" envDefault:"20s" help:"longest a request to Qdrant may take; longer counts as an outage"`
	// APIKey is sent with every request when set; never logged.
	APIKey string `env:"CHUNKSTREAM_QDRANT_API_KEY" help:"Qdrant API key (environment only)"`
	// TLS connects with TLS (system roots unless TLSCA is set).
	TLS bool `env:"CHUNKSTREAM_QDRANT_TLS" envDefault:"false" help:"connect to Qdrant with TLS"`
	// TLSCA is a PEM file of CA certificates to trust instead of the
	// system roots; requires TLS.
	TLSCA string `env:"CHUNKSTREAM_QDRANT_TLS_CA" help:"CA bundle that verifies Qdrant (with TLS)"`
	// Collection is the default collection; an ingest request's
	// "collection" overrides it.
	Collection string `env:"CHUNKSTREAM_QDRANT_COLLECTION" envDefault:"chunks" help:"default collection; a request's collection overrides it"`
	// Batch is the number of points per upsert request (MinBatch to
	// MaxBatch), gathered from the documents being written; a request is
	// also cut before it reaches MaxRequestBytes.
	Batch int `env:"CHUNKSTREAM_QDRANT_BATCH" envDefault:"128" help:"points per upsert request (64 to 256), gathered from the documents in flight"`
	// Linger is how long points wait for other documents' points to fill
	// a request of Batch points; 0 sends what is queued as soon as fewer
	// than Parallel requests are in flight.
	Linger time.Duration `env:"CHUNKSTREAM_QDRANT_LINGER" envDefault:"100ms" help:"longest wait of points for other documents' to fill a request (0 to 1s)"`
	// Parallel is the number of upsert requests in flight; points queue
	// meanwhile, filling the next requests.
	Parallel int `env:"CHUNKSTREAM_QDRANT_PARALLEL" envDefault:"4" help:"upsert requests in flight per worker process (1 to 64)"`
	// BM25 says who computes the "bm25" sparse vector of a point: local
	// (the worker, package bm25), qdrant (Qdrant, from the chunk's text
	// sent as a Document of model qdrant/bm25; the same vectors) or off
	// (no sparse vector).
	BM25 string `env:"CHUNKSTREAM_BM25" envDefault:"local" help:"who computes the bm25 sparse vector: local (the worker), qdrant (Qdrant, the same vectors) or off"`
	// Vector names the dense vector the embedder's vectors go to (and the
	// one a reader searches by, docs/operations.md "Switching the
	// embedding model").
	Vector string `env:"CHUNKSTREAM_QDRANT_VECTOR" envDefault:"dense" help:"dense vector the embedder's vectors go to"`
	// NextVector names, during a model switch, a second dense vector the
	// next embedder's vectors go to as well (empty: none).
	NextVector string `env:"CHUNKSTREAM_QDRANT_NEXT_VECTOR" help:"during a model switch: a second dense vector, written with the next model's vectors"`
	// AvgDL is the BM25 average chunk length in tokens.
	AvgDL float64 `env:"CHUNKSTREAM_BM25_AVGDL" envDefault:"256" help:"BM25 average chunk length in tokens; the collection records it"`
}

// The values of Config.BM25.
const (
	BM25Local  = "local"
	BM25Qdrant = "qdrant"
	BM25Off    = "off"
)

// MaxLinger caps Config.Linger.
const MaxLinger = time.Second

// DefaultConfig returns the configuration the env defaults describe.
func DefaultConfig() Config {
	return Config{Addr: "localhost:6334", Timeout: 20 * time.Second, Collection: "chunks", Batch: 128, Linger: 100 * time.Millisecond,
		Parallel: 4, BM25: BM25Local, AvgDL: bm25.DefaultAvgDL, Vector: VectorDense}
}

// DocumentsInFlight is the number of documents a worker should process at
// once for its upserts to fill requests of Batch points: the requests in
// flight and the one filling, at four points a document (most documents
// hold a few chunks). A document waiting for its upsert costs memory, not
// CPU.
func (c Config) DocumentsInFlight() int {
	return (c.Parallel + 1) * c.Batch / 4
}

// Validate reports the first invalid field as a fault.FieldError
// wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &fault.FieldError{Pkg: "qdrantsink", Field: field, Problem: fmt.Sprintf(format, args...), Err: ErrInvalidConfig}
	}
	if _, _, err := splitAddr(c.Addr); err != nil {
		return bad("Addr", "%q: %v", c.Addr, err)
	}
	if c.Timeout <= 0 {
		return bad("Timeout", "%v must be positive", c.Timeout)
	}
	if c.Collection == "" {
		return bad("Collection", "is empty")
	}
	if c.Batch < MinBatch || c.Batch > MaxBatch {
		return bad("Batch", "%d out of range %d..%d", c.Batch, MinBatch, MaxBatch)
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		return bad("Linger", "%v out of range 0..%v", c.Linger, MaxLinger)
	}
	if c.BM25 != BM25Local && c.BM25 != BM25Qdrant && c.BM25 != BM25Off {
		return bad("BM25", "%q: want local, qdrant or off", c.BM25)
	}
	if c.Parallel < 1 || c.Parallel > MaxParallel {
		return bad("Parallel", "%d out of range 1..%d", c.Parallel, MaxParallel)
	}
	if !(c.AvgDL > 0) || c.AvgDL > 1e9 {
		return bad("AvgDL", "%v must be positive", c.AvgDL)
	}
	if c.TLSCA != "" && !c.TLS {
		return bad("TLSCA", "is set but TLS is false")
	}
	if c.NextVector != "" && c.NextVector == c.vector() {
		return bad("NextVector", "%q is the vector itself (CHUNKSTREAM_QDRANT_VECTOR)", c.NextVector)
	}
	if c.vector() == VectorBM25 || c.NextVector == VectorBM25 {
		return bad("Vector", "%q is the sparse vector's name", VectorBM25)
	}
	return nil
}

// LogValue logs the configuration without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.Duration("timeout", c.Timeout),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Bool("tls", c.TLS),
		slog.String("tls_ca", c.TLSCA),
		slog.String("collection", c.Collection),
		slog.Int("batch", c.Batch),
		slog.Duration("linger", c.Linger),
		slog.Int("parallel", c.Parallel),
		slog.String("bm25", c.BM25),
		slog.Float64("bm25_avgdl", c.AvgDL),
		slog.String("vector", c.vector()),
		slog.String("next_vector", c.NextVector),
	)
}

// vector is Vector, VectorDense when empty.
func (c Config) vector() string { return cmp.Or(c.Vector, VectorDense) }

func splitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		return "", 0, errors.New("missing host")
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return host, port, nil
}
