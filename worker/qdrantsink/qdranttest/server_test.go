package qdranttest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

func setup(t *testing.T) (*qdranttest.Server, *qdrant.Client) {
	t.Helper()
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	err := c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"dense": {Size: 3, Distance: qdrant.Distance_Cosine},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			"bm25": {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
	})
	if err != nil {
		t.Fatalf("CreateCollection: %v", err)
	}
	return srv, c
}

func pt(id string, doc string, seq int64, text string) *qdrant.PointStruct {
	return &qdrant.PointStruct{
		Id:      qdrant.NewID(id),
		Payload: qdrant.NewValueMap(map[string]any{"doc_id": doc, "ingest_seq": seq, "content": text}),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
			"dense": qdrant.NewVectorDense([]float32{1, 0, 0}),
			"bm25":  qdrant.NewVectorSparse([]uint32{7, 3}, []float32{0.5, 1}),
		}),
	}
}

func uuidN(n int) string { return fmt.Sprintf("00000000-0000-5000-8000-%012d", n) }

func contents(t *testing.T, c *qdrant.Client, coll string) []string {
	t.Helper()
	pts, err := c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: coll, Limit: qdrant.PtrOf(uint32(1000)), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatalf("Scroll: %v", err)
	}
	var out []string
	for _, p := range pts {
		out = append(out, p.GetPayload()["content"].GetStringValue())
	}
	return out
}

func TestHealthVersion(t *testing.T) {
	srv := qdranttest.Start(t)
	srv.SetVersion("1.15.0")
	c := srv.Client(t)
	r, err := c.HealthCheck(context.Background())
	if err != nil || r.GetVersion() != "1.15.0" {
		t.Fatalf("HealthCheck = %v, %v; want 1.15.0", r, err)
	}
	srv.SetVersion("1.17.0")
	if r, _ := c.HealthCheck(context.Background()); r.GetVersion() != "1.17.0" {
		t.Fatalf("HealthCheck after SetVersion = %q", r.GetVersion())
	}
}

func TestCollections(t *testing.T) {
	srv, c := setup(t)
	ctx := context.Background()
	if ok, err := c.CollectionExists(ctx, "c"); !ok || err != nil {
		t.Fatalf("CollectionExists(c) = %v, %v", ok, err)
	}
	if ok, err := c.CollectionExists(ctx, "nope"); ok || err != nil {
		t.Fatalf("CollectionExists(nope) = %v, %v", ok, err)
	}
	err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c"})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("CreateCollection twice: %v, want AlreadyExists", err)
	}
	err = c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "bad", VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 0, Distance: qdrant.Distance_Cosine})})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("CreateCollection size 0: %v, want InvalidArgument", err)
	}
	if _, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "doc_id", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: qdrant.PtrOf(true)}); err != nil {
		t.Fatal(err)
	}
	info, err := c.GetCollectionInfo(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()["dense"].GetSize(); got != 3 {
		t.Errorf("dense size = %d, want 3", got)
	}
	if got := info.GetConfig().GetParams().GetSparseVectorsConfig().GetMap()["bm25"].GetModifier(); got != qdrant.Modifier_Idf {
		t.Errorf("bm25 modifier = %v, want Idf", got)
	}
	if got := info.GetPayloadSchema()["doc_id"].GetDataType(); got != qdrant.PayloadSchemaType_Keyword {
		t.Errorf("doc_id schema = %v", got)
	}
	names, err := c.ListCollections(ctx)
	if err != nil || !slices.Equal(names, []string{"c"}) {
		t.Errorf("ListCollections = %v, %v", names, err)
	}
	if _, err := c.GetCollectionInfo(ctx, "nope"); status.Code(err) != codes.NotFound {
		t.Errorf("GetCollectionInfo(nope): %v, want NotFound", err)
	}
	_ = srv
}

