package qdrantsink

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/batch"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

func testConfig(srv *qdranttest.Server) Config {
	cfg := DefaultConfig()
	cfg.Addr = srv.Addr()
	cfg.Batch = MinBatch
	cfg.Linger = 0 // requests leave at once: a Write alone waits for nobody
	return cfg
}

func newSink(t testing.TB, srv *qdranttest.Server, records worker.Records, emb Embedder) *Sink {
	t.Helper()
	s, err := New(context.Background(), testConfig(srv), records, emb, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// reader returns the sinktest.Reader of a Qdrant collection: a scroll
// over the document's points through the go-client.
func reader(srv *qdranttest.Server, coll string) sinktest.Reader {
	var (
		once   sync.Once
		client *qdrant.Client
		err    error
	)
	return sinktest.ReaderFunc(func(ctx context.Context, docID string) (map[string]string, error) {
		once.Do(func() {
			client, err = qdrant.NewClient(&qdrant.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
		})
		if err != nil {
			return nil, err
		}
		pts, err := client.Scroll(ctx, &qdrant.ScrollPoints{
			CollectionName: coll,
			Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(FieldDocID, docID)}},
			Limit:          qdrant.PtrOf(uint32(10000)),
			WithPayload:    qdrant.NewWithPayloadInclude(FieldContent),
		})
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, p := range pts {
			out[p.GetId().GetUuid()] = p.GetPayload()[FieldContent].GetStringValue()
		}
		return out, nil
	})
}

func TestConformance(t *testing.T) {
	sinktest.Run(t, func(t *testing.T, records worker.Records) (worker.Sink, sinktest.Reader) {
		srv := qdranttest.Start(t)
		return newSink(t, srv, records, nil), reader(srv, "chunks")
	})
}

// clientReader returns the sinktest.Reader of a collection through client.
func clientReader(client *qdrant.Client, coll string) sinktest.Reader {
	return sinktest.ReaderFunc(func(ctx context.Context, docID string) (map[string]string, error) {
		pts, err := client.Scroll(ctx, &qdrant.ScrollPoints{
			CollectionName: coll,
			Filter:         &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(FieldDocID, docID)}},
			Limit:          qdrant.PtrOf(uint32(10000)),
			WithPayload:    qdrant.NewWithPayloadInclude(FieldContent),
		})
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, p := range pts {
			out[p.GetId().GetUuid()] = p.GetPayload()[FieldContent].GetStringValue()
		}
		return out, nil
	})
}

// realConfig is the sink's configuration for a collection of its own in
// the real Qdrant that qdranttest.EnvURL names.
func realConfig(t *testing.T, r qdranttest.Remote) Config {
	cfg := DefaultConfig()
	cfg.Addr, cfg.TLS, cfg.APIKey = r.Addr, r.TLS, r.APIKey
	cfg.Collection, cfg.Batch, cfg.Linger = r.Collection(t), MinBatch, 0
	return cfg
}

// TestConformanceRealQdrant runs the conformance suite against a real
// Qdrant, with and without an embedder, when qdranttest.EnvURL names one:
// the check that the double behaves as Qdrant where the sink depends on
// it.
func TestConformanceRealQdrant(t *testing.T) {
	testutil.OptIn(t, testutil.QdrantURL)
	r := qdranttest.Real(t)
	for _, emb := range []Embedder{nil, &fakeEmbedder{dims: 4}} {
		t.Run(fmt.Sprintf("embedder=%v", emb != nil), func(t *testing.T) {
			sinktest.Run(t, func(t *testing.T, records worker.Records) (worker.Sink, sinktest.Reader) {
				cfg := realConfig(t, r)
				s, err := New(context.Background(), cfg, records, emb, nil)
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s, clientReader(r.Client(t), cfg.Collection)
			})
		})
	}
}

func TestConformanceWithEmbedder(t *testing.T) {
	sinktest.Run(t, func(t *testing.T, records worker.Records) (worker.Sink, sinktest.Reader) {
		srv := qdranttest.Start(t)
		return newSink(t, srv, records, &fakeEmbedder{dims: 4}), reader(srv, "chunks")
	})
}

// fakeEmbedder returns the test server's vectors (embedtest.Vector) of
// a fixed size, under the model "fake" unless model is set.
type fakeEmbedder struct {
	mu       sync.Mutex
	dims     int
	model    string
	probeErr error
	calls    int
	inputs   int // texts embedded
	reused   int // texts reused, as counted by the sink
}

func (f *fakeEmbedder) Model() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.model == "" {
		return "fake"
	}
	return f.model
}

func (f *fakeEmbedder) Reused(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reused += n
}

