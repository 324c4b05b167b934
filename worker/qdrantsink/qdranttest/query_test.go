package qdranttest_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// hybrid creates a collection "h" with a dense vector of the distance
// and a sparse vector "bm25" with the IDF modifier.
func hybrid(t *testing.T, srv *qdranttest.Server, dist qdrant.Distance) *qdrant.Client {
	t.Helper()
	c := srv.Client(t)
	err := c.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName: "h",
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"dense": {Size: 2, Distance: dist},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			"bm25": {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func upsert(t *testing.T, c *qdrant.Client, pts ...*qdrant.PointStruct) error {
	t.Helper()
	_, err := c.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "h", Wait: qdrant.PtrOf(true), Points: pts})
	return err
}

func doc(text string, opts map[string]any) *qdrant.Document {
	return &qdrant.Document{Text: text, Model: bm25.Model, Options: qdrant.NewValueMap(opts)}
}

func sparseOf(t *testing.T, c *qdrant.Client, id uint64) *qdrant.SparseVector {
	t.Helper()
	got, err := c.Get(context.Background(), &qdrant.GetPoints{CollectionName: "h", Ids: []*qdrant.PointId{qdrant.NewIDNum(id)}, WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(got) != 1 {
		t.Fatalf("Get(%d) = %v, %v", id, got, err)
	}
	return got[0].GetVectors().GetVectors().GetVectors()["bm25"].GetSparse()
}

// TestInference: a Document with model qdrant/bm25 is stored as the
// sparse vector package bm25 computes, with the options Qdrant honours.
func TestInference(t *testing.T) {
	srv := qdranttest.Start(t)
	c := hybrid(t, srv, qdrant.Distance_Cosine)
	const text = "The cats are running to the tables; ΣΑΣ"
	tests := []struct {
		model string
		opts  map[string]any
		lang  bm25.Language
		avg   float64
	}{
		{bm25.Model, nil, bm25.English, 256},
		{"BM25", map[string]any{"avg_len": 100}, bm25.English, 100},
		{bm25.Model, map[string]any{"language": "none", "avg_len": 7.5}, bm25.None, 7.5},
		{bm25.Model, map[string]any{"language": "klingon"}, bm25.None, 256}, // unknown to Qdrant: no stop words, no stemmer
		{bm25.Model, map[string]any{"language": "English"}, bm25.None, 256}, // Qdrant's names are lowercase
		{bm25.Model, map[string]any{"language": ""}, bm25.None, 256},
		{bm25.Model, map[string]any{"language": "no", "k": 1.2, "b": 0.75, "tokenizer": "word", "lowercase": true, "unknown": 1}, bm25.Norwegian, 256},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(tt.model, tt.opts), func(t *testing.T) {
			d := &qdrant.Document{Text: text, Model: tt.model, Options: qdrant.NewValueMap(tt.opts)}
			p := &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorDocument(d)})}
			if err := upsert(t, c, p); err != nil {
				t.Fatal(err)
			}
			enc, err := bm25.NewEncoder(tt.lang, tt.avg)
			if err != nil {
				t.Fatal(err)
			}
			want := enc.Document(text)
			if got := sparseOf(t, c, uint64(i+1)); !slices.Equal(got.GetIndices(), want.Indices) || !slices.Equal(got.GetValues(), want.Values) {
				t.Fatalf("stored %v, want %s's %v", got, enc.Encoding(), want)
			}
		})
	}
}