func TestUpsertErrors(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	good := pt(uuidN(1), "d", 1, "x")
	tests := []struct {
		name string
		coll string
		p    *qdrant.PointStruct
		want codes.Code
	}{
		{"unknown collection", "nope", good, codes.NotFound},
		{"wrong vector name", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"other": qdrant.NewVectorDense([]float32{1, 2, 3})})}, codes.InvalidArgument},
		{"unnamed vector", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectors(1, 2, 3)}, codes.InvalidArgument},
		{"wrong dimension", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense([]float32{1, 2})})}, codes.InvalidArgument},
		{"sparse as dense", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorDense([]float32{1, 2, 3})})}, codes.InvalidArgument},
		{"repeated sparse index", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorSparse([]uint32{4, 4}, []float32{1, 2})})}, codes.InvalidArgument},
		{"sparse length mismatch", "c", &qdrant.PointStruct{Id: qdrant.NewID(uuidN(1)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"bm25": qdrant.NewVectorSparse([]uint32{4}, []float32{1, 2})})}, codes.InvalidArgument},
		{"bad uuid", "c", &qdrant.PointStruct{Id: qdrant.NewID("not-a-uuid")}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: tt.coll, Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{good, tt.p}})
			if status.Code(err) != tt.want {
				t.Fatalf("Upsert(%s) = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
	// A rejected request applies nothing, not even its valid points.
	if n, _ := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); n != 0 {
		t.Fatalf("Count after rejected upserts = %d, want 0", n)
	}
	// Invalid UTF-8 never reaches the server: the codec refuses it.
	bad := pt(uuidN(2), "d", 1, "ok")
	bad.Payload["content"] = qdrant.NewValueString("bad \xff")
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{bad}}); err == nil {
		t.Fatal("Upsert with invalid UTF-8 succeeded")
	}
	if n, _ := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); n != 0 {
		t.Fatalf("Count after invalid UTF-8 = %d, want 0", n)
	}
}

func TestUpdateFilter(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	up := func(filter *qdrant.Filter, pts ...*qdrant.PointStruct) {
		t.Helper()
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: pts, UpdateFilter: filter}); err != nil {
			t.Fatal(err)
		}
	}
	up(nil, pt(uuidN(1), "d", 5, "a5"), pt(uuidN(2), "d", 3, "b3"))
	older := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("ingest_seq", &qdrant.Range{Lt: qdrant.PtrOf(4.0)})}}
	// seq 4 writes three points: id1 exists with seq 5 (kept), id2 with 3 (overwritten), id3 new (inserted).
	up(older, pt(uuidN(1), "d", 4, "a4"), pt(uuidN(2), "d", 4, "b4"), pt(uuidN(3), "d", 4, "c4"))
	if got, want := contents(t, c, "c"), []string{"a5", "b4", "c4"}; !slices.Equal(got, want) {
		t.Fatalf("after update_filter upsert: %v, want %v", got, want)
	}
}

func TestDeleteScrollCountGet(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	var pts []*qdrant.PointStruct
	for i := 1; i <= 25; i++ {
		doc := "d1"
		if i%2 == 0 {
			doc = "d2"
		}
		pts = append(pts, pt(uuidN(i), doc, int64(i), fmt.Sprint(i)))
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
		t.Fatal(err)
	}
	// Scroll pages in id order.
	var all []string
	var offset *qdrant.PointId
	for {
		page, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(10)), Offset: offset, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			all = append(all, p.GetPayload()["content"].GetStringValue())
		}
		if next == nil {
			break
		}
		offset = next
	}
	if len(all) != 25 || all[0] != "1" || all[24] != "25" {
		t.Fatalf("scrolled %v", all)
	}
	d1 := qdrant.NewMatch("doc_id", "d1")
	n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c", Filter: &qdrant.Filter{Must: []*qdrant.Condition{d1}}, Exact: qdrant.PtrOf(true)})
	if err != nil || n != 13 {
		t.Fatalf("Count(d1) = %d, %v; want 13", n, err)
	}
	// Delete d1's points with ingest_seq < 10: 1,3,5,7,9.
	_, err = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{
		d1, qdrant.NewRange("ingest_seq", &qdrant.Range{Lt: qdrant.PtrOf(10.0)}),
	}})})
	if err != nil {
		t.Fatal(err)
	}
	// Delete d1's point with ingest_seq = 11 by match.
	_, err = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{d1, qdrant.NewMatchInt("ingest_seq", 11)}})})
	if err != nil {
		t.Fatal(err)
	}
	// Delete by ids (one missing id is fine).
	_, err = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(qdrant.NewID(uuidN(2)), qdrant.NewID(uuidN(99)))})
	if err != nil {
		t.Fatal(err)
	}
	n, _ = c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
	if n != 25-5-1-1 {
		t.Fatalf("Count after deletes = %d, want 18", n)
	}
	got, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: "c", Ids: []*qdrant.PointId{qdrant.NewID(uuidN(13)), qdrant.NewID(uuidN(1))}, WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil || len(got) != 1 {
		t.Fatalf("Get = %v, %v; want 1 point", got, err)
	}
	vs := got[0].GetVectors().GetVectors().GetVectors()
	if d := vs["dense"].GetDense().GetData(); !slices.Equal(d, []float32{1, 0, 0}) {
		t.Errorf("dense = %v", d)
	}
	if s := vs["bm25"].GetSparse(); !slices.Equal(s.GetIndices(), []uint32{7, 3}) {
		t.Errorf("sparse = %v", s)
	}
	_, err = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("content", "x")}})})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("text match: %v, want Unimplemented", err)
	}
}

