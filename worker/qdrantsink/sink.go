package qdrantsink

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/internal/tracing"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/internal/grpccodec"
)

// Vector and payload names of a chunk point (docs/wire.md, "Qdrant point").
const (
	VectorBM25  = "bm25"
	VectorDense = "dense"

	FieldContent    = "content"
	FieldMetadata   = "metadata"
	FieldDocID      = "doc_id"
	FieldDocVersion = "doc_version"
	FieldIngestSeq  = "ingest_seq"
	FieldPosition   = "position"
	FieldHash       = "hash"
	FieldSpan       = "span"
	// FieldTenant holds the document's tenant; a point of a document
	// without one has no such field.
	FieldTenant = "tenant"

	// The dense vector's origin (see "Reusing vectors" in the package
	// documentation).
	FieldDenseDigest = "dense_digest"
	FieldDenseModel  = "dense_model"
	FieldDenseDims   = "dense_dims"

	// Keys inside metadata with a payload index, for filters: the code
	// chunker's language and symbol paths (a list: a match on it matches
	// any of its paths).
	FieldLanguage = FieldMetadata + ".language"
	FieldSymbols  = FieldMetadata + ".symbols"
)

// Dependencies the sink names in fault.Unavailable errors and accepts in
// Probe.
const (
	DependencyQdrant   = "qdrant"
	DependencyEmbedder = "embedder"
)

// reconnectMax is the longest wait before a broken connection to Qdrant
// is dialled again.
const reconnectMax = 5 * time.Second

// MinServerVersion is the oldest Qdrant the sink accepts: update_filter
// arrived in 1.16, and older servers silently ignore it.
const MinServerVersion = "1.16"

// Sentinel errors of the sink.
var (
	// ErrServerTooOld reports a Qdrant older than MinServerVersion.
	ErrServerTooOld = errors.New("qdrantsink: qdrant server too old (needs >= " + MinServerVersion + " for update_filter)")
	// ErrCollectionMismatch reports an existing collection whose vectors do
	// not fit the points the sink writes.
	ErrCollectionMismatch = errors.New("qdrantsink: collection vectors do not fit")
	// ErrEmbedding reports an embedder answer that does not fit the chunks
	// (count or dimension).
	ErrEmbedding = errors.New("qdrantsink: bad embedding")
	// ErrInvalidPoint reports a chunk that cannot become a Qdrant point
	// (payload value, UTF-8); it is always wrapped by fault.Permanent.
	ErrInvalidPoint = errors.New("qdrantsink: invalid point")
)

// Embedder computes dense vectors. *embed.Client implements it.
type Embedder interface {
	// Probe asks the endpoint once and returns the vector dimension.
	Probe(ctx context.Context) (int, error)
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model the vectors come from. A stored vector is
	// reused only for a text embedded by the model of the same name and
	// the same dimension.
	Model() string
}

// ReuseCounter is implemented by embedders that count the inputs they
// were not asked to embed because the sink reused a stored vector
// (*embed.Client does, in its metrics).
type ReuseCounter interface {
	Reused(n int)
}

// Step names the points between the steps of Write, for test hooks.
type Step string

// Steps of Write, reported to a test hook after they completed.
const (
	StepBegin        Step = "begin"         // about to start step 2
	StepVectorsRead  Step = "vectors_read"  // step 2: stored dense vectors read, before embedding (with an embedder only)
	StepUpserted     Step = "upserted"      // step 2 done (also reported for zero chunks)
	StepDeletedOlder Step = "deleted_older" // step 3 done
	StepRechecked    Step = "rechecked"     // step 4 done (also reported for zero chunks)
)

// Sink writes chunks into Qdrant following the processing procedure,
// steps 2 to 4 (see docs/design.md, "Why it converges"). It is safe for
// concurrent use by many goroutines.
type Sink struct {
	cfg      Config
	client   *qdrant.Client
	records  worker.Records
	embedder Embedder
	next     Embedder // the next model's, for Config.NextVector
	bm25     *bm25.Encoder
	bm25Opts map[string]*qdrant.Value // a Document's options, for Config.BM25 qdrant
	log      *slog.Logger
	batch    *batch.Batcher[item, struct{}]

	ready    atomic.Bool
	prepMu   sync.Mutex
	dims     int // dense size; 0 = no embedder or not probed yet; guarded by prepMu until ready
	nextDims int // the next model's size, likewise

	collMu   sync.Mutex
	colls    map[string]bool // collections known to fit
	tenanted map[string]bool // collections known to record MetadataTenants
	pages    map[string]int  // points per scroll, by collection (strict mode)

	// hook, when set (tests only), is called after each step of Write.
	hook func(ctx context.Context, step Step, doc worker.Doc)
}

