package qdrantsink

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// strictCollection creates a collection that fits the sink, in strict
// mode with small limits.
func strictCollection(t *testing.T, client *qdrant.Client, name string) {
	t.Helper()
	err := client.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig:  qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{VectorDense: {Size: 4, Distance: qdrant.Distance_Cosine}}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			VectorBM25: {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
		StrictModeConfig: &qdrant.StrictModeConfig{
			Enabled:                    qdrant.PtrOf(true),
			UpsertMaxBatchsize:         qdrant.PtrOf(uint64(10)),
			FilterMaxConditions:        qdrant.PtrOf(uint64(7)),
			MaxQueryLimit:              qdrant.PtrOf(uint32(5)),
			UnindexedFilteringUpdate:   qdrant.PtrOf(false),
			UnindexedFilteringRetrieve: qdrant.PtrOf(false),
		},
	})
	if err != nil {
		t.Fatalf("create a strict collection: %v", err)
	}
}

// TestStrictMode: a collection in strict mode is read at start, its limits
// are named in the log, and the sink's requests fit them: at most
// upsert_max_batchsize points and filter_max_conditions/3 documents a
// request, scrolls of at most max_query_limit, filters on indexed fields.
func TestStrictMode(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := testConfig(srv)
	cfg.Linger = MaxLinger // requests fill up
	testStrictMode(t, cfg, srv.Client(t), func() {
		for _, c := range srv.Calls() {
			if c.Err != 0 {
				t.Errorf("%s refused: %v", c.Method, c.Err)
			}
			if c.Upserts() && c.Points > 10 {
				t.Errorf("%s of %d points, over upsert_max_batchsize 10", c.Method, c.Points)
			}
		}
	})
}

// TestStrictModeRealQdrant runs TestStrictMode against the real Qdrant
// qdranttest.EnvURL names, which refuses whatever does not fit.
func TestStrictModeRealQdrant(t *testing.T) {
	r := qdranttest.Real(t)
	cfg := realConfig(t, r)
	cfg.Linger = MaxLinger
	testStrictMode(t, cfg, r.Client(t), func() {})
}

func testStrictMode(t *testing.T, cfg Config, client *qdrant.Client, check func()) {
	ctx := context.Background()
	strictCollection(t, client, cfg.Collection)
	var logs bytes.Buffer
	records := sinktest.NewRecords()
	s, err := New(ctx, cfg, records, &fakeEmbedder{dims: 4}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, want := range []string{"strict mode", "upsert_max_batchsize=10", "filter_max_conditions=7", "max_query_limit=5",
		"points_per_request=10", "documents_per_request=2", "scroll_page=5"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("start-up log lacks %q:\n%s", want, logs.String())
		}
	}
	for _, seq := range []uint64{1, 10} { // a first version, then a later one that reads stored vectors
		var wg sync.WaitGroup
		for d := range 5 {
			texts := make([]string, 3+4*d)
			for i := range texts {
				texts[i] = fmt.Sprintf("doc %d seq %d chunk %d", d, seq, i)
			}
			doc, chunks := sinktest.Version(fmt.Sprintf("d%d.md", d), seq+uint64(d), texts...)
			doc.First = seq == 1
			records.Begin(doc.ID, doc.Seq)
			wg.Go(func() {
				if err := s.Write(ctx, doc, chunks); err != nil {
					t.Errorf("Write(%s) = %v", doc.ID, err)
				}
			})
		}
		wg.Wait()
	}
	n, err := client.Count(ctx, &qdrant.CountPoints{CollectionName: cfg.Collection, Exact: qdrant.PtrOf(true)})
	if err != nil || n != 3+7+11+15+19 {
		t.Errorf("%d points (%v), want the 55 of the last versions", n, err)
	}
	check()
}
