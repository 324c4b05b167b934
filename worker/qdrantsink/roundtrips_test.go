package qdrantsink

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// writes counts the write requests among calls and the operations of the
// batch updates.
func writes(calls []qdranttest.Call) (n int, ops [][]string) {
	for _, c := range calls {
		switch c.Method {
		case "Upsert", "Delete", "UpdateVectors":
			n++
			ops = append(ops, []string{c.Method})
		case "UpdateBatch":
			n++
			ops = append(ops, c.Operations)
		}
	}
	return n, ops
}

// TestOneWritePerVersion counts the write requests of a document version:
// one (it was two: the upserts, then the delete of older points). A first
// version is one upsert; a later one is one batch update that upserts its
// points and then deletes the older ones; versions written at once share
// their requests, so they cost fewer than one each.
func TestOneWritePerVersion(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	ctx := context.Background()
	const docs, versions = 5, 3
	for v := range versions {
		for d := range docs {
			id := fmt.Sprintf("d%d.md", d)
			doc, chunks := sinktest.Version(id, uint64(1+v*docs+d), fmt.Sprintf("%s v%d a", id, v), fmt.Sprintf("%s v%d b", id, v))
			doc.First = v == 0
			records.Begin(doc.ID, doc.Seq)
			srv.ResetCalls()
			if err := s.Write(ctx, doc, chunks); err != nil {
				t.Fatal(err)
			}
			n, ops := writes(srv.Calls())
			want := [][]string{{"upsert", "delete"}}
			if v == 0 {
				want = [][]string{{"Upsert"}}
			}
			if n != 1 || fmt.Sprint(ops) != fmt.Sprint(want) {
				t.Fatalf("version %d of %s: %d writes %v, want 1: %v", v, id, n, ops, want)
			}
		}
	}
	// Versions written at once share the requests.
	srv.ResetCalls()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for d := range docs {
		id := fmt.Sprintf("d%d.md", d)
		doc, chunks := sinktest.Version(id, uint64(1+versions*docs+d), id+" last")
		records.Begin(doc.ID, doc.Seq)
		wg.Go(func() {
			err := s.Write(ctx, doc, chunks)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, err := range slices.DeleteFunc(errs, func(err error) bool { return err == nil }) {
		t.Error(err)
	}
	if n, ops := writes(srv.Calls()); n > docs {
		t.Errorf("%d versions written at once took %d writes %v, want at most one each", docs, n, ops)
	}
	for d := range docs {
		id := fmt.Sprintf("d%d.md", d)
		_, chunks := sinktest.Version(id, uint64(1+versions*docs+d), id+" last")
		if got := must(reader(srv, "chunks").Chunks(ctx, id)); !equalChunks(got, sinktest.Want(chunks)) {
			t.Errorf("%s: %v, want its last version", id, got)
		}
	}
}