func (f *fakeEmbedder) Probe(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.probeErr != nil {
		return 0, f.probeErr
	}
	return f.dims, nil
}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	model := f.Model()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.inputs += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = embedtest.Vector(model, t, f.dims)
	}
	return out, nil
}

func TestEveryChunkIsAPoint(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, &fakeEmbedder{dims: 3})
	doc := worker.Doc{ID: "docs/a.md", Version: "abc123", Seq: 42, Op: worker.OpUpsert, Subject: "ingest.docs"}
	md := chunking.Metadata{
		{Key: "file", Value: "docs/a.md"},
		{Key: "headers", Value: chunking.Metadata{{Key: "h1", Value: "Title"}}},
		{Key: "index", Value: 0},
		{Key: "tags", Value: []string{"x", "y"}},
		{Key: "small", Value: int8(3)},
	}
	texts := []string{"# Title\n\nFirst paragraph.", "Second paragraph, with the word paragraph twice.", "Ünïcödé text"}
	spans := []chunking.Span{{Start: 0, End: 25, FirstLine: 1, LastLine: 3, Verbatim: true}, {MessageIDs: []string{"a@x", "b@x"}}, {}}
	var chunks []worker.Chunk
	for i, text := range texts {
		chunks = append(chunks, worker.Chunk{ID: sinktest.ChunkID(doc.ID, i), Position: i, Chunk: chunking.NewChunk(text, md.With("index", i)).WithSpan(spans[i])})
	}
	records.Begin(doc.ID, doc.Seq)
	if err := s.Write(context.Background(), doc, chunks); err != nil {
		t.Fatal(err)
	}
	pts := srv.Points("chunks")
	if len(pts) != len(chunks) {
		t.Fatalf("%d points, want %d", len(pts), len(chunks))
	}
	byID := map[string]*qdrant.RetrievedPoint{}
	for _, p := range pts {
		byID[p.GetId().GetUuid()] = p
	}
	if _, ok := byID["792eb6ad-d4df-57d5-9e6f-cad1f78b3044"]; !ok {
		t.Fatalf("no point with the id of docs/a.md#0; ids %v", slices.Collect(maps.Keys(byID)))
	}
	for _, c := range chunks {
		p := byID[c.ID]
		if p == nil {
			t.Fatalf("chunk %d (%s) has no point", c.Position, c.ID)
		}
		pl := p.GetPayload()
		checks := []struct {
			field string
			got   any
			want  any
		}{
			{FieldContent, pl[FieldContent].GetStringValue(), c.Chunk.Content()},
			{FieldDocID, pl[FieldDocID].GetStringValue(), doc.ID},
			{FieldDocVersion, pl[FieldDocVersion].GetStringValue(), doc.Version},
			{FieldIngestSeq, pl[FieldIngestSeq].GetIntegerValue(), int64(42)},
			{FieldPosition, pl[FieldPosition].GetIntegerValue(), int64(c.Position)},
			{FieldHash, pl[FieldHash].GetStringValue(), c.Chunk.Hash()},
			{FieldDenseDigest, pl[FieldDenseDigest].GetStringValue(), fmt.Sprintf("%x", sha256.Sum256([]byte(c.Chunk.Content())))},
			{FieldDenseModel, pl[FieldDenseModel].GetStringValue(), "fake"},
			{FieldDenseDims, pl[FieldDenseDims].GetIntegerValue(), int64(3)},
			{"metadata.file", pl[FieldMetadata].GetStructValue().GetFields()["file"].GetStringValue(), "docs/a.md"},
			{"metadata.index", pl[FieldMetadata].GetStructValue().GetFields()["index"].GetIntegerValue(), int64(c.Position)},
			{"metadata.small", pl[FieldMetadata].GetStructValue().GetFields()["small"].GetIntegerValue(), int64(3)},
			{"metadata.headers.h1", pl[FieldMetadata].GetStructValue().GetFields()["headers"].GetStructValue().GetFields()["h1"].GetStringValue(), "Title"},
			{"metadata.tags[1]", pl[FieldMetadata].GetStructValue().GetFields()["tags"].GetListValue().GetValues()[1].GetStringValue(), "y"},
		}
		for _, ch := range checks {
			if ch.got != ch.want {
				t.Errorf("chunk %d payload %s = %v, want %v", c.Position, ch.field, ch.got, ch.want)
			}
		}
		// The span, beside the metadata: its fields, or nothing.
		sp, has := pl[FieldSpan]
		var got []string
		for k, v := range sp.GetStructValue().GetFields() {
			switch {
			case k == "message_ids":
				for _, id := range v.GetListValue().GetValues() {
					got = append(got, k+"="+id.GetStringValue())
				}
			case k == "verbatim":
				got = append(got, fmt.Sprintf("%s=%v", k, v.GetBoolValue()))
			default:
				got = append(got, fmt.Sprintf("%s=%d", k, v.GetIntegerValue()))
			}
		}
		slices.Sort(got)
		want := [][]string{
			{"end=25", "first_line=1", "last_line=3", "start=0", "verbatim=true"},
			{"message_ids=a@x", "message_ids=b@x"},
			nil,
		}[c.Position]
		if !slices.Equal(got, want) || has != (want != nil) {
			t.Errorf("chunk %d payload span = %v (present %v), want %v", c.Position, got, has, want)
		}
		vs := p.GetVectors().GetVectors().GetVectors()
		wantSparse := bm25.Document(c.Chunk.Content())
		gotSparse := vs[VectorBM25].GetSparse()
		if !slices.Equal(gotSparse.GetIndices(), wantSparse.Indices) || !slices.Equal(gotSparse.GetValues(), wantSparse.Values) {
			t.Errorf("chunk %d bm25 = %v, want %v", c.Position, gotSparse, wantSparse)
		}
		if got, want := vs[VectorDense].GetDense().GetData(), embedtest.Vector("fake", c.Chunk.Content(), 3); !slices.Equal(got, want) {
			t.Errorf("chunk %d dense = %v, want %v", c.Position, got, want)
		}
	}
}

