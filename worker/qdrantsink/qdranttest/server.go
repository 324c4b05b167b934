package qdranttest

import (
	"context"
	"fmt"
	"net"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/internal/grpccodec"
)

// DefaultVersion is the version HealthCheck reports unless SetVersion
// changes it.
const DefaultVersion = "1.16.2"

// Server is a running in-process Qdrant double listening on 127.0.0.1. It is
// safe for concurrent use.
type Server struct {
	qdrant.UnimplementedQdrantServer

	lis  net.Listener
	grpc *grpc.Server

	mu          sync.Mutex
	version     string
	collections map[string]*collection
	aliases     map[string]string // alias → collection
	unavailable bool
	unavailTill time.Time
	failNext    int
	failCode    codes.Code
	hung        chan struct{} // non-nil while hung; closed by Release
	calls       []Call
	encoders    map[string]*bm25.Encoder // server-side BM25, by language and avg_len
}

// Call is one recorded RPC.
type Call struct {
	// Method is the short method name, for example "Upsert".
	Method string
	// Collection is the collection named in the request, if any.
	Collection string
	// Wait is the request's wait flag (write calls only).
	Wait bool
	// Ordering is the request's write ordering (write calls only; Weak when
	// absent, as in Qdrant).
	Ordering qdrant.WriteOrderingType
	// Points is the number of points in an Upsert, or in the upserts of
	// an UpdateBatch.
	Points int
	// HasUpdateFilter tells whether an Upsert (or every upsert of an
	// UpdateBatch) carried an update_filter.
	HasUpdateFilter bool
	// Operations are the kinds of an UpdateBatch's operations, in order:
	// "upsert", "delete", "update_vectors" or "other".
	Operations []string
	// Traceparent is the W3C trace context the call carried in its
	// metadata, empty without one.
	Traceparent string
	// Err is the code returned, codes.OK on success.
	Err codes.Code
}

// Upserts reports whether the call upserted points: an Upsert, or an
// UpdateBatch with an upsert among its operations (Points counts them).
func (c Call) Upserts() bool {
	return c.Method == "Upsert" || c.Method == "UpdateBatch" && slices.Contains(c.Operations, "upsert")
}

// Start starts a server on 127.0.0.1 with a free port and stops it when the
// test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatalf("qdranttest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// New starts a server on 127.0.0.1 with a free port. Stop it with Stop.
func New() (*Server, error) {
	s := &Server{version: DefaultVersion, collections: make(map[string]*collection)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.lis = lis
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.intercept), grpc.MaxRecvMsgSize(32<<20), grpc.ForceServerCodecV2(grpccodec.Codec{}))
	qdrant.RegisterQdrantServer(s.grpc, s)
	qdrant.RegisterCollectionsServer(s.grpc, &collectionsServer{s: s})
	qdrant.RegisterPointsServer(s.grpc, &pointsServer{s: s})
	go func() { _ = s.grpc.Serve(lis) }()
	return s, nil
}

// Stop stops the server, closing open connections.
func (s *Server) Stop() { s.grpc.Stop() }

// Addr returns the server's "host:port".
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Host returns the server's host, for qdrant.Config.
func (s *Server) Host() string { return s.lis.Addr().(*net.TCPAddr).IP.String() }

// Port returns the server's port, for qdrant.Config.
func (s *Server) Port() int { return s.lis.Addr().(*net.TCPAddr).Port }

// Client returns a go-client connected to the server, closed when the test
// ends.
func (s *Server) Client(tb testing.TB) *qdrant.Client {
	tb.Helper()
	return Remote{Addr: s.Addr()}.Client(tb)
}

// SetVersion changes the version HealthCheck reports.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// currentVersion returns the version HealthCheck reports.
func (s *Server) currentVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// SetUnavailable makes every call fail with Unavailable while on is true.
func (s *Server) SetUnavailable(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable = on
	s.unavailTill = time.Time{}
}

// UnavailableFor makes every call fail with Unavailable for d from now.
func (s *Server) UnavailableFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailTill = time.Now().Add(d)
}

// Hang makes every call from now on wait until Release, as a server whose
// process was stopped (SIGSTOP): nothing answers, and a client sees its
// deadline pass (DeadlineExceeded) or waits for as long as it has no
// deadline. Calls already running finish. Hanging twice is one hang.
func (s *Server) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung == nil {
		s.hung = make(chan struct{})
	}
}