// Option adds to what New sets up.
type Option func(*Sink)

// WithNextEmbedder gives the embedder of Config.NextVector, the next
// model's during a model switch.
func WithNextEmbedder(e Embedder) Option { return func(s *Sink) { s.next = e } }

// New connects to Qdrant, checks its version, probes the embedder (which
// may be nil: points then carry only the bm25 vector) and sets up the
// default collection (see docs/design.md, "Why it converges"). logger may be nil.
func New(ctx context.Context, cfg Config, records worker.Records, embedder Embedder, logger *slog.Logger, options ...Option) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if records == nil {
		return nil, errors.New("qdrantsink: records are required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	enc, err := bm25.NewEncoder(bm25.English, cfg.AvgDL)
	if err != nil {
		return nil, fmt.Errorf("qdrantsink: CHUNKSTREAM_BM25_AVGDL: %w", err)
	}
	docOpts, err := qdrant.TryValueMap(enc.Options())
	if err != nil {
		return nil, fmt.Errorf("qdrantsink: bm25 options: %w", err)
	}
	client, err := Dial(cfg)
	if err != nil {
		return nil, err
	}
	s := &Sink{
		cfg: cfg, client: client, records: records, embedder: embedder,
		bm25: enc, bm25Opts: docOpts, log: logger, colls: map[string]bool{}, tenanted: map[string]bool{}, pages: map[string]int{},
	}
	for _, o := range options {
		o(s)
	}
	if cfg.NextVector != "" && (s.next == nil || embedder == nil) {
		_ = client.Close()
		return nil, fmt.Errorf("%w: CHUNKSTREAM_QDRANT_NEXT_VECTOR %q needs an embedder and the next model's (CHUNKSTREAM_EMBED_NEXT_MODEL)", ErrInvalidConfig, cfg.NextVector)
	}
	if s.batch, err = s.newBatcher(); err != nil {
		_ = client.Close()
		return nil, err
	}
	if err := s.whileUnavailable(ctx, "health check", s.checkVersion); err != nil {
		_ = client.Close()
		return nil, err
	}
	if err := s.whileUnavailable(ctx, "set-up", s.prepare); err != nil {
		if errors.Is(err, errProbe) && !fault.IsPermanent(err) {
			logger.Warn("qdrantsink: embedder not answering yet; not ready", "err", err)
			return s, nil
		}
		_ = client.Close()
		return nil, err
	}
	return s, nil
}

// Dial returns a go-client of the Qdrant cfg names (address, API key,
// TLS), as the sink connects, for readers such as Search. It checks
// neither the server nor the collection.
func Dial(cfg Config) (*qdrant.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, _ := splitAddr(cfg.Addr)
	qc := &qdrant.Config{
		Host:                   host,
		Port:                   port,
		APIKey:                 cfg.APIKey,
		UseTLS:                 cfg.TLS,
		SkipCompatibilityCheck: true, // the sink checks the version itself
		// No retries in the client: a request that fails for want of Qdrant
		// is an outage, which the worker holds and probes at its own pace,
		// honouring Retry-After (the client's retries would not, and would
		// repeat every write of an outage).
		RetryConfig: nil,
		GrpcOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.ForceCodecV2(grpccodec.Codec{})),
			grpc.WithChainUnaryInterceptor(traceparent),
			// Redial within reconnectMax (docs/design.md, "Writing a version").
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectMax},
				MinConnectTimeout: 20 * time.Second,
			}),
		},
	}
	if cfg.TLSCA != "" {
		pem, err := os.ReadFile(cfg.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("qdrantsink: CHUNKSTREAM_QDRANT_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("qdrantsink: CHUNKSTREAM_QDRANT_TLS_CA %s: no PEM certificates", cfg.TLSCA)
		}
		qc.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	client, err := qdrant.NewClient(qc)
	if err != nil {
		return nil, fmt.Errorf("qdrantsink: client for %s: %w", cfg.Addr, err)
	}
	return client, nil
}

// traceparent sends the trace context of the call's span (W3C
// "traceparent" and "tracestate") as gRPC metadata, which Qdrant's audit
// log records; nothing when tracing is off.
func traceparent(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	md := metadata.MD{}
	tracing.Inject(ctx, md)
	for k, v := range md {
		ctx = metadata.AppendToOutgoingContext(ctx, k, v[0])
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// Close ends the upsert requests in flight and closes the connections to
// Qdrant.
func (s *Sink) Close() error {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.batch.Close(ended) // nothing more is sent: cancel what is in flight
	return s.client.Close()
}

// Ready reports whether the sink can write: the embedder (if any) answered
// its probe and the default collection fits. When not ready yet it tries
// once more within ctx.
func (s *Sink) Ready(ctx context.Context) bool {
	if s.ready.Load() {
		return true
	}
	return s.prepare(ctx) == nil
}

func (s *Sink) checkVersion(ctx context.Context) error {
	cctx, cancel := s.callCtx(ctx)
	r, err := s.client.HealthCheck(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("qdrantsink: health check %s: %w", s.cfg.Addr, err)
	}
	v, err := qdrant.ParseVersion(r.GetVersion())
	if err != nil {
		return fmt.Errorf("qdrantsink: server version %q: %w", r.GetVersion(), err)
	}
	if v.Major < 1 || v.Major == 1 && v.Minor < 16 {
		return fmt.Errorf("%w: server at %s is %s", ErrServerTooOld, s.cfg.Addr, r.GetVersion())
	}
	s.log.Info("qdrantsink: connected", "addr", s.cfg.Addr, "version", r.GetVersion())
	return nil
}

// whileUnavailable runs step until it succeeds, fails for another reason
// than an outage, or ctx (the start-up deadline) ends, returning the last
// error: a worker started while Qdrant is still starting waits for it. The
// wait doubles from 100 ms to 2 s.
func (s *Sink) whileUnavailable(ctx context.Context, what string, step func(context.Context) error) error {
	wait := 100 * time.Millisecond
	for logged := false; ; {
		err := step(ctx)
		if err == nil || !fault.IsUnavailable(classify(what, err)) || errors.Is(err, errProbe) {
			return err
		}
		if !logged {
			s.log.Warn("qdrantsink: waiting for Qdrant at start", "addr", s.cfg.Addr, "err", err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

var errProbe = errors.New("qdrantsink: embedder probe")

// prepare probes the embedder and sets up the default collection, once.
func (s *Sink) prepare(ctx context.Context) error {
	if s.ready.Load() {
		return nil
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.ready.Load() {
		return nil
	}
	if s.embedder != nil && s.dims == 0 {
		d, err := s.embedder.Probe(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", errProbe, err)
		}
		if d <= 0 {
			return fault.Permanent(fmt.Errorf("%w: dimension %d", errProbe, d))
		}
		s.dims = d
	}
	if s.next != nil && s.nextDims == 0 {
		d, err := s.next.Probe(ctx)
		if err != nil {
			return fmt.Errorf("%w (next model): %w", errProbe, err)
		}
		if d <= 0 {
			return fault.Permanent(fmt.Errorf("%w (next model): dimension %d", errProbe, d))
		}
		s.nextDims = d
	}
	if err := s.ensureCollection(ctx, s.cfg.Collection); err != nil {
		return err
	}
	s.ready.Store(true)
	return nil
}

// ensureCollection creates the collection with its payload indexes when
// missing and checks that it fits; the answer is cached per collection.
func (s *Sink) ensureCollection(ctx context.Context, name string) error {
	s.collMu.Lock()
	ok := s.colls[name]
	s.collMu.Unlock()
	if ok {
		return nil
	}
	exists, err := s.collectionExists(ctx, name)
	if err != nil {
		return classify(fmt.Sprintf("collection %q exists", name), err)
	}
	if !exists {
		cctx, cancel := s.callCtx(ctx)
		err := s.client.CreateCollection(cctx, s.collectionSpec(name))
		cancel()
		if err != nil {
			// Another worker may have created it meanwhile.
			if again, err2 := s.collectionExists(ctx, name); err2 != nil || !again {
				return classify(fmt.Sprintf("create collection %q", name), err)
			}
		} else {
			s.log.Info("qdrantsink: created collection", "collection", name, "dense", s.dims)
		}
	}
	cctx, cancel := s.callCtx(ctx)
	info, err := s.client.GetCollectionInfo(cctx, name)
	cancel()
	if err != nil {
		return classify(fmt.Sprintf("collection %q info", name), err)
	}
	if err := s.fits(info); err != nil {
		return fmt.Errorf("%w: collection %q: %w", ErrCollectionMismatch, name, err)
	}
	if err := s.applyStrictMode(name, info.GetConfig().GetStrictModeConfig()); err != nil {
		return err
	}
	if err := s.checkEncoding(ctx, name, info); err != nil {
		return err
	}
	if err := s.ensureIndexes(ctx, name, info); err != nil {
		return err
	}
	s.collMu.Lock()
	s.colls[name] = true
	if info.GetConfig().GetMetadata()[MetadataTenants].GetBoolValue() {
		s.tenanted[name] = true
	}
	s.collMu.Unlock()
	return nil
}

// callCtx returns the context of one request to Qdrant: ctx bounded by
// Config.Timeout.
func (s *Sink) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

func (s *Sink) collectionExists(ctx context.Context, name string) (bool, error) {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	return s.client.CollectionExists(cctx, name)
}

func (s *Sink) collectionSpec(name string) *qdrant.CreateCollection {
	cc := &qdrant.CreateCollection{
		CollectionName: name,
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			VectorBM25: {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
		Metadata: map[string]*qdrant.Value{MetadataEncoding: qdrant.NewValueString(s.Encoding())},
	}
	if s.dims > 0 {
		vp := map[string]*qdrant.VectorParams{s.cfg.vector(): {Size: uint64(s.dims), Distance: qdrant.Distance_Cosine}}
		if s.next != nil {
			vp[s.cfg.NextVector] = &qdrant.VectorParams{Size: uint64(s.nextDims), Distance: qdrant.Distance_Cosine}
		}
		cc.VectorsConfig = qdrant.NewVectorsConfigMap(vp)
	}
	return cc
}

// fits checks an existing collection against the points the sink writes.
func (s *Sink) fits(info *qdrant.CollectionInfo) error {
	params := info.GetConfig().GetParams()
	sp, ok := params.GetSparseVectorsConfig().GetMap()[VectorBM25]
	if !ok {
		return fmt.Errorf("no sparse vector %q", VectorBM25)
	}
	if sp.GetModifier() != qdrant.Modifier_Idf {
		return fmt.Errorf("sparse vector %q has modifier %v, want Idf", VectorBM25, sp.GetModifier())
	}
	if _, unnamed := params.GetVectorsConfig().GetConfig().(*qdrant.VectorsConfig_Params); unnamed {
		return errors.New("has an unnamed dense vector; points carry named vectors only")
	}
	if s.dims == 0 {
		return nil
	}
	if err := fitsDense(params, s.cfg.vector(), s.dims); err != nil {
		return err
	}
	if s.next != nil {
		if err := fitsDense(params, s.cfg.NextVector, s.nextDims); err != nil {
			return fmt.Errorf("%w (CHUNKSTREAM_QDRANT_NEXT_VECTOR: `producer reembed -vector %s` creates it)", err, s.cfg.NextVector)
		}
	}
	return nil
}

// fitsDense checks that the collection has the dense vector name, of dims
// and cosine distance.
func fitsDense(params *qdrant.CollectionParams, name string, dims int) error {
	dp, ok := params.GetVectorsConfig().GetParamsMap().GetMap()[name]
	if !ok {
		return fmt.Errorf("no dense vector %q", name)
	}
	if dp.GetSize() != uint64(dims) {
		return fmt.Errorf("dense vector %q has size %d, the embedder gives %d", name, dp.GetSize(), dims)
	}
	if dp.GetDistance() != qdrant.Distance_Cosine {
		return fmt.Errorf("dense vector %q has distance %v, want Cosine", name, dp.GetDistance())
	}
	return nil
}

func strong() *qdrant.WriteOrdering {
	return &qdrant.WriteOrdering{Type: qdrant.WriteOrderingType_Strong}
}

// Write stores one document version by steps 2 to 4 of the package
// documentation, which shows why every interleaving converges.
func (s *Sink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if doc.ID == "" {
		return fault.Permanent(errors.New("qdrantsink: document without id"))
	}
	if doc.Op == worker.OpDelete && len(chunks) > 0 {
		return fault.Permanent(fmt.Errorf("qdrantsink: delete of %q with %d chunks", doc.ID, len(chunks)))
	}
	if doc.Seq > 1<<53 {
		return fault.Permanent(fmt.Errorf("qdrantsink: ingest_seq %d too large for a payload range filter", doc.Seq))
	}
	if !utf8.ValidString(doc.ID) || !utf8.ValidString(doc.Collection) {
		return fault.Permanent(fmt.Errorf("%w: document id or collection is not valid UTF-8", ErrInvalidPoint))
	}
	coll, err := s.collection(ctx, doc)
	if err != nil {
		if errors.Is(err, ErrCollectionMismatch) {
			return fault.Permanent(err)
		}
		return err
	}
	if doc.Tenant != "" {
		if err := s.markTenanted(ctx, coll); err != nil {
			return err
		}
	}
	s.step(ctx, StepBegin, doc)
	if len(chunks) > 0 {
		points, err := s.points(ctx, coll, doc, chunks)
		if err == nil {
			err = s.upsert(ctx, coll, doc, points)
		}
		if err != nil {
			return err
		}
	}
	s.step(ctx, StepUpserted, doc)
	// With chunks, the upserts' last request deleted the older points
	// after them (sendShared); without, only step 3 remains.
	if len(chunks) == 0 && !doc.First { // "First versions" in docs/design.md, "Why it converges"
		if err := s.deleteWhere(ctx, coll, olderPoints(doc)); err != nil {
			return err
		}
	}
	s.step(ctx, StepDeletedOlder, doc)
	if len(chunks) == 0 {
		s.step(ctx, StepRechecked, doc) // nothing of this version to take back
		return nil
	}
	newest, err := s.records.NewestSeq(ctx, doc.RecordID(), coll)
	if err != nil {
		return fmt.Errorf("qdrantsink: re-read record of %q: %w", doc.ID, err)
	}
	if newest > doc.Seq {
		if err := s.deleteWhere(ctx, coll, ownPoints(doc)); err != nil {
			return err
		}
		s.log.Debug("qdrantsink: overtaken; removed own points", "doc_id", doc.ID, "ingest_seq", doc.Seq, "newest_seq", newest)
	}
	s.step(ctx, StepRechecked, doc)
	return nil
}

// Superseded removes the points a superseded version of a document may
// have left: those with doc_id = doc.ID and ingest_seq = doc.Seq (see
// "Interrupted versions" in docs/design.md, "Why it converges"). It is idempotent
// and cheap (one filtered delete).
func (s *Sink) Superseded(ctx context.Context, doc worker.Doc) error {
	if doc.ID == "" || !utf8.ValidString(doc.ID) || !utf8.ValidString(doc.Collection) || doc.Seq > 1<<53 {
		return nil // it cannot have written anything
	}
	coll, err := s.collection(ctx, doc)
	if err != nil {
		if errors.Is(err, ErrCollectionMismatch) {
			return nil // nothing was ever written there
		}
		return err
	}
	return s.deleteWhere(ctx, coll, ownPoints(doc))
}

// notReady classifies a set-up failure met by a write: the deployment's
// fault, never the message's, so an outage of Qdrant or of the embedder
// whatever the cause (a permanent mark inside must not leak out, hence
// %v), unless ctx itself ended.
func notReady(ctx context.Context, err error) error {
	out := fmt.Errorf("qdrantsink: not ready: %v", err)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", out, ctx.Err())
	}
	dep := DependencyQdrant
	if errors.Is(err, errProbe) {
		dep = DependencyEmbedder
	}
	if d, ok := fault.RetryDelay(err); ok {
		out = fault.RetryAfter(out, d)
	}
	return fault.Unavailable(dep, out)
}

// Probe implements worker.ProbeSink: a health check and a listing of the
// default collection (a missing one is forgotten, so the next write
// creates it again) for DependencyQdrant, one probe for DependencyEmbedder.
func (s *Sink) Probe(ctx context.Context, dependency string) error {
	switch dependency {
	case DependencyQdrant:
		cctx, cancel := s.callCtx(ctx)
		_, err := s.client.HealthCheck(cctx)
		cancel()
		if err != nil {
			return classify("health check", err)
		}
		exists, err := s.collectionExists(ctx, s.cfg.Collection)
		if err != nil {
			return classify(fmt.Sprintf("collection %q exists", s.cfg.Collection), err)
		}
		if !exists {
			s.forget(s.cfg.Collection)
		}
	case DependencyEmbedder:
		if s.embedder != nil {
			if _, err := s.embedder.Probe(ctx); err != nil {
				return fmt.Errorf("qdrantsink: embedder probe: %w", err)
			}
		}
		if s.next != nil {
			if _, err := s.next.Probe(ctx); err != nil {
				return fmt.Errorf("qdrantsink: next model's embedder probe: %w", err)
			}
		}
	}
	return nil
}

// Target names the collection doc goes to (worker.TargetSink): its own
// collection, or the sink's default.
func (s *Sink) Target(doc worker.Doc) string {
	if doc.Collection == "" {
		return s.cfg.Collection
	}
	return doc.Collection
}

// collection sets the sink up and returns the collection doc goes to, the
// default one unless it names another, which is created or checked first
// (a misfit wraps ErrCollectionMismatch).
func (s *Sink) collection(ctx context.Context, doc worker.Doc) (string, error) {
	if err := s.prepare(ctx); err != nil {
		return "", notReady(ctx, err)
	}
	if doc.Collection == "" {
		return s.cfg.Collection, nil
	}
	if err := s.ensureCollection(ctx, doc.Collection); err != nil {
		return "", err
	}
	return doc.Collection, nil
}

// olderPoints selects the points of doc's document older than its
// version; it is also the update_filter of its upserts.
func olderPoints(doc worker.Doc) *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewMatchKeyword(FieldDocID, doc.ID),
		tenantOf(doc),
		qdrant.NewRange(FieldIngestSeq, &qdrant.Range{Lt: qdrant.PtrOf(float64(doc.Seq))}),
	}}
}

// ownPoints selects the points of exactly doc's version.
func ownPoints(doc worker.Doc) *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewMatchKeyword(FieldDocID, doc.ID),
		tenantOf(doc),
		qdrant.NewMatchInt(FieldIngestSeq, int64(doc.Seq)),
	}}
}

// tenantOf selects the points of doc's tenant: tenant = T, or for a
// document without one the points without a tenant, so that no write of
// a document touches another tenant's document of the same id.
func tenantOf(doc worker.Doc) *qdrant.Condition { return tenantIs(doc.Tenant) }

// tenantIs selects the points of tenant, or for "" the points without one.
func tenantIs(tenant string) *qdrant.Condition {
	if tenant == "" {
		return qdrant.NewIsEmpty(FieldTenant)
	}
	return qdrant.NewMatchKeyword(FieldTenant, tenant)
}

func (s *Sink) step(ctx context.Context, step Step, doc worker.Doc) {
	if s.hook != nil {
		s.hook(ctx, step, doc)
	}
}

func (s *Sink) deleteWhere(ctx context.Context, coll string, f *qdrant.Filter) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.Delete(ctx, &qdrant.DeletePoints{
		CollectionName: coll,
		Wait:           qdrant.PtrOf(true),
		Ordering:       strong(),
		Points:         qdrant.NewPointsSelectorFilter(f),
	})
	if err != nil {
		return s.classifyWrite(coll, "delete", err)
	}
	return nil
}

// points builds the points of a document version: payload, bm25 and,
// with an embedder, dense vectors.
func (s *Sink) points(ctx context.Context, coll string, doc worker.Doc, chunks []worker.Chunk) ([]*qdrant.PointStruct, error) {
	var (
		dense, next [][]float32
		digests     []string
	)
	if s.embedder != nil {
		var err error
		if dense, digests, err = s.dense(ctx, coll, doc, chunks); err != nil {
			return nil, err
		}
	}
	if s.next != nil {
		var err error
		if next, err = s.nextVectors(ctx, doc, chunks); err != nil {
			return nil, err
		}
	}
	points := make([]*qdrant.PointStruct, len(chunks))
	for i, c := range chunks {
		p, err := s.point(doc, c)
		if err != nil {
			return nil, fault.Permanent(fmt.Errorf("%w: %q chunk %d: %w", ErrInvalidPoint, doc.ID, c.Position, err))
		}
		if dense != nil {
			if len(dense[i]) != s.dims {
				// The embedder serves another model than the collection's:
				// the deployment's fault, so the worker pauses.
				return nil, fault.Unavailable(DependencyEmbedder, fmt.Errorf("%w: vector of size %d, want the collection's %d", ErrEmbedding, len(dense[i]), s.dims))
			}
			p.GetVectors().GetVectors().GetVectors()[s.cfg.vector()] = qdrant.NewVectorDense(dense[i])
			p.Payload[FieldDenseDigest] = qdrant.NewValueString(digests[i])
			p.Payload[FieldDenseModel] = qdrant.NewValueString(s.embedder.Model())
			p.Payload[FieldDenseDims] = qdrant.NewValueInt(int64(s.dims))
		}
		if next != nil {
			p.GetVectors().GetVectors().GetVectors()[s.cfg.NextVector] = qdrant.NewVectorDense(next[i])
		}
		points[i] = p
	}
	return points, nil
}

// dense returns the dense vector of each chunk and the digest of its
// text, reusing stored vectors ("Reusing vectors" in the package
// documentation) and embedding each other distinct text once.
func (s *Sink) dense(ctx context.Context, coll string, doc worker.Doc, chunks []worker.Chunk) ([][]float32, []string, error) {
	digests := make([]string, len(chunks))
	for i, c := range chunks {
		sum := sha256.Sum256([]byte(c.Chunk.Content()))
		digests[i] = hex.EncodeToString(sum[:])
	}
	// The first version of a document has no stored points to reuse.
	var (
		known map[string][]float32
		err   error
	)
	if !doc.First {
		if known, err = s.storedVectors(ctx, coll, doc, digests); err != nil {
			return nil, nil, err
		}
	}
	s.step(ctx, StepVectorsRead, doc)
	var (
		texts []string
		slot  = map[string]int{} // digest → index in texts
	)
	for i, d := range digests {
		if _, ok := known[d]; ok {
			continue
		}
		if _, ok := slot[d]; !ok {
			slot[d] = len(texts)
			texts = append(texts, chunks[i].Chunk.Content())
		}
	}
	var vecs [][]float32
	if len(texts) > 0 {
		vecs, err = s.embedder.Embed(ctx, texts)
		if err != nil {
			err = fmt.Errorf("qdrantsink: embed %q: %w", doc.ID, err)
			if fault.IsUnavailable(err) {
				// Named so that Probe is asked about the embedder.
				err = fault.Unavailable(DependencyEmbedder, err)
			}
			return nil, nil, err
		}
		if len(vecs) != len(texts) {
			return nil, nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vecs), len(texts))
		}
	}
	if rc, ok := s.embedder.(ReuseCounter); ok {
		rc.Reused(len(chunks) - len(texts))
	}
	dense := make([][]float32, len(chunks))
	for i, d := range digests {
		if v, ok := known[d]; ok {
			dense[i] = v
		} else {
			dense[i] = vecs[slot[d]]
		}
	}
	return dense, digests, nil
}