func TestCollectionSetUp(t *testing.T) {
	srv := qdranttest.Start(t)
	s := newSink(t, srv, sinktest.NewRecords(), &fakeEmbedder{dims: 5})
	info, err := s.client.GetCollectionInfo(context.Background(), "chunks")
	if err != nil {
		t.Fatal(err)
	}
	params := info.GetConfig().GetParams()
	if m := params.GetSparseVectorsConfig().GetMap()[VectorBM25].GetModifier(); m != qdrant.Modifier_Idf {
		t.Errorf("bm25 modifier = %v, want Idf", m)
	}
	d := params.GetVectorsConfig().GetParamsMap().GetMap()[VectorDense]
	if d.GetSize() != 5 || d.GetDistance() != qdrant.Distance_Cosine {
		t.Errorf("dense = %v, want size 5 cosine", d)
	}
	schema := info.GetPayloadSchema()
	if schema[FieldDocID].GetDataType() != qdrant.PayloadSchemaType_Keyword || schema[FieldIngestSeq].GetDataType() != qdrant.PayloadSchemaType_Integer ||
		schema[FieldLanguage].GetDataType() != qdrant.PayloadSchemaType_Keyword || schema[FieldSymbols].GetDataType() != qdrant.PayloadSchemaType_Keyword {
		t.Errorf("payload schema = %v", schema)
	}
	// The indexes (doc_id, ingest_seq, and tenant with is_tenant) come
	// before any data, and every write is wait=true with
	// strong ordering; every upsert carries the update_filter.
	records := sinktest.NewRecords()
	s2 := newSink(t, srv, records, &fakeEmbedder{dims: 5})
	doc, chunks := sinktest.Version("a.md", 1, "x", "y")
	records.Begin(doc.ID, doc.Seq)
	if err := s2.Write(context.Background(), doc, chunks); err != nil {
		t.Fatal(err)
	}
	sawIndex := 0
	for _, c := range srv.Calls() {
		switch c.Method {
		case "CreateFieldIndex":
			sawIndex++
		case "Upsert", "Delete", "UpdateBatch":
			if sawIndex < len(indexes) {
				t.Errorf("%s before every payload index", c.Method)
			}
			if !c.Wait || c.Ordering != qdrant.WriteOrderingType_Strong {
				t.Errorf("%s: wait=%v ordering=%v, want wait=true strong", c.Method, c.Wait, c.Ordering)
			}
			if c.Upserts() && !c.HasUpdateFilter {
				t.Errorf("Upsert without update_filter")
			}
		}
	}
	if sawIndex != len(indexes) {
		t.Errorf("%d CreateFieldIndex calls, want %d (the second sink finds them)", sawIndex, len(indexes))
	}
}

func TestServerVersion(t *testing.T) {
	for _, tt := range []struct {
		version string
		ok      bool
	}{{"1.15.5", false}, {"0.11.0", false}, {"1.16.0", true}, {"1.17.1", true}, {"2.0.0", true}, {"v1.16.3-dev", true}, {"garbage", false}} {
		srv := qdranttest.Start(t)
		srv.SetVersion(tt.version)
		s, err := New(context.Background(), testConfig(srv), sinktest.NewRecords(), nil, nil)
		if (err == nil) != tt.ok {
			t.Errorf("New with server %s: err = %v, want ok=%v", tt.version, err, tt.ok)
		}
		if err == nil {
			_ = s.Close()
		} else if tt.version == "1.15.5" && !errors.Is(err, ErrServerTooOld) {
			t.Errorf("New with server 1.15.5 = %v, want ErrServerTooOld", err)
		}
	}
}