// TestInferenceRefused: what Qdrant refuses, or the double does not model,
// fails the whole request with Qdrant's code.
func TestInferenceRefused(t *testing.T) {
	tests := []struct {
		name    string
		version string
		vector  string
		d       *qdrant.Document
		want    codes.Code
	}{
		{"before 1.15.2", "1.15.1", "bm25", doc("x", nil), codes.Internal},
		{"1.15.2 defaults", "1.15.2", "bm25", doc("x", nil), codes.Unimplemented},
		{"a remote model", "1.16.0", "bm25", &qdrant.Document{Text: "x", Model: "sentence-transformers/all-minilm-l6-v2"}, codes.Internal},
		{"a language Qdrant knows", "1.16.0", "bm25", doc("x", map[string]any{"language": "french"}), codes.Unimplemented},
		{"avg_len 0", "1.16.0", "bm25", doc("x", map[string]any{"avg_len": 0}), codes.InvalidArgument},
		{"avg_len a string", "1.16.0", "bm25", doc("x", map[string]any{"avg_len": "long"}), codes.InvalidArgument},
		{"another k", "1.16.0", "bm25", doc("x", map[string]any{"k": 2}), codes.Unimplemented},
		{"stemmer", "1.16.0", "bm25", doc("x", map[string]any{"stemmer": map[string]any{"type": "none"}}), codes.Unimplemented},
		{"a dense vector", "1.16.0", "dense", doc("x", nil), codes.InvalidArgument},
		{"an unknown vector", "1.16.0", "other", doc("x", nil), codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := qdranttest.Start(t)
			srv.SetVersion(tt.version)
			c := hybrid(t, srv, qdrant.Distance_Cosine)
			good := &qdrant.PointStruct{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorSparse([]uint32{1}, []float32{1})})}
			bad := &qdrant.PointStruct{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{tt.vector: qdrant.NewVectorDocument(tt.d)})}
			if err := upsert(t, c, good, bad); status.Code(err) != tt.want {
				t.Fatalf("Upsert(%s) = %v, want %v", tt.name, err, tt.want)
			}
			if n, _ := c.Count(context.Background(), &qdrant.CountPoints{CollectionName: "h"}); n != 0 {
				t.Fatalf("Count after a refused upsert = %d, want 0", n)
			}
			_, err := c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf(tt.vector), Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(tt.d))})
			if status.Code(err) != tt.want {
				t.Fatalf("Query(%s) = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// ids returns the numeric ids of scored points.
func ids(pts []*qdrant.ScoredPoint) []uint64 {
	var out []uint64
	for _, p := range pts {
		out = append(out, p.GetId().GetNum())
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// TestQuerySparseIDF scores sparse queries by the IDF-weighted dot product,
// computed here by hand.
func TestQuerySparseIDF(t *testing.T) {
	srv := qdranttest.Start(t)
	c := hybrid(t, srv, qdrant.Distance_Cosine)
	sp := func(id uint64, idx []uint32, vals []float32) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorSparse(idx, vals)})}
	}
	if err := upsert(t, c,
		sp(1, []uint32{1, 2}, []float32{1, 1}),
		sp(2, []uint32{2}, []float32{1.5}),
		sp(3, []uint32{3, 1}, []float32{0.5, 3}),
		sp(4, []uint32{9}, []float32{1}),
	); err != nil {
		t.Fatal(err)
	}
	// N = 4; index 1 in 2 points, index 2 in 2, index 3 in 1.
	idf := func(n float64) float64 { return math.Log((4-n+0.5)/(n+0.5) + 1) }
	got, err := c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf("bm25"),
		Query: qdrant.NewQuerySparse([]uint32{2, 1, 3}, []float32{1, 1, 1}), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]float64{1: idf(2) + idf(2), 2: 1.5 * idf(2), 3: 3*idf(2) + 0.5*idf(1)}
	if !slices.Equal(ids(got), []uint64{3, 1, 2}) { // point 4 shares no index: not found
		t.Fatalf("Query ids = %v, want [3 1 2]", ids(got))
	}
	for _, p := range got {
		if w := want[p.GetId().GetNum()]; !near(float64(p.GetScore()), w) {
			t.Errorf("point %d: score %v, want %v", p.GetId().GetNum(), p.GetScore(), w)
		}
	}
	// Equal scores, 2·idf(1) for point 4 and 4·0.5·idf(1) for point 3: by id.
	got, err = c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf("bm25"),
		Query: qdrant.NewQuerySparse([]uint32{9, 3}, []float32{2, 4}), Limit: qdrant.PtrOf(uint64(1))})
	if err != nil || !slices.Equal(ids(got), []uint64{3}) {
		t.Fatalf("Query of a tie, limit 1 = %v, %v; want [3]", ids(got), err)
	}
}