// scrollPage is the number of points read per request by storedVectors.
const scrollPage = 256

// storedVectors reads the dense vectors of the document's points, of any
// version, whose text digest is among digests and whose model and
// dimension are the embedder's, by digest ("Reusing vectors" in
// docs/design.md says why it filters by doc_id alone).
func (s *Sink) storedVectors(ctx context.Context, coll string, doc worker.Doc, digests []string) (map[string][]float32, error) {
	want := make(map[string]bool, len(digests))
	for _, d := range digests {
		want[d] = true
	}
	model := s.embedder.Model()
	known := map[string][]float32{}
	var offset *qdrant.PointId
	for {
		cctx, cancel := s.callCtx(ctx)
		pts, next, err := s.client.ScrollAndOffset(cctx, &qdrant.ScrollPoints{
			CollectionName: coll,
			Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(FieldDocID, doc.ID), tenantOf(doc)}},
			Offset:         offset,
			Limit:          qdrant.PtrOf(uint32(s.page(coll))),
			WithPayload:    qdrant.NewWithPayloadInclude(FieldDenseDigest, FieldDenseModel, FieldDenseDims),
			WithVectors:    qdrant.NewWithVectorsInclude(s.cfg.vector()),
		})
		cancel()
		if err != nil {
			return nil, s.classifyWrite(coll, "read stored vectors", err)
		}
		for _, p := range pts {
			pl := p.GetPayload()
			d := pl[FieldDenseDigest].GetStringValue()
			v := p.GetVectors().GetVectors().GetVectors()[s.cfg.vector()].GetDense().GetData()
			if want[d] && pl[FieldDenseModel].GetStringValue() == model &&
				pl[FieldDenseDims].GetIntegerValue() == int64(s.dims) && len(v) == s.dims {
				known[d] = v
			}
		}
		if next == nil || len(pts) == 0 {
			return known, nil
		}
		offset = next
	}
}