func TestFailureInjection(t *testing.T) {
	srv, c := setup(t)
	ctx := context.Background()
	srv.FailNext(2, codes.Internal)
	for i := range 2 {
		if _, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); status.Code(err) != codes.Internal {
			t.Fatalf("call %d: %v, want Internal", i, err)
		}
	}
	if _, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil {
		t.Fatalf("third call: %v", err)
	}
	// A window far longer than the test fails every call in it; a short
	// one ends by itself.
	srv.UnavailableFor(time.Hour)
	for i := range 2 {
		if _, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d while unavailable: %v, want Unavailable", i, err)
		}
	}
	srv.UnavailableFor(time.Millisecond)
	var last error
	testutil.WaitFor(t, 10*time.Second, "the end of a 1 ms unavailability", func() (bool, string) {
		_, last = c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
		return last == nil, fmt.Sprint(last)
	})
	srv.ResetCalls()
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Ordering: &qdrant.WriteOrdering{Type: qdrant.WriteOrderingType_Strong}, Points: []*qdrant.PointStruct{pt(uuidN(1), "d", 1, "a")}}); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 1 || !calls[0].Wait || calls[0].Ordering != qdrant.WriteOrderingType_Strong || calls[0].Points != 1 || !strings.EqualFold(calls[0].Method, "upsert") {
		t.Fatalf("Calls = %+v", calls)
	}
}

// TestHang: while hung, calls wait: one with a deadline ends with
// DeadlineExceeded, one without waits until Release and then succeeds.
func TestHang(t *testing.T) {
	srv, c := setup(t)
	ctx := context.Background()
	srv.Hang()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := c.HealthCheck(short)
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("HealthCheck while hung = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Count answered while hung: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	srv.Release()
	if err := <-done; err != nil {
		t.Fatalf("Count after Release = %v", err)
	}
	if _, err := c.HealthCheck(ctx); err != nil {
		t.Fatalf("HealthCheck after Release = %v", err)
	}
}

// TestCosineVectorsAreNormalized: the dense vectors of a cosine vector are
// stored and returned with length 1, as Qdrant does; those of a dot
// vector as they were sent.
func TestCosineVectorsAreNormalized(t *testing.T) {
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	err := c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: "n",
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"cos": {Size: 2, Distance: qdrant.Distance_Cosine},
			"dot": {Size: 2, Distance: qdrant.Distance_Dot},
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range [][]float32{{3, 4}, {0, 0}, {0.6, 0.8}} {
		_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "n", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{
			Id:      qdrant.NewIDNum(uint64(i + 1)),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"cos": qdrant.NewVectorDense(v), "dot": qdrant.NewVectorDense(v)}),
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	pts, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "n", WithVectors: qdrant.NewWithVectorsInclude("cos", "dot")})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2][]float32{{{0.6, 0.8}, {3, 4}}, {{0, 0}, {0, 0}}, {{0.6, 0.8}, {0.6, 0.8}}}
	for i, p := range pts {
		vs := p.GetVectors().GetVectors().GetVectors()
		if got := vs["cos"].GetDense().GetData(); !slices.Equal(got, want[i][0]) {
			t.Errorf("point %d: cosine vector %v, want %v", i+1, got, want[i][0])
		}
		if got := vs["dot"].GetDense().GetData(); !slices.Equal(got, want[i][1]) {
			t.Errorf("point %d: dot vector %v, want %v", i+1, got, want[i][1])
		}
	}
}