// TestQueryDense ranks by the collection's distance.
func TestQueryDense(t *testing.T) {
	tests := []struct {
		dist   qdrant.Distance
		want   []uint64
		scores []float64
	}{
		{qdrant.Distance_Cosine, []uint64{1, 3, 2}, []float64{1, 0.6, 0}},
		{qdrant.Distance_Dot, []uint64{3, 1, 2}, []float64{3, 1, 0}},
		{qdrant.Distance_Euclid, []uint64{1, 3, 2}, []float64{0, math.Sqrt(4 + 16), math.Sqrt(2)}},
		{qdrant.Distance_Manhattan, []uint64{1, 2, 3}, []float64{0, 2, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.dist.String(), func(t *testing.T) {
			srv := qdranttest.Start(t)
			c := hybrid(t, srv, tt.dist)
			for i, v := range [][]float32{{1, 0}, {0, 1}, {3, 4}} {
				p := &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i + 1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense(v)})}
				if err := upsert(t, c, p); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf("dense"), Query: qdrant.NewQueryDense([]float32{1, 0})})
			if err != nil {
				t.Fatal(err)
			}
			if tt.dist == qdrant.Distance_Euclid {
				tt.want, tt.scores = []uint64{1, 2, 3}, []float64{0, math.Sqrt(2), math.Sqrt(4 + 16)}
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Fatalf("Query(%v) ids = %v, want %v", tt.dist, ids(got), tt.want)
			}
			for i, p := range got {
				if !near(float64(p.GetScore()), tt.scores[i]) {
					t.Errorf("Query(%v): point %d score %v, want %v", tt.dist, p.GetId().GetNum(), p.GetScore(), tt.scores[i])
				}
			}
		})
	}
}