func createCollection(t *testing.T, srv *qdranttest.Server, name string, dense map[string]*qdrant.VectorParams, modifier qdrant.Modifier) {
	t.Helper()
	cc := &qdrant.CreateCollection{
		CollectionName:      name,
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{VectorBM25: {Modifier: modifier.Enum()}}),
	}
	if dense != nil {
		cc.VectorsConfig = qdrant.NewVectorsConfigMap(dense)
	}
	if err := srv.Client(t).CreateCollection(context.Background(), cc); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultCollectionMismatchIsAStartupError(t *testing.T) {
	tests := []struct {
		name     string
		dense    map[string]*qdrant.VectorParams
		modifier qdrant.Modifier
		emb      Embedder
	}{
		{"wrong dense size", map[string]*qdrant.VectorParams{VectorDense: {Size: 8, Distance: qdrant.Distance_Cosine}}, qdrant.Modifier_Idf, &fakeEmbedder{dims: 4}},
		{"wrong distance", map[string]*qdrant.VectorParams{VectorDense: {Size: 4, Distance: qdrant.Distance_Dot}}, qdrant.Modifier_Idf, &fakeEmbedder{dims: 4}},
		{"no dense vector", nil, qdrant.Modifier_Idf, &fakeEmbedder{dims: 4}},
		{"no idf modifier", nil, qdrant.Modifier_None, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := qdranttest.Start(t)
			createCollection(t, srv, "chunks", tt.dense, tt.modifier)
			_, err := New(context.Background(), testConfig(srv), sinktest.NewRecords(), tt.emb, nil)
			if !errors.Is(err, ErrCollectionMismatch) {
				t.Fatalf("New = %v, want ErrCollectionMismatch", err)
			}
		})
	}
	t.Run("fitting collection", func(t *testing.T) {
		srv := qdranttest.Start(t)
		createCollection(t, srv, "chunks", map[string]*qdrant.VectorParams{VectorDense: {Size: 4, Distance: qdrant.Distance_Cosine}}, qdrant.Modifier_Idf)
		if _, err := New(context.Background(), testConfig(srv), sinktest.NewRecords(), &fakeEmbedder{dims: 4}, nil); err != nil {
			t.Fatalf("New = %v", err)
		}
	})
}

func TestOverrideCollection(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	createCollection(t, srv, "misfit", nil, qdrant.Modifier_None)
	ctx := context.Background()

	doc, chunks := sinktest.Version("a.md", 1, "x")
	doc.Collection = "misfit"
	records.Begin(doc.ID, doc.Seq)
	err := s.Write(ctx, doc, chunks)
	if !fault.IsPermanent(err) || !errors.Is(err, ErrCollectionMismatch) {
		t.Fatalf("Write to a misfit collection = %v, want a permanent ErrCollectionMismatch", err)
	}

	// A new override collection is created lazily, once.
	srv.ResetCalls()
	for seq := uint64(2); seq <= 4; seq++ {
		doc, chunks := sinktest.Version("b.md", seq, "y", "z")
		doc.Collection = "other"
		records.Begin(doc.ID, doc.Seq)
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatal(err)
		}
	}
	creates := 0
	for _, c := range srv.Calls() {
		if c.Method == "Create" || c.Method == "CollectionExists" {
			creates++
		}
	}
	if creates != 2 {
		t.Errorf("%d Create/CollectionExists calls for three writes, want 2 (cached)", creates)
	}
	if n := len(srv.Points("other")); n != 2 {
		t.Errorf("%d points in other, want 2", n)
	}
	if n := len(srv.Points("chunks")); n != 0 {
		t.Errorf("%d points in chunks, want 0", n)
	}
}

func TestBatches(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk number %d", i)
	}
	doc, chunks := sinktest.Version("big.md", 7, texts...)
	records.Begin(doc.ID, doc.Seq)
	srv.ResetCalls()
	if err := s.Write(context.Background(), doc, chunks); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, c := range srv.Calls() {
		if c.Upserts() {
			sizes = append(sizes, c.Points)
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{44, 64, 64, 64, 64}) {
		t.Errorf("upsert batch sizes = %v, want 4×64 + 44", sizes)
	}
	if n := len(srv.Points("chunks")); n != 300 {
		t.Errorf("%d points, want 300", n)
	}
}