// TestKeywordIndexSameResults: filters narrowed by a keyword payload index
// select exactly what a scan selects, through upserts that change the
// indexed value, deletes by id and by filter, array values, and an index
// created after the points.
func TestKeywordIndexSameResults(t *testing.T) {
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, name := range []string{"indexed", "late", "scanned"} {
		if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "indexed", FieldName: "doc", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: qdrant.PtrOf(true)}); err != nil {
		t.Fatal(err)
	}
	apply := func(f func(coll string) error) {
		t.Helper()
		for _, name := range []string{"indexed", "late", "scanned"} {
			if err := f(name); err != nil {
				t.Fatal(err)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	docs := []any{"a", "b", "c", []any{"a", "c"}, 7}
	for step := range 300 {
		id := qdrant.NewIDNum(uint64(rng.IntN(40)))
		switch rng.IntN(4) {
		case 0, 1:
			pl := map[string]any{"doc": docs[rng.IntN(len(docs))], "n": step}
			apply(func(coll string) error {
				_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{Id: id, Payload: qdrant.NewValueMap(pl)}}})
				return err
			})
		case 2:
			apply(func(coll string) error {
				_, err := c.Delete(ctx, &qdrant.DeletePoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(id)})
				return err
			})
		case 3:
			f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("doc", "b"), qdrant.NewRange("n", &qdrant.Range{Lt: qdrant.PtrOf(float64(step - 50))})}}
			apply(func(coll string) error {
				_, err := c.Delete(ctx, &qdrant.DeletePoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelectorFilter(f)})
				return err
			})
		}
		if step == 150 {
			if _, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "late", FieldName: "doc", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: qdrant.PtrOf(true)}); err != nil {
				t.Fatal(err)
			}
		}
		if step%10 != 0 {
			continue
		}
		for _, f := range []*qdrant.Filter{
			{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("doc", "a")}},
			{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("doc", "b", "c")}},
			{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("doc", "c"), qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(float64(step / 2))})}},
		} {
			var want string
			for _, name := range []string{"scanned", "indexed", "late"} {
				pts, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: name, Filter: f, Limit: qdrant.PtrOf(uint32(1000))})
				if err != nil {
					t.Fatal(err)
				}
				n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name, Filter: f, Exact: qdrant.PtrOf(true)})
				if err != nil {
					t.Fatal(err)
				}
				var ids []uint64
				for _, p := range pts {
					ids = append(ids, p.GetId().GetNum())
				}
				got := fmt.Sprint(ids, n)
				if name == "scanned" {
					want = got
				} else if got != want {
					t.Fatalf("step %d, %s: %s selects %s, a scan %s", step, f, name, got, want)
				}
			}
		}
	}
}

// TestAliases: an alias stands for its collection in every call; a switch
// moves it in one request; deleting the collection deletes its aliases.
func TestAliases(t *testing.T) {
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, name := range []string{"v1", "v2"} {
		if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: name}); err != nil {
			t.Fatal(err)
		}
		_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: qdrant.PtrOf(true),
			Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1), Payload: qdrant.NewValueMap(map[string]any{"in": name})}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	in := func() string {
		t.Helper()
		pts, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "live", WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			return status.Code(err).String()
		}
		return pts[0].GetPayload()["in"].GetStringValue()
	}
	if err := c.CreateAlias(ctx, "live", "v1"); err != nil {
		t.Fatal(err)
	}
	if got := in(); got != "v1" {
		t.Errorf("scroll of the alias = %s, want v1's point", got)
	}
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{qdrant.NewAliasDelete("live"), qdrant.NewAliasCreate("live", "v2")}); err != nil {
		t.Fatal(err)
	}
	if got := in(); got != "v2" {
		t.Errorf("after the switch, scroll of the alias = %s, want v2's point", got)
	}
	// A failing operation changes nothing.
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{qdrant.NewAliasDelete("live"), qdrant.NewAliasCreate("live", "v3")}); status.Code(err) != codes.NotFound {
		t.Errorf("alias to a missing collection = %v, want NotFound", err)
	}
	if got, err := c.ListAliases(ctx); err != nil || len(got) != 1 || got[0].GetCollectionName() != "v2" {
		t.Errorf("ListAliases = %v, %v; want live → v2", got, err)
	}
	if err := c.DeleteCollection(ctx, "v2"); err != nil {
		t.Fatal(err)
	}
	if got := in(); got != codes.NotFound.String() {
		t.Errorf("scroll of the alias of a deleted collection = %s, want NotFound", got)
	}
}

// BenchmarkKeywordIndex counts the points of one document, by a must
// match on its keyword field, among 20,000 points of 2,000 documents, in a
// collection with a keyword index on the field and in one without, the two
// in one loop: simple/fast is what the index saves a sink that deletes a
// document's older chunks by filter.
func BenchmarkKeywordIndex(b *testing.B) {
	srv := qdranttest.Start(b)
	c := srv.Client(b)
	ctx := context.Background()
	const docs, perDoc = 2000, 10
	for _, name := range []string{"indexed", "scanned"} {
		if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: name}); err != nil {
			b.Fatal(err)
		}
		var pts []*qdrant.PointStruct
		for i := range docs * perDoc {
			pts = append(pts, &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Payload: qdrant.NewValueMap(map[string]any{"doc": fmt.Sprint(i / perDoc)})})
		}
		if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: pts}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "indexed", FieldName: "doc", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: qdrant.PtrOf(true)}); err != nil {
		b.Fatal(err)
	}
	count := func(coll string, doc int) time.Duration {
		start := time.Now()
		n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Exact: qdrant.PtrOf(true), Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("doc", fmt.Sprint(doc))}}})
		if err != nil || n != perDoc {
			b.Fatalf("Count(%s, doc %d) = %d, %v; want %d", coll, doc, n, err, perDoc)
		}
		return time.Since(start)
	}
	var fast, simple time.Duration
	doc := 0
	for b.Loop() {
		fast += count("indexed", doc)
		simple += count("scanned", doc)
		doc = (doc + 7) % docs
	}
	b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
}