// corpus upserts five documents with a dense vector and a bm25 vector
// computed server-side, and returns the client.
func corpus(t *testing.T) *qdrant.Client {
	t.Helper()
	srv := qdranttest.Start(t)
	c := hybrid(t, srv, qdrant.Distance_Dot)
	texts := []string{"rotate the NATS credentials", "reload the server", "NATS server credentials rotation", "kubernetes pods", "credentials"}
	dense := [][]float32{{1, 0}, {0.9, 0.1}, {0.2, 0.8}, {0, 1}, {0.5, 0.5}}
	for i, text := range texts {
		p := &qdrant.PointStruct{
			Id:      qdrant.NewIDNum(uint64(i + 1)),
			Payload: qdrant.NewValueMap(map[string]any{"content": text, "n": i + 1}),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
				"dense": qdrant.NewVectorDense(dense[i]),
				"bm25":  qdrant.NewVectorDocument(doc(text, nil)),
			}),
		}
		if err := upsert(t, c, p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestQueryDocument: a Document query is the bm25 query vector.
func TestQueryDocument(t *testing.T) {
	c := corpus(t)
	ctx := context.Background()
	const q = "rotating NATS credentials"
	byDoc, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf("bm25"), Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(doc(q, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	v := bm25.Query(q)
	byVector, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Using: qdrant.PtrOf("bm25"), Query: qdrant.NewQuerySparse(v.Indices, v.Values)})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(byDoc) != fmt.Sprint(byVector) || len(byDoc) != 3 || byDoc[0].GetId().GetNum() != 1 {
		t.Fatalf("Query(Document %q) = %v, Query(bm25.Query) = %v, want the same 3 points, 1 first", q, byDoc, byVector)
	}
}

// TestQueryFusion: prefetches (nested, with a filter propagated from the
// top) fused by RRF and DBSF, limit, offset and payload.
func TestQueryFusion(t *testing.T) {
	c := corpus(t)
	ctx := context.Background()
	sparse := &qdrant.PrefetchQuery{Using: qdrant.PtrOf("bm25"), Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(doc("NATS credentials", nil)))}
	dense := &qdrant.PrefetchQuery{Using: qdrant.PtrOf("dense"), Query: qdrant.NewQueryDense([]float32{1, 0}), Limit: qdrant.PtrOf(uint64(3))}
	// The two rankings alone, then fused.
	sparseHits, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Using: sparse.Using, Query: sparse.Query})
	if err != nil {
		t.Fatal(err)
	}
	denseHits, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Using: dense.Using, Query: dense.Query, Limit: dense.Limit})
	if err != nil {
		t.Fatal(err)
	}
	// The expected RRF scores, from the two rankings.
	want := map[uint64]float64{}
	for _, list := range [][]*qdrant.ScoredPoint{sparseHits, denseHits} {
		for pos, p := range list {
			want[p.GetId().GetNum()] += 1 / float64(pos+2)
		}
	}
	got, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: []*qdrant.PrefetchQuery{sparse, dense},
		Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("RRF = %v, want %d points", ids(got), len(want))
	}
	for i, p := range got {
		if !near(float64(p.GetScore()), want[p.GetId().GetNum()]) || i > 0 && got[i-1].GetScore() < p.GetScore() {
			t.Fatalf("RRF = %v, want scores %v in decreasing order", got, want)
		}
		if p.GetPayload()["content"].GetStringValue() == "" {
			t.Fatalf("RRF point %d without payload", p.GetId().GetNum())
		}
	}
	// The same with Rrf{k: 60} and limit 1 offset 1: the second point.
	second, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: []*qdrant.PrefetchQuery{sparse, dense},
		Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(2))}), Limit: qdrant.PtrOf(uint64(1)), Offset: qdrant.PtrOf(uint64(1))})
	if err != nil || len(second) != 1 || second[0].GetId().GetNum() != got[1].GetId().GetNum() || second[0].GetPayload() != nil {
		t.Fatalf("RRF k=2 limit 1 offset 1 = %v, %v; want point %d without payload", second, err, got[1].GetId().GetNum())
	}
	// A top filter reaches the prefetches: n ≥ 3 leaves 3, 4 and 5; the
	// dense prefetch finds 5, 3, 4 among them, the sparse one 3, 5, and the
	// dense query {0, 1} rescores them.
	filtered, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h",
		Prefetch: []*qdrant.PrefetchQuery{{Prefetch: []*qdrant.PrefetchQuery{sparse, dense}, Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF)}},
		Query:    qdrant.NewQueryDense([]float32{0, 1}), Using: qdrant.PtrOf("dense"),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(3.0)})}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(filtered), []uint64{4, 3, 5}) || !near(float64(filtered[1].GetScore()), 0.8) {
		t.Fatalf("filtered, nested, rescored = %v, want [4 3 5] scored by the dense query", filtered)
	}
	// Weighted RRF: the weights must match the prefetches.
	_, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: []*qdrant.PrefetchQuery{sparse, dense},
		Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{1}})})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("RRF with one weight for two prefetches: %v, want InvalidArgument", err)
	}
}