func TestSplitBatchesByBytes(t *testing.T) {
	// cuts returns the sizes of the requests the batcher cuts from the
	// points, queued by one Write.
	cuts := func(points []*qdrant.PointStruct) []int {
		var sizes []int
		record := func(_ context.Context, b *batch.Batch[item]) ([]struct{}, []error) {
			sizes = append(sizes, len(b.Items)) // one request at a time (Parallel 1)
			return nil, nil
		}
		b, err := batch.New(batchConfig(Config{Batch: 128, Parallel: 1}), record, weigh)
		if err != nil {
			t.Fatal(err)
		}
		doc := worker.Doc{ID: "d", Seq: 1}
		var q []item
		for _, p := range points {
			q = append(q, item{doc: &doc, p: p})
		}
		if _, err := b.Do(context.Background(), batch.Call[item]{Items: q}); err != nil {
			t.Fatal(err)
		}
		return sizes
	}
	big := strings.Repeat("x", 3<<20)
	var pts []*qdrant.PointStruct
	for i := range 5 {
		pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Payload: map[string]*qdrant.Value{"content": qdrant.NewValueString(big)}})
	}
	if sizes := cuts(pts); !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("requests of 5×3 MB = %v, want [2 2 1]", sizes)
	}
	huge := []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Payload: map[string]*qdrant.Value{"content": qdrant.NewValueString(strings.Repeat("y", 9<<20))}}}
	if sizes := cuts(huge); !slices.Equal(sizes, []int{1}) {
		t.Fatalf("a 9 MB point: requests %v, want [1]", sizes)
	}
}