// Release ends a Hang: the waiting calls and every later one proceed.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung != nil {
		close(s.hung)
		s.hung = nil
	}
}

// FailNext makes the next n calls fail with code.
func (s *Server) FailNext(n int, code codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext, s.failCode = n, code
}

// Calls returns the calls recorded so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ResetCalls forgets the recorded calls.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// Points returns a copy of every point of a collection, ordered as Scroll
// orders them, or nil when the collection does not exist.
func (s *Server) Points(collectionName string) []*qdrant.RetrievedPoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.collections[collectionName]
	if c == nil {
		return nil
	}
	var out []*qdrant.RetrievedPoint
	for _, p := range c.matching(nil) {
		out = append(out, p.retrieved(allPayload, allVectors))
	}
	return out
}

// intercept records calls and injects failures.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	call := describe(info.FullMethod, req)
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("traceparent")) > 0 {
		call.Traceparent = md.Get("traceparent")[0]
	}
	resp, err := s.handle(ctx, req, h)
	call.Err = status.Code(err)
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	return resp, err
}

// handle runs h unless the server hangs or a failure is injected.
func (s *Server) handle(ctx context.Context, req any, h grpc.UnaryHandler) (any, error) {
	s.mu.Lock()
	hung := s.hung
	s.mu.Unlock()
	if hung != nil {
		select {
		case <-hung:
		case <-ctx.Done():
			// The client gave up; it sees its own deadline or cancellation.
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	s.mu.Lock()
	var inject error
	switch {
	case s.unavailable || time.Now().Before(s.unavailTill):
		inject = status.Error(codes.Unavailable, "qdranttest: unavailable")
	case s.failNext > 0:
		s.failNext--
		inject = status.Error(s.failCode, "qdranttest: injected failure")
	}
	s.mu.Unlock()
	if inject != nil {
		return nil, inject
	}
	return h(ctx, req)
}

func describe(fullMethod string, req any) Call {
	c := Call{Method: path.Base(fullMethod)}
	if r, ok := req.(interface{ GetCollectionName() string }); ok {
		c.Collection = r.GetCollectionName()
	}
	if r, ok := req.(interface{ GetWait() bool }); ok {
		c.Wait = r.GetWait()
	}
	if r, ok := req.(interface{ GetOrdering() *qdrant.WriteOrdering }); ok {
		c.Ordering = r.GetOrdering().GetType()
	}
	if r, ok := req.(*qdrant.UpsertPoints); ok {
		c.Points = len(r.GetPoints())
		c.HasUpdateFilter = r.UpdateFilter != nil
	}
	if r, ok := req.(*qdrant.UpdateBatchPoints); ok {
		c.HasUpdateFilter = true
		for _, op := range r.GetOperations() {
			switch o := op.GetOperation().(type) {
			case *qdrant.PointsUpdateOperation_Upsert:
				c.Operations = append(c.Operations, "upsert")
				c.Points += len(o.Upsert.GetPoints())
				c.HasUpdateFilter = c.HasUpdateFilter && o.Upsert.UpdateFilter != nil
			case *qdrant.PointsUpdateOperation_DeletePoints_:
				c.Operations = append(c.Operations, "delete")
			case *qdrant.PointsUpdateOperation_UpdateVectors_:
				c.Operations = append(c.Operations, "update_vectors")
			default:
				c.Operations = append(c.Operations, "other")
			}
		}
	}
	return c
}

// HealthCheck reports the configured version.
func (s *Server) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &qdrant.HealthCheckReply{Title: "qdrant - vector search engine (qdranttest)", Version: s.version}, nil
}

// collectionLocked returns the collection name or an alias names, or
// Qdrant's NotFound error. s.mu must be held.
func (s *Server) collectionLocked(name string) (*collection, error) {
	c := s.collections[name]
	if target, ok := s.aliases[name]; ok && c == nil {
		c = s.collections[target]
	}
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
	}
	return c, nil
}

// withCollection runs f, with s.mu held, on the collection
// collectionLocked finds.
func withCollection[R any](s *Server, name string, f func(*collection) (R, error)) (R, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionLocked(name)
	if err != nil {
		var zero R
		return zero, err
	}
	return f(c)
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "Wrong input: "+format, args...)
}