// point builds one point with its payload and bm25 vector.
func (s *Sink) point(doc worker.Doc, c worker.Chunk) (*qdrant.PointStruct, error) {
	md, err := plainMetadata(c.Chunk.Metadata())
	if err != nil {
		return nil, err
	}
	fields := map[string]any{
		FieldContent:    c.Chunk.Content(),
		FieldMetadata:   md,
		FieldDocID:      doc.ID,
		FieldDocVersion: doc.Version,
		FieldIngestSeq:  int64(doc.Seq),
		FieldPosition:   int64(c.Position),
		FieldHash:       c.Chunk.Hash(),
	}
	if doc.Tenant != "" {
		fields[FieldTenant] = doc.Tenant
	}
	if sp := c.Chunk.Span(); !sp.IsZero() {
		if fields[FieldSpan], err = plainMetadata(sp.Fields()); err != nil {
			return nil, err
		}
	}
	payload, err := qdrant.TryValueMap(fields)
	if err != nil {
		return nil, err
	}
	vectors := map[string]*qdrant.Vector{}
	if v := s.sparse(c.Chunk.Content()); v != nil {
		vectors[VectorBM25] = v
	}
	return &qdrant.PointStruct{Id: qdrant.NewID(c.ID), Payload: payload, Vectors: qdrant.NewVectorsMap(vectors)}, nil
}