func TestInvalidDataIsPermanent(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	ctx := context.Background()
	tests := []struct {
		name  string
		doc   worker.Doc
		chunk chunking.Chunk
	}{
		{"invalid utf-8 content", worker.Doc{ID: "u.md", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("bad \xff", nil)},
		{"invalid utf-8 metadata key", worker.Doc{ID: "k.md", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("ok", chunking.Metadata{{Key: "k\xff", Value: 1}})},
		{"unsupported metadata value", worker.Doc{ID: "v.md", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("ok", chunking.Metadata{{Key: "c", Value: complex(1, 2)}})},
		{"integer out of range", worker.Doc{ID: "i.md", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("ok", chunking.Metadata{{Key: "n", Value: uint64(1 << 63)}})},
		{"integer beyond 64 bits", worker.Doc{ID: "b.md", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("ok", chunking.Metadata{{Key: "n", Value: new(big.Int).Lsh(big.NewInt(1), 100)}})},
		{"invalid utf-8 doc id", worker.Doc{ID: "bad\xff", Seq: 1, Op: worker.OpUpsert}, chunking.NewChunk("ok", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			records.Begin(tt.doc.ID, tt.doc.Seq)
			err := s.Write(ctx, tt.doc, []worker.Chunk{{ID: sinktest.ChunkID(tt.doc.ID, 0), Chunk: tt.chunk}})
			if !fault.IsPermanent(err) {
				t.Fatalf("Write = %v, want a permanent error", err)
			}
			if strings.Contains(err.Error(), "unsupported value type *big.Int") {
				t.Errorf("Write = %v, want the error to say the integer is too big", err)
			}
		})
	}
	if err := s.Write(ctx, sinktest.Delete("d", 3), []worker.Chunk{{ID: sinktest.ChunkID("d", 0)}}); !fault.IsPermanent(err) {
		t.Errorf("delete with chunks = %v, want permanent", err)
	}
}

func TestServerDownThenBack(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	ctx := context.Background()
	doc, chunks := sinktest.Version("a.md", 1, "one", "two")
	records.Begin(doc.ID, doc.Seq)
	srv.SetUnavailable(true)
	for range 3 {
		err := s.Write(ctx, doc, chunks)
		if err == nil || fault.IsPermanent(err) {
			t.Fatalf("Write while down = %v, want a transient error", err)
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Write while down = %v, want Unavailable inside", err)
		}
		if dep, ok := fault.UnavailableDependency(err); !ok || dep != DependencyQdrant {
			t.Fatalf("Write while down = %v, want it marked as an outage of %q", err, DependencyQdrant)
		}
	}
	srv.SetUnavailable(false)
	if err := s.Write(ctx, doc, chunks); err != nil {
		t.Fatalf("Write after recovery = %v", err)
	}
	if got, want := must(reader(srv, "chunks").Chunks(ctx, "a.md")), sinktest.Want(chunks); !maps.Equal(got, want) {
		t.Fatalf("after recovery %v, want %v", got, want)
	}
	// A failure in the middle of the procedure (the version's one write,
	// its upserts and the delete of step 3) is transient too, and the
	// retry converges.
	doc2, chunks2 := sinktest.Version("a.md", 2, "uno")
	records.Begin(doc2.ID, doc2.Seq)
	srv.ResetCalls()
	srv.FailNext(0, codes.OK)
	var failed bool
	s.hook = func(_ context.Context, step Step, d worker.Doc) {
		if step == StepBegin && !failed {
			failed = true
			srv.FailNext(1, codes.DeadlineExceeded)
		}
	}
	if err := s.Write(ctx, doc2, chunks2); err == nil || fault.IsPermanent(err) {
		t.Fatalf("Write with a failing write = %v, want transient", err)
	}
	if err := s.Write(ctx, doc2, chunks2); err != nil {
		t.Fatal(err)
	}
	if got, want := must(reader(srv, "chunks").Chunks(ctx, "a.md")), sinktest.Want(chunks2); !maps.Equal(got, want) {
		t.Fatalf("after retry %v, want %v", got, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestRedeliveryWritesTheSamePoints(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, &fakeEmbedder{dims: 2})
	doc, chunks := sinktest.Version("r.md", 3, "alpha beta", "gamma", "delta epsilon zeta")
	records.Begin(doc.ID, doc.Seq)
	ctx := context.Background()
	if err := s.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	first := srv.Points("chunks")
	for range 2 {
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatal(err)
		}
	}
	again := srv.Points("chunks")
	if len(first) != len(again) {
		t.Fatalf("%d points after redelivery, want %d", len(again), len(first))
	}
	for i := range first {
		if first[i].String() != again[i].String() {
			t.Fatalf("point %d changed on redelivery:\n%v\n%v", i, first[i], again[i])
		}
	}
}

func TestNotReadyUntilEmbedderAnswers(t *testing.T) {
	srv := qdranttest.Start(t)
	emb := &fakeEmbedder{dims: 3, probeErr: errors.New("connection refused")}
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, emb)
	ctx := context.Background()
	if s.Ready(ctx) {
		t.Fatal("Ready before the embedder answered")
	}
	doc, chunks := sinktest.Version("a.md", 1, "x")
	records.Begin(doc.ID, doc.Seq)
	err := s.Write(ctx, doc, chunks)
	if dep, ok := fault.UnavailableDependency(err); !ok || dep != DependencyEmbedder || fault.IsPermanent(err) {
		t.Fatalf("Write while not ready = %v, want an outage of %q", err, DependencyEmbedder)
	}
	if err := s.Probe(ctx, DependencyEmbedder); err == nil {
		t.Fatal("Probe(embedder) passed while the embedder does not answer")
	}
	emb.mu.Lock()
	emb.probeErr = nil
	emb.mu.Unlock()
	if err := s.Probe(ctx, DependencyEmbedder); err != nil {
		t.Fatalf("Probe(embedder) = %v after the embedder answered", err)
	}
	if !s.Ready(ctx) {
		t.Fatal("not Ready after the embedder answered")
	}
	if err := s.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err         error
		permanent   bool
		unavailable bool
		delay       time.Duration
	}{
		{status.Error(codes.InvalidArgument, "Wrong input: Vector dimension error"), true, false, 0},
		{status.Error(codes.FailedPrecondition, "x"), true, false, 0},
		{status.Error(codes.Unavailable, "down"), false, true, 0},
		{status.Error(codes.DeadlineExceeded, "slow"), false, true, 0},
		{status.Error(codes.ResourceExhausted, "busy"), false, true, 0},
		{context.DeadlineExceeded, false, true, 0},
		{status.Error(codes.NotFound, "Collection `x` doesn't exist!"), false, false, 0},
		{status.Error(codes.Unauthenticated, "bad key"), false, false, 0},
		{status.Error(codes.Internal, "boom"), false, false, 0},
		{status.Error(codes.Canceled, "context canceled"), false, false, 0},
		{context.Canceled, false, false, 0},
		{&qdrant.QdrantResourceExhaustedError{Reason: "rate", RetryAfterS: 3}, false, true, 3 * time.Second},
		{fmt.Errorf("Upsert() failed: %w", status.Error(codes.InvalidArgument, "bad")), true, false, 0},
		{fmt.Errorf("Upsert() failed: %w", status.Error(codes.Unavailable, "connection refused")), false, true, 0},
	}
	for _, tt := range tests {
		got := classify("op", tt.err)
		if fault.IsPermanent(got) != tt.permanent {
			t.Errorf("classify(%v) permanent = %v, want %v", tt.err, fault.IsPermanent(got), tt.permanent)
		}
		dep, unavailable := fault.UnavailableDependency(got)
		if unavailable != tt.unavailable || unavailable && dep != DependencyQdrant {
			t.Errorf("classify(%v) unavailable = %v (%q), want %v", tt.err, unavailable, dep, tt.unavailable)
		}
		if d, _ := fault.RetryDelay(got); d != tt.delay {
			t.Errorf("classify(%v) delay = %v, want %v", tt.err, d, tt.delay)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("classify(%v) lost the cause: %v", tt.err, got)
		}
	}
}

// TestProbe: the Qdrant probe fails while Qdrant does not answer (down or
// hung past Config.Timeout) and passes once it does; a default collection
// that disappeared is set up again by the next write.
func TestProbe(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	cfg := testConfig(srv)
	// The hang below lasts this long; the probes that must pass have as
	// long, far more than a loaded machine needs for one call.
	cfg.Timeout = time.Second
	var logs testutil.SyncBuffer
	s, err := New(context.Background(), cfg, records, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	if err := s.Probe(ctx, DependencyQdrant); err != nil {
		t.Fatalf("Probe = %v while Qdrant answers", err)
	}
	srv.SetUnavailable(true)
	if err := s.Probe(ctx, DependencyQdrant); !fault.IsUnavailable(err) {
		t.Errorf("Probe = %v while Qdrant is unavailable, want an outage", err)
	}
	srv.SetUnavailable(false)
	srv.Hang()
	if err := s.Probe(ctx, DependencyQdrant); !fault.IsUnavailable(err) {
		t.Errorf("Probe = %v while Qdrant hangs, want an outage after the timeout", err)
	}
	srv.Release()
	if err := s.Probe(ctx, DependencyQdrant); err != nil {
		t.Fatalf("Probe = %v after the hang", err)
	}
	// A Qdrant that lost the collection answers; the next write creates it.
	if err := srv.Client(t).DeleteCollection(ctx, "chunks"); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(ctx, DependencyQdrant); err != nil {
		t.Fatalf("Probe = %v without the collection", err)
	}
	// Its points are lost, and the records still say done: said at error
	// level, once.
	if n := strings.Count(logs.String(), "level=ERROR msg=\"qdrantsink: collection is gone"); n != 1 {
		t.Errorf("%d error lines on the lost collection, want 1:\n%s", n, logs.String())
	}
	doc, chunks := sinktest.Version("p.md", 1, "one")
	records.Begin(doc.ID, doc.Seq)
	if err := s.Write(ctx, doc, chunks); err != nil {
		t.Fatalf("Write after the collection was lost = %v", err)
	}
	if err := s.Probe(ctx, "unknown"); err != nil {
		t.Errorf("Probe(unknown) = %v, want nil", err)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"addr without port", func(c *Config) { c.Addr = "localhost" }, "Addr"},
		{"addr bad port", func(c *Config) { c.Addr = "h:99999" }, "Addr"},
		{"timeout zero", func(c *Config) { c.Timeout = 0 }, "Timeout"},
		{"empty collection", func(c *Config) { c.Collection = "" }, "Collection"},
		{"batch too small", func(c *Config) { c.Batch = 10 }, "Batch"},
		{"batch too big", func(c *Config) { c.Batch = 1000 }, "Batch"},
		{"parallel zero", func(c *Config) { c.Parallel = 0 }, "Parallel"},
		{"avgdl zero", func(c *Config) { c.AvgDL = 0 }, "AvgDL"},
		{"ca without tls", func(c *Config) { c.TLSCA = "/ca.pem" }, "TLSCA"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.mod(&c)
		err := c.Validate()
		var fe *fault.FieldError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &fe) || fe.Field != tt.want {
			t.Errorf("%s: Validate() = %v, want ErrInvalidConfig of field %s", tt.name, err, tt.want)
		}
	}
	c := DefaultConfig()
	c.APIKey = "secret-key"
	var sb strings.Builder
	fmt.Fprint(&sb, c.LogValue())
	if strings.Contains(sb.String(), "secret-key") {
		t.Errorf("LogValue leaks the API key: %s", sb.String())
	}
}

// TestSupersededRemovesInterruptedUpserts: an older version upserts after
// the newer one's step 3, then fails before its re-check; its redelivery is
// superseded at step 1, and Superseded removes what it left.
func TestSupersededRemovesInterruptedUpserts(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, nil)
	ctx := context.Background()
	old, oldChunks := sinktest.Version("s.md", 1, "o0", "o1", "o2")
	newer, newChunks := sinktest.Version("s.md", 2, "n0")
	records.Begin(old.ID, old.Seq)
	records.Begin(newer.ID, newer.Seq)
	if err := s.Write(ctx, newer, newChunks); err != nil {
		t.Fatal(err)
	}
	s.hook = func(_ context.Context, step Step, d worker.Doc) {
		if step == StepUpserted && d.Seq == 1 {
			srv.FailNext(1, codes.Unavailable) // step 3 fails
		}
	}
	if err := s.Write(ctx, old, oldChunks); err == nil {
		t.Fatal("Write with a failing step 3 succeeded")
	}
	s.hook = nil
	got := must(reader(srv, "chunks").Chunks(ctx, "s.md"))
	if len(got) != 3 {
		t.Fatalf("after the interrupted older write: %d points, want 3 (n0 + stale o1, o2)", len(got))
	}
	// The redelivery is superseded at step 1; the worker calls Superseded.
	if records.Begin(old.ID, old.Seq) {
		t.Fatal("the older version began again")
	}
	if err := s.Superseded(ctx, old); err != nil {
		t.Fatal(err)
	}
	if got, want := must(reader(srv, "chunks").Chunks(ctx, "s.md")), sinktest.Want(newChunks); !maps.Equal(got, want) {
		t.Fatalf("after Superseded: %v, want %v", got, want)
	}
}

// TestWithEmbedClient runs the sink with the real embeddings client
// against the test embeddings server: dense vectors land, and a chunk over
// the input limit is a permanent error before any request.
func TestWithEmbedClient(t *testing.T) {
	api := embedtest.Start(t, embedtest.Config{Dims: 2})
	cfg := embed.DefaultConfig()
	cfg.URL, cfg.Model, cfg.MaxInputChars = api.URL(), "m", 20
	client, err := embed.New(cfg, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	s := newSink(t, srv, records, client)
	ctx := context.Background()
	doc, chunks := sinktest.Version("e.md", 1, "short", "also short")
	records.Begin(doc.ID, doc.Seq)
	if err := s.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	for _, p := range srv.Points("chunks") {
		d := p.GetVectors().GetVectors().GetVectors()[VectorDense].GetDense().GetData()
		if want := embedtest.Vector("m", p.GetPayload()[FieldContent].GetStringValue(), 2); !slices.Equal(d, want) {
			t.Errorf("dense = %v, want %v", d, want)
		}
	}
	before := api.Stats().Requests
	long, longChunks := sinktest.Version("l.md", 2, "fine", strings.Repeat("x", 21))
	records.Begin(long.ID, long.Seq)
	err = s.Write(ctx, long, longChunks)
	if !fault.IsPermanent(err) || !errors.Is(err, embed.ErrInputTooLong) {
		t.Fatalf("Write with an over-long chunk = %v, want permanent ErrInputTooLong", err)
	}
	if api.Stats().Requests != before {
		t.Errorf("the embedder was called for a document with an over-long chunk")
	}
}

func TestTLSCAFile(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := testConfig(srv)
	cfg.TLS = true
	cfg.TLSCA = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := New(context.Background(), cfg, sinktest.NewRecords(), nil, nil); err == nil || !strings.Contains(err.Error(), "CHUNKSTREAM_QDRANT_TLS_CA") {
		t.Fatalf("New with a missing CA file = %v", err)
	}
	if err := os.WriteFile(cfg.TLSCA, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), cfg, sinktest.NewRecords(), nil, nil); err == nil || !strings.Contains(err.Error(), "no PEM certificates") {
		t.Fatalf("New with a CA file without certificates = %v", err)
	}
}

// TestNewWaitsForQdrant: a sink started while Qdrant answers Unavailable
// (still starting) waits for it within its context instead of failing,
// and fails with the last error when the context ends first; a permanent
// refusal (a server too old) still fails at once.
func TestNewWaitsForQdrant(t *testing.T) {
	srv := qdranttest.Start(t)
	srv.SetUnavailable(true)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := New(ctx, testConfig(srv), sinktest.NewRecords(), nil, nil)
		if err == nil {
			_ = s.Close()
		}
		done <- err
	}()
	// Released only after New has asked at least twice: it waited.
	for healthChecks(srv) < 2 {
		select {
		case err := <-done:
			t.Fatalf("New returned while Qdrant was unavailable: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	srv.SetUnavailable(false)
	if err := <-done; err != nil {
		t.Fatalf("New after Qdrant came up: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	srv.SetUnavailable(true)
	// The context ends while New waits between health checks (the last
	// answer, Unavailable) or, on a slow machine, during one (its deadline).
	_, err := New(ctx, testConfig(srv), sinktest.NewRecords(), nil, nil)
	if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded || !strings.Contains(err.Error(), "health check") {
		t.Errorf("New with Qdrant down until its context ended = %v, want the health check's Unavailable or deadline error", err)
	}
	srv.SetUnavailable(false)
	srv.SetVersion("1.15.0")
	if _, err := New(context.Background(), testConfig(srv), sinktest.NewRecords(), nil, nil); !errors.Is(err, ErrServerTooOld) {
		t.Errorf("New against Qdrant 1.15 = %v, want ErrServerTooOld at once", err)
	}
}

func healthChecks(srv *qdranttest.Server) int {
	n := 0
	for _, c := range srv.Calls() {
		if c.Method == "HealthCheck" {
			n++
		}
	}
	return n
}
