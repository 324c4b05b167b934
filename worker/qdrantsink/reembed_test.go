package qdrantsink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestModelSwitch switches a live collection from model a's "dense" to
// model b's "dense_b" as docs/operations.md's recipe does, with a search
// after every step and every page of the fill: every search answers, by
// the old vector until the cut-over and by the new one after; the fill is
// stopped once and resumed; workers write both vectors meanwhile, and one
// not yet switched writes a point without the new vector; at the
// cut-over no point lacks it, and every point's new vector is model b's of
// its own text.
func TestModelSwitch(t *testing.T) {
	srv := qdranttest.Start(t)
	srv.SetVersion("1.18.3")
	testModelSwitch(t, testConfig(srv), srv.Client(t))
}

// TestModelSwitchRealQdrant runs TestModelSwitch against the real Qdrant
// (1.18 or later) qdranttest.EnvURL names.
func TestModelSwitchRealQdrant(t *testing.T) {
	r := qdranttest.Real(t)
	testModelSwitch(t, realConfig(t, r), r.Client(t))
}

func testModelSwitch(t *testing.T, cfg Config, client *qdrant.Client) {
	ctx := context.Background()
	records := sinktest.NewRecords()
	embA, embB := &fakeEmbedder{dims: 4, model: "a"}, &fakeEmbedder{dims: 6, model: "b"}
	sink := func(cfg Config, emb Embedder, opts ...Option) *Sink {
		t.Helper()
		s, err := New(ctx, cfg, records, emb, nil, opts...)
		if err != nil {
			t.Fatalf("New(vector %s, next %q) = %v", cfg.vector(), cfg.NextVector, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	seq := uint64(0)
	write := func(s *Sink, id string, first bool) {
		t.Helper()
		seq++
		doc, chunks := sinktest.Version(id, seq, fmt.Sprintf("%s chunk one v%d", id, seq), fmt.Sprintf("%s chunk two v%d", id, seq))
		doc.First = first
		records.Begin(doc.ID, doc.Seq)
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatalf("Write(%s@%d) = %v", id, seq, err)
		}
	}
	searches := 0
	search := func(emb Embedder, wantBy string) {
		t.Helper()
		hits, by, err := Search(ctx, client, "chunk two", SearchOptions{Collection: cfg.Collection, Limit: 5, Embedder: emb})
		if err != nil || len(hits) == 0 || by != wantBy {
			t.Fatalf("search %d with model %s: %d hits by %s, %v; want hits by %s", searches, emb.Model(), len(hits), by, err, wantBy)
		}
		searches++
	}

	old := sink(cfg, embA)
	for d := range 30 {
		write(old, fmt.Sprintf("d%02d.md", d), true)
	}
	search(embA, SearchHybrid)

	// The fill, stopped after its third page as a kill would.
	kctx, kill := context.WithCancel(ctx)
	pages := 0
	_, err := Reembed(kctx, client, ReembedOptions{Collection: cfg.Collection, Vector: "dense_b", Embedder: embB, Page: 10,
		Progress: func(p ReembedProgress) {
			search(embA, SearchHybrid)
			if pages++; pages == 3 {
				kill()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped reembed = %v, want context.Canceled", err)
	}

	// Workers write both vectors; one not switched yet writes "dense" only.
	cfgBoth := cfg
	cfgBoth.NextVector = "dense_b"
	both := sink(cfgBoth, embA, WithNextEmbedder(embB))
	for d := range 10 {
		write(both, fmt.Sprintf("d%02d.md", d), false)
	}
	for d := 30; d < 35; d++ {
		write(both, fmt.Sprintf("d%02d.md", d), true)
	}
	write(old, "d10.md", false)
	search(embA, SearchHybrid)

	// The fill resumed: only what lacks the vector.
	prog, err := Reembed(ctx, client, ReembedOptions{Collection: cfg.Collection, Vector: "dense_b", Embedder: embB, Page: 10,
		Progress: func(ReembedProgress) { search(embA, SearchHybrid) }})
	if err != nil || prog.Missing != 0 || prog.Created || prog.Total != 70 {
		t.Fatalf("resumed reembed = %+v, %v; want 70 points, none missing, the vector not created again", prog, err)
	}
	if prog.Filled >= 70-30 {
		t.Errorf("the resumed fill wrote %d points, want only those still lacking the vector", prog.Filled)
	}
	pts, err := client.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: cfg.Collection, Limit: qdrant.PtrOf(uint32(1000)),
		WithPayload: qdrant.NewWithPayloadInclude(FieldContent), WithVectors: qdrant.NewWithVectorsInclude("dense_b")})
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, p := range pts {
		got := p.GetVectors().GetVectors().GetVectors()["dense_b"].GetDense().GetData()
		if got == nil {
			missing++
			continue
		}
		if !sameDirection(got, embedtest.Vector("b", p.GetPayload()[FieldContent].GetStringValue(), 6)) {
			t.Errorf("point %s: dense_b is not model b's vector of its text", p.GetId().GetUuid())
		}
	}
	if missing != 0 || len(pts) != 70 {
		t.Fatalf("%d of %d points lack dense_b at the cut-over, want 0", missing, len(pts))
	}

	// Cut-over: readers search dense_b; the workers then write it alone.
	if _, err := DropVector(ctx, client, cfg.Collection, "dense", false); !errors.Is(err, ErrVectorInUse) {
		t.Errorf("drop of the searched vector = %v, want ErrVectorInUse", err)
	}
	// The sparse bm25 vector is every worker's and every search's: never
	// cut over to, never dropped.
	if _, err := DropVector(ctx, client, cfg.Collection, VectorBM25, false); !errors.Is(err, ErrNotDenseVector) {
		t.Errorf("drop of bm25 = %v, want ErrNotDenseVector", err)
	}
	if err := CutOver(ctx, client, cfg.Collection, VectorBM25); !errors.Is(err, ErrNotDenseVector) {
		t.Errorf("cut-over to bm25 = %v, want ErrNotDenseVector", err)
	}
	if err := CutOver(ctx, client, cfg.Collection, "dense_b"); err != nil {
		t.Fatal(err)
	}
	search(embB, SearchHybrid)
	if _, _, err := Search(ctx, client, "chunk", SearchOptions{Collection: cfg.Collection, Embedder: embA}); err == nil {
		t.Error("a search with the old model after the cut-over succeeded, want an error naming the models")
	}
	cfgNew := cfg
	cfgNew.Vector = "dense_b"
	write(sink(cfgNew, embB), "d00.md", false)
	search(embB, SearchHybrid)
	// A dry run counts the points that hold the vector (all but the
	// rewritten d00.md's) and drops nothing.
	holding, err := client.Count(ctx, &qdrant.CountPoints{CollectionName: cfg.Collection, Exact: qdrant.PtrOf(true),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasVector("dense")}}})
	if err != nil || holding == 0 || holding >= 70 {
		t.Fatalf("points with dense = %d, %v; want all but d00.md's", holding, err)
	}
	for _, dry := range []bool{true, true, false} {
		if n, err := DropVector(ctx, client, cfg.Collection, "dense", dry); err != nil || n != holding {
			t.Fatalf("drop (dry run %v) = %d, %v; want the %d points holding it", dry, n, err, holding)
		}
	}
	search(embB, SearchHybrid)
	info, err := client.GetCollectionInfo(ctx, cfg.Collection)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()["dense"]; ok {
		t.Error("dense is still in the collection after the drop")
	}
	t.Logf("%d searches, each answered", searches)
}

// sameDirection reports whether two vectors are equal up to scale (a
// cosine collection stores them at length 1).
func sameDirection(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return math.Abs(ab/math.Sqrt(aa*bb)-1) < 1e-5
}
