package eval

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// docsPassages chunks the project's question-set corpus with the
// Markdown chunker at maxChar characters, and adds a passage without
// terms (no BM25 vector, as the sink stores such a chunk).
func docsPassages(t *testing.T, maxChar int) ([]Passage, map[string][]byte) {
	t.Helper()
	files := readCorpus(t, filepath.Join(docsSet, "corpus"))
	cfg := markdown.DefaultConfig()
	cfg.MaxChar, cfg.MinChar, cfg.ChunkOverlap = maxChar, 0, 0
	c, err := markdown.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := chunkCorpus(t, c, files)
	files["rule.md"] = []byte("---\n")
	return append(ps, Passage{File: "rule.md", Start: 0, End: 3, Text: "---"}), files
}

// docsQuestions returns the texts of the project's questions.
func docsQuestions(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, q := range readQuestionFile(t, filepath.Join(docsSet, "questions.jsonl")) {
		out = append(out, q.Question)
	}
	return append(out, "the", "") // only a stop word, nothing: no terms
}

// TestRetrieversAsQdrant: BM25, Dense and Hybrid rank passages as a
// Qdrant collection does, the in-process double standing for Qdrant: the
// passages upserted as the sink stores chunks (bm25 sparse vectors with
// the IDF modifier, a cosine dense vector from the embeddings client),
// queried as producer search queries. Every question's top 10 must be the
// same points in the same order.
func TestRetrieversAsQdrant(t *testing.T) {
	ctx := context.Background()
	passages, _ := docsPassages(t, 400)
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	const dims = 16
	err := c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName:      "eval",
		VectorsConfig:       qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"dense": {Size: dims, Distance: qdrant.Distance_Cosine}}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{"bm25": {Modifier: qdrant.Modifier_Idf.Enum()}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	emb := embedtest.Start(t, embedtest.Config{Dims: dims})
	client, err := embed.New(embed.Config{URL: emb.URL(), Model: "m", Batch: 64, MaxInputChars: 100000, Tokenizer: "cl100k_base"}, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := bm25.NewEncoder(bm25.English, bm25.DefaultAvgDL)
	if err != nil {
		t.Fatal(err)
	}
	var points []*qdrant.PointStruct
	for i, p := range passages {
		vecs := map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense(embedtest.Vector("m", p.Text, dims))}
		if v := enc.Document(p.Text); len(v.Indices) > 0 {
			vecs["bm25"] = qdrant.NewVectorSparse(v.Indices, v.Values)
		}
		points = append(points, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsMap(vecs)})
	}
	for len(points) > 0 {
		n := min(256, len(points))
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "eval", Wait: qdrant.PtrOf(true), Points: points[:n]}); err != nil {
			t.Fatal(err)
		}
		points = points[n:]
	}
	bm, err := NewBM25(passages)
	if err != nil {
		t.Fatal(err)
	}
	dense, err := NewDense(ctx, client, passages, 0)
	if err != nil {
		t.Fatal(err)
	}
	const k = 10
	query := func(q *qdrant.QueryPoints) []int {
		t.Helper()
		q.CollectionName, q.Limit = "eval", qdrant.PtrOf(uint64(k))
		hits, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []int{}
		for _, h := range hits {
			out = append(out, int(h.GetId().GetNum())-1)
		}
		return out
	}
	found := 0
	for _, text := range docsQuestions(t) {
		qv := enc.Query(text)
		dv := embedtest.Vector("m", text, dims)
		var sparse *qdrant.Query
		if len(qv.Indices) > 0 {
			sparse = qdrant.NewQuerySparse(qv.Indices, qv.Values)
		}
		pre := qdrant.PtrOf(uint64(Prefetch * k))
		prefetch := []*qdrant.PrefetchQuery{{Query: qdrant.NewQueryDense(dv), Using: qdrant.PtrOf("dense"), Limit: pre}}
		want := map[string][]int{
			"dense": query(&qdrant.QueryPoints{Query: qdrant.NewQueryDense(dv), Using: qdrant.PtrOf("dense")}),
			"bm25":  {},
		}
		if sparse != nil {
			want["bm25"] = query(&qdrant.QueryPoints{Query: sparse, Using: qdrant.PtrOf("bm25")})
			prefetch = append(prefetch, &qdrant.PrefetchQuery{Query: sparse, Using: qdrant.PtrOf("bm25"), Limit: pre})
		}
		want["hybrid"] = query(&qdrant.QueryPoints{Prefetch: prefetch, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)})
		for name, r := range map[string]Retriever{"bm25": bm, "dense": dense, "hybrid": Hybrid{dense, bm}} {
			got, err := r.Retrieve(ctx, text, k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[name]) {
				t.Errorf("%s of %q = %v, Qdrant's %v", name, text, got, want[name])
			}
		}
		found += len(want["bm25"])
	}
	if found == 0 {
		t.Fatal("BM25 found nothing: the comparison is empty")
	}
}

// TestDenseErrors: vectors that do not fit are errors naming the
// passages, not wrong rankings.
func TestDenseErrors(t *testing.T) {
	ctx := context.Background()
	srv := embedtest.Start(t, embedtest.Config{Dims: 4})
	client, err := embed.New(embed.Config{URL: srv.URL(), Model: "m", Batch: 2, MaxInputChars: 100, Tokenizer: "cl100k_base"}, embed.Options{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps := []Passage{{Text: "a"}, {Text: "b"}, {Text: "c"}}
	d, err := NewDense(ctx, client, ps, 2)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDims(5)
	if _, err := d.Retrieve(ctx, "q", 1); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a query vector of another size: %v", err)
	}
	if _, err := NewDense(ctx, client, []Passage{{Text: strings.Repeat("x", 101)}}, 2); err == nil || !strings.Contains(err.Error(), "embed passages 0-0") {
		t.Errorf("a passage over the embedder's limit: %v", err)
	}
}