// plainMetadata converts chunk metadata into the types TryValueMap takes.
func plainMetadata(md chunking.Metadata) (map[string]any, error) {
	out := make(map[string]any, len(md))
	for _, f := range md {
		v, err := plainValue(f.Value)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", f.Key, err)
		}
		out[f.Key] = v // a later duplicate key wins, as in chunking.Metadata.Map
	}
	return out, nil
}

// plainValue converts a metadata value of chunking's closed set.
func plainValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int, float64:
		return v, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
		return nil, tooBig(x)
	case *big.Int:
		if x != nil && x.IsInt64() {
			return x.Int64(), nil
		}
		if x != nil {
			return nil, tooBig(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			pv, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = pv
		}
		return out, nil
	case chunking.Metadata:
		return plainMetadata(x)
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// tooBig is the error for an integer that a Qdrant payload cannot hold:
// payload integers are 64-bit, and storing it as a float would change it.
func tooBig(n any) error {
	return fmt.Errorf("integer %v does not fit in a Qdrant payload's 64-bit integers (send it as a string to keep it exactly)", n)
}

// upsertBatch sends one upsert request with wait=true, strong ordering
// and filter as its update_filter.
func (s *Sink) upsertBatch(ctx context.Context, coll string, filter *qdrant.Filter, points []*qdrant.PointStruct) error {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.Upsert(cctx, &qdrant.UpsertPoints{
		CollectionName: coll,
		Wait:           qdrant.PtrOf(true),
		Ordering:       strong(),
		Points:         points,
		UpdateFilter:   filter,
	})
	if err != nil {
		return s.classifyWrite(coll, "upsert", err)
	}
	return nil
}

// classifyWrite classifies a write error and forgets the collection when
// Qdrant no longer knows it, so the next write re-creates it.
func (s *Sink) classifyWrite(coll, op string, err error) error {
	if status.Code(err) == codes.NotFound {
		s.forget(coll)
	}
	return classify(fmt.Sprintf("%s in %q", op, coll), err)
}

// forget drops a collection from the cache (and makes the sink not ready
// when it is the default one), so the next write sets it up again.
func (s *Sink) forget(coll string) {
	s.collMu.Lock()
	known := s.colls[coll]
	delete(s.colls, coll)
	delete(s.tenanted, coll)
	s.collMu.Unlock()
	if known {
		// The points went with it, while the document records still say
		// done: nothing here can bring them back.
		s.log.Error("qdrantsink: collection is gone: it is created again empty at the next write; its documents' records still say done, so backfills skip them: send them again with producer -force",
			"collection", coll)
	}
	if coll == s.cfg.Collection {
		s.ready.Store(false)
	}
}

// classify maps a Qdrant error to the worker's policy, as the package
// documentation's "Writing a version" lists it.
func classify(what string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("qdrantsink: %s: %w", what, err)
	code := status.Code(err)
	if errors.Is(err, context.Canceled) || code == codes.Canceled {
		return wrapped
	}
	var re *qdrant.QdrantResourceExhaustedError
	if errors.As(err, &re) {
		wait := time.Duration(max(re.RetryAfterS, 0)) * time.Second
		return fault.Unavailable(DependencyQdrant, fault.RetryAfter(wrapped, wait))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fault.Unavailable(DependencyQdrant, wrapped)
	}
	switch code {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.AlreadyExists:
		return fault.Permanent(wrapped)
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return fault.Unavailable(DependencyQdrant, wrapped)
	}
	return wrapped
}

// nextVectors returns the next model's vector of each chunk during a
// model switch, embedding each distinct text once (they are not reused:
// the switch lasts until the cut-over).
func (s *Sink) nextVectors(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) ([][]float32, error) {
	var texts []string
	slot := map[string]int{}
	for _, c := range chunks {
		if _, ok := slot[c.Chunk.Content()]; !ok {
			slot[c.Chunk.Content()] = len(texts)
			texts = append(texts, c.Chunk.Content())
		}
	}
	vecs, err := s.next.Embed(ctx, texts)
	if err != nil {
		err = fmt.Errorf("qdrantsink: embed %q with the next model: %w", doc.ID, err)
		if fault.IsUnavailable(err) {
			err = fault.Unavailable(DependencyEmbedder, err)
		}
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors of the next model for %d texts", ErrEmbedding, len(vecs), len(texts))
	}
	out := make([][]float32, len(chunks))
	for i, c := range chunks {
		v := vecs[slot[c.Chunk.Content()]]
		if len(v) != s.nextDims {
			return nil, fault.Unavailable(DependencyEmbedder, fmt.Errorf("%w: next model's vector of size %d, want the collection's %d", ErrEmbedding, len(v), s.nextDims))
		}
		out[i] = v
	}
	return out, nil
}
