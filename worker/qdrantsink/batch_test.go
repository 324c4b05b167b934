package qdrantsink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// sharingConfig makes requests leave only when full (or after a second),
// one at a time.
func sharingConfig(srv *qdranttest.Server) Config {
	cfg := testConfig(srv)
	cfg.Linger, cfg.Parallel = MaxLinger, 1
	return cfg
}

// texts returns n chunk texts of a document.
func texts(doc string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s chunk %d", doc, i)
	}
	return out
}

// writeAll writes versions of documents at once and returns their errors
// by document id.
func writeAll(s *Sink, records *sinktest.Records, docs map[string]int) map[string]error {
	var (
		mu   sync.Mutex
		errs = map[string]error{}
		wg   sync.WaitGroup
	)
	for id, n := range docs {
		doc, chunks := sinktest.Version(id, 1, texts(id, n)...)
		records.Begin(doc.ID, doc.Seq)
		wg.Go(func() {
			err := s.Write(context.Background(), doc, chunks)
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return errs
}

// upserts returns the points of each Upsert call.
func upserts(srv *qdranttest.Server) []int {
	var sizes []int
	for _, c := range srv.Calls() {
		if c.Upserts() {
			sizes = append(sizes, c.Points)
		}
	}
	return sizes
}

// TestSharedRequests: the points of documents written at once leave in
// requests of Config.Batch points, each document whole in the end.
func TestSharedRequests(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSinkWith(t, srv, sharingConfig(srv), records)
	docs := map[string]int{}
	for i := range 8 {
		docs[fmt.Sprintf("d%d.md", i)] = 16
	}
	srv.ResetCalls()
	for id, err := range writeAll(s, records, docs) {
		if err != nil {
			t.Errorf("Write(%s) = %v", id, err)
		}
	}
	if sizes := upserts(srv); !slices.Equal(sizes, []int{64, 64}) {
		t.Errorf("upserts of 8 documents of 16 chunks at once = %v, want [64 64]", sizes)
	}
	for id, n := range docs {
		doc, chunks := sinktest.Version(id, 1, texts(id, n)...)
		got, err := reader(srv, "chunks").Chunks(context.Background(), doc.ID)
		if err != nil || !equalChunks(got, sinktest.Want(chunks)) {
			t.Errorf("%s: stored %v (%v), want its %d chunks", id, got, err, n)
		}
	}
}

// TestSharedRequestRefused: a shared request refused as invalid is sent
// again per document, so only the document at fault fails.
func TestSharedRequestRefused(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSinkWith(t, srv, sharingConfig(srv), records)
	srv.ResetCalls()
	srv.FailNext(2, codes.InvalidArgument) // the shared request and the first document's own
	errs := writeAll(s, records, map[string]int{"a.md": 32, "b.md": 32})
	var failed, ok []string
	for id, err := range errs {
		switch {
		case err == nil:
			ok = append(ok, id)
		case fault.IsPermanent(err):
			failed = append(failed, id)
		default:
			t.Errorf("Write(%s) = %v, want nil or a permanent error", id, err)
		}
	}
	if len(failed) != 1 || len(ok) != 1 {
		t.Fatalf("failed %v, written %v; want one of each", failed, ok)
	}
	if sizes := upserts(srv); !slices.Equal(sizes, []int{64, 32, 32}) {
		t.Errorf("upserts = %v, want the shared 64 and 32 per document", sizes)
	}
	if got, _ := reader(srv, "chunks").Chunks(context.Background(), ok[0]); len(got) != 32 {
		t.Errorf("%s: %d points stored, want 32", ok[0], len(got))
	}
}

// TestQueuedWriteCancelled: a Write whose context ends while its points
// wait returns at once, and they are never sent; Close ends the wait of
// the others.
func TestQueuedWriteCancelled(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	cfg := sharingConfig(srv)
	s, err := New(context.Background(), cfg, records, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	queued := func(n int) func() bool {
		return func() bool { return s.batch.Queued("chunks") == n }
	}
	srv.ResetCalls()
	ctx, cancel := context.WithCancel(context.Background())
	doc, chunks := sinktest.Version("a.md", 1, "x", "y")
	records.Begin(doc.ID, doc.Seq)
	done := make(chan error, 1)
	go func() { done <- s.Write(ctx, doc, chunks) }()
	testutil.WaitFor(t, time.Minute, "points queued", queued(2))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Write = %v, want context.Canceled", err)
	}
	if !queued(0)() {
		t.Error("a cancelled Write's points are still queued")
	}
	doc, chunks = sinktest.Version("b.md", 1, "z")
	records.Begin(doc.ID, doc.Seq)
	go func() { done <- s.Write(context.Background(), doc, chunks) }()
	testutil.WaitFor(t, time.Minute, "points queued", queued(1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, errClosed) {
		t.Errorf("Write queued at Close = %v, want errClosed", err)
	}
	if sizes := upserts(srv); len(sizes) != 0 {
		t.Errorf("upserts %v, want none", sizes)
	}
}