// TestQueryRRFWeights checks Qdrant's weighted score 1/((pos+1)/w + k − 1).
func TestQueryRRFWeights(t *testing.T) {
	c := corpus(t)
	pf := func(v []float32) *qdrant.PrefetchQuery {
		return &qdrant.PrefetchQuery{Using: qdrant.PtrOf("dense"), Query: qdrant.NewQueryDense(v), Limit: qdrant.PtrOf(uint64(2))}
	}
	// Ranks: {1, 0} gives 1, 2; {0, 1} gives 4, 3.
	got, err := c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Prefetch: []*qdrant.PrefetchQuery{pf([]float32{1, 0}), pf([]float32{0, 1})},
		Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(60)), Weights: []float32{3, 1}})})
	if err != nil {
		t.Fatal(err)
	}
	score := func(pos int, w float64) float64 { return 1 / (float64(pos+1)/w + 60 - 1) }
	want := []struct {
		id    uint64
		score float64
	}{{1, score(0, 3)}, {2, score(1, 3)}, {4, score(0, 1)}, {3, score(1, 1)}}
	if len(got) != len(want) {
		t.Fatalf("weighted RRF = %v", got)
	}
	for i, w := range want {
		if got[i].GetId().GetNum() != w.id || !near(float64(got[i].GetScore()), w.score) {
			t.Fatalf("weighted RRF = %v, want %v", got, want)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	c := corpus(t)
	sparse := &qdrant.PrefetchQuery{Using: qdrant.PtrOf("bm25"), Query: qdrant.NewQuerySparse([]uint32{1}, []float32{1})}
	tests := []struct {
		name string
		req  *qdrant.QueryPoints
		want codes.Code
	}{
		{"fusion without prefetches", &qdrant.QueryPoints{Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)}, codes.InvalidArgument},
		{"prefetches without a query", &qdrant.QueryPoints{Prefetch: []*qdrant.PrefetchQuery{sparse}}, codes.InvalidArgument},
		{"unknown vector", &qdrant.QueryPoints{Using: qdrant.PtrOf("nope"), Query: qdrant.NewQuerySparse([]uint32{1}, []float32{1})}, codes.InvalidArgument},
		{"repeated sparse index", &qdrant.QueryPoints{Using: qdrant.PtrOf("bm25"), Query: qdrant.NewQuerySparse([]uint32{1, 1}, []float32{1, 1})}, codes.InvalidArgument},
		{"wrong dimension", &qdrant.QueryPoints{Using: qdrant.PtrOf("dense"), Query: qdrant.NewQueryDense([]float32{1})}, codes.InvalidArgument},
		{"unknown collection", &qdrant.QueryPoints{CollectionName: "nope"}, codes.NotFound},
		{"order by", &qdrant.QueryPoints{Query: qdrant.NewQueryOrderBy(&qdrant.OrderBy{Key: "n"})}, codes.Unimplemented},
	}
	for _, tt := range tests {
		if tt.req.CollectionName == "" {
			tt.req.CollectionName = "h"
		}
		if _, err := c.Query(context.Background(), tt.req); status.Code(err) != tt.want {
			t.Errorf("Query(%s) = %v, want %v", tt.name, err, tt.want)
		}
	}
	// Without a query: points in id order.
	got, err := c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Limit: qdrant.PtrOf(uint64(3))})
	if err != nil || !slices.Equal(ids(got), []uint64{1, 2, 3}) {
		t.Fatalf("Query without a query = %v, %v; want [1 2 3]", ids(got), err)
	}
}

// TestCollectionMetadata: metadata set at creation is returned in the
// collection's config and merged by updates (null removes a key); a
// server before 1.15.4 drops it, as protobuf drops an unknown field.
func TestCollectionMetadata(t *testing.T) {
	for _, version := range []string{qdranttest.DefaultVersion, "1.15.3"} {
		t.Run(version, func(t *testing.T) {
			srv := qdranttest.Start(t)
			srv.SetVersion(version)
			c := srv.Client(t)
			ctx := context.Background()
			err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "m",
				Metadata: qdrant.NewValueMap(map[string]any{"bm25": "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256", "owner": "x", "n": 1})})
			if err != nil {
				t.Fatal(err)
			}
			err = c.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: "m",
				Metadata: qdrant.NewValueMap(map[string]any{"owner": nil, "n": 2, "dense": map[string]any{"model": "m", "dims": 3}})})
			if err != nil {
				t.Fatal(err)
			}
			info, err := c.GetCollectionInfo(ctx, "m")
			if err != nil {
				t.Fatal(err)
			}
			md := info.GetConfig().GetMetadata()
			got := fmt.Sprintf("%s|%d|%d|%d", md["bm25"].GetStringValue(), md["n"].GetIntegerValue(), md["dense"].GetStructValue().GetFields()["dims"].GetIntegerValue(), len(md))
			want := "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256|2|3|3"
			if version == "1.15.3" {
				want = "|0|0|0"
			}
			if got != want {
				t.Fatalf("metadata = %v, want %s", md, want)
			}
			if err := c.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: "nope", Metadata: qdrant.NewValueMap(map[string]any{"a": 1})}); status.Code(err) != codes.NotFound {
				t.Fatalf("UpdateCollection(nope) = %v, want NotFound", err)
			}
		})
	}
}
