package qdranttest_test

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// target is a Qdrant the feature tests run against: the double, or the
// real Qdrant qdranttest.EnvURL names, with a collection of the test's
// own named coll.
type target struct {
	c    *qdrant.Client
	coll string
}

// targets returns the double (at version 1.18.3) and, as a subtest that
// skips without qdranttest.EnvURL, the real Qdrant: each check runs on
// both, so the double is held to what Qdrant does.
func forTargets(t *testing.T, check func(t *testing.T, tg target)) {
	t.Run("double", func(t *testing.T) {
		srv := qdranttest.Start(t)
		srv.SetVersion("1.18.3")
		check(t, target{c: srv.Client(t), coll: "c"})
	})
	t.Run("real", func(t *testing.T) {
		r := qdranttest.Real(t)
		check(t, target{c: r.Client(t), coll: r.Collection(t)})
	})
}

func (tg target) create(t *testing.T, strict *qdrant.StrictModeConfig) {
	t.Helper()
	err := tg.c.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName:   tg.coll,
		VectorsConfig:    qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"dense": {Size: 3, Distance: qdrant.Distance_Cosine}}),
		StrictModeConfig: strict,
	})
	if err != nil {
		t.Fatalf("CreateCollection: %v", err)
	}
	for _, f := range []string{"doc_id", "tenant"} {
		req := &qdrant.CreateFieldIndexCollection{CollectionName: tg.coll, FieldName: f, FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: qdrant.PtrOf(true)}
		if f == "tenant" {
			req.FieldIndexParams = qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(true)})
		}
		if _, err := tg.c.CreateFieldIndex(context.Background(), req); err != nil {
			t.Fatalf("CreateFieldIndex(%s): %v", f, err)
		}
	}
	if _, err := tg.c.CreateFieldIndex(context.Background(), &qdrant.CreateFieldIndexCollection{CollectionName: tg.coll, FieldName: "seq",
		FieldType: qdrant.FieldType_FieldTypeInteger.Enum(), Wait: qdrant.PtrOf(true)}); err != nil {
		t.Fatalf("CreateFieldIndex(seq): %v", err)
	}
}

func point(n int, doc, tenant string, seq int64) *qdrant.PointStruct {
	pl := map[string]any{"doc_id": doc, "seq": seq}
	if tenant != "" {
		pl["tenant"] = tenant
	}
	return &qdrant.PointStruct{Id: qdrant.NewID(uuidN(n)), Payload: qdrant.NewValueMap(pl),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense([]float32{1, float32(n), 0})})}
}

func (tg target) ids(t *testing.T, f *qdrant.Filter) []string {
	t.Helper()
	pts, err := tg.c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: tg.coll, Filter: f, Limit: qdrant.PtrOf(uint32(100))})
	if err != nil {
		t.Fatalf("Scroll: %v", err)
	}
	var out []string
	for _, p := range pts {
		out = append(out, p.GetId().GetUuid())
	}
	return out
}

func upsertOp(f *qdrant.Filter, pts ...*qdrant.PointStruct) *qdrant.PointsUpdateOperation {
	return qdrant.NewPointsUpdateUpsert(&qdrant.PointsUpdateOperation_PointStructList{Points: pts, UpdateFilter: f})
}

func deleteOp(f *qdrant.Filter) *qdrant.PointsUpdateOperation {
	return qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{Points: qdrant.NewPointsSelectorFilter(f)})
}

// TestUpdateBatch: a batch update applies its operations in order (an
// upsert with update_filter, then a delete of the older version), and
// stops at the first that fails, those before it applied.
func TestUpdateBatch(t *testing.T) {
	forTargets(t, func(t *testing.T, tg target) {
		ctx := context.Background()
		tg.create(t, nil)
		if _, err := tg.c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true),
			Points: []*qdrant.PointStruct{point(1, "a", "", 1), point(2, "a", "", 1)}}); err != nil {
			t.Fatal(err)
		}
		older := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("doc_id", "a"), qdrant.NewRange("seq", &qdrant.Range{Lt: qdrant.PtrOf(2.0)})}}
		res, err := tg.c.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true),
			Ordering:   &qdrant.WriteOrdering{Type: qdrant.WriteOrderingType_Strong},
			Operations: []*qdrant.PointsUpdateOperation{upsertOp(older, point(1, "a", "", 2)), deleteOp(older)}})
		if err != nil || len(res) != 2 {
			t.Fatalf("UpdateBatch = %v, %v; want two results", res, err)
		}
		if got := tg.ids(t, nil); len(got) != 1 || got[0] != uuidN(1) {
			t.Fatalf("points %v, want only the new version's %s", got, uuidN(1))
		}
		bad := &qdrant.PointStruct{Id: qdrant.NewID(uuidN(9)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense([]float32{1})})}
		_, err = tg.c.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true),
			Operations: []*qdrant.PointsUpdateOperation{upsertOp(nil, point(3, "b", "", 1)), upsertOp(nil, bad), upsertOp(nil, point(4, "b", "", 1))}})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("UpdateBatch with a bad operation = %v, want InvalidArgument", err)
		}
		if got := tg.ids(t, nil); len(got) != 2 {
			t.Errorf("points %v after a batch failing at its second operation, want the first applied and the third not", got)
		}
	})
}

// TestVectorNames: a named vector is added to a live collection (its
// points lack it until updated), filled by UpdateVectors (update_filter
// honoured, a missing point NotFound) and removed; names in use or
// unknown are refused.
func TestVectorNames(t *testing.T) {
	forTargets(t, func(t *testing.T, tg target) {
		ctx := context.Background()
		tg.create(t, nil)
		if _, err := tg.c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true),
			Points: []*qdrant.PointStruct{point(1, "a", "", 1), point(2, "a", "", 2)}}); err != nil {
			t.Fatal(err)
		}
		create := func(name string, size uint64) error {
			_, err := tg.c.CreateVectorName(ctx, &qdrant.CreateVectorNameRequest{CollectionName: tg.coll, VectorName: name, Wait: qdrant.PtrOf(true),
				VectorConfig: &qdrant.CreateVectorNameRequest_DenseConfig{DenseConfig: &qdrant.DenseVectorCreationConfig{Size: size, Distance: qdrant.Distance_Cosine}}})
			return err
		}
		if err := create("next", 2); err != nil {
			t.Fatalf("CreateVectorName = %v", err)
		}
		if err := create("next", 2); status.Code(err) != codes.InvalidArgument {
			t.Errorf("CreateVectorName of a name in use = %v, want InvalidArgument", err)
		}
		info, err := tg.c.GetCollectionInfo(ctx, tg.coll)
		if err != nil || info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()["next"].GetSize() != 2 {
			t.Fatalf("collection vectors %v (%v), want next of size 2", info.GetConfig().GetParams().GetVectorsConfig(), err)
		}
		lacking := &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasVector("next")}}
		if got := tg.ids(t, lacking); len(got) != 2 {
			t.Fatalf("points lacking the new vector %v, want both", got)
		}
		upd := func(id int, seq int64) error {
			_, err := tg.c.UpdateVectors(ctx, &qdrant.UpdatePointVectors{CollectionName: tg.coll, Wait: qdrant.PtrOf(true),
				UpdateFilter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("seq", seq)}},
				Points:       []*qdrant.PointVectors{{Id: qdrant.NewID(uuidN(id)), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"next": qdrant.NewVectorDense([]float32{0, 1})})}}})
			return err
		}
		if err := upd(1, 1); err != nil {
			t.Fatal(err)
		}
		if err := upd(2, 1); err != nil { // seq 2: the filter leaves it alone
			t.Fatal(err)
		}
		if got := tg.ids(t, lacking); len(got) != 1 || got[0] != uuidN(2) {
			t.Errorf("points lacking the new vector %v, want only %s (its update_filter did not match)", got, uuidN(2))
		}
		if err := upd(7, 1); status.Code(err) != codes.NotFound {
			t.Errorf("UpdateVectors of a missing point = %v, want NotFound", err)
		}
		if _, err := tg.c.DeleteVectorName(ctx, &qdrant.DeleteVectorNameRequest{CollectionName: tg.coll, VectorName: "dense", Wait: qdrant.PtrOf(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tg.c.DeleteVectorName(ctx, &qdrant.DeleteVectorNameRequest{CollectionName: tg.coll, VectorName: "dense", Wait: qdrant.PtrOf(true)}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("DeleteVectorName of an unknown name = %v, want InvalidArgument", err)
		}
		pts, err := tg.c.Get(ctx, &qdrant.GetPoints{CollectionName: tg.coll, Ids: []*qdrant.PointId{qdrant.NewID(uuidN(1))}, WithVectors: qdrant.NewWithVectors(true)})
		if err != nil || len(pts) != 1 || pts[0].GetVectors().GetVectors().GetVectors()["dense"] != nil {
			t.Errorf("point after the drop = %v (%v), want no dense vector", pts, err)
		}
	})
}

// TestVectorNamesNeed118: a server before 1.18 does not know the calls.
func TestVectorNamesNeed118(t *testing.T) {
	srv := qdranttest.Start(t)
	c := srv.Client(t)
	_, err := c.CreateVectorName(context.Background(), &qdrant.CreateVectorNameRequest{CollectionName: "c", VectorName: "x"})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("CreateVectorName on %s = %v, want Unimplemented", qdranttest.DefaultVersion, err)
	}
}

// TestTenantIndexAndStrictMode: the tenant index keeps is_tenant;
// strict mode is read back, refuses what exceeds it (Forbidden:
// PermissionDenied over gRPC) and follows an update.
func TestTenantIndexAndStrictMode(t *testing.T) {
	forTargets(t, func(t *testing.T, tg target) {
		ctx := context.Background()
		tg.create(t, &qdrant.StrictModeConfig{Enabled: qdrant.PtrOf(true), UpsertMaxBatchsize: qdrant.PtrOf(uint64(2)),
			FilterMaxConditions: qdrant.PtrOf(uint64(2)), UnindexedFilteringUpdate: qdrant.PtrOf(false)})
		info, err := tg.c.GetCollectionInfo(ctx, tg.coll)
		if err != nil {
			t.Fatal(err)
		}
		if !info.GetPayloadSchema()["tenant"].GetParams().GetKeywordIndexParams().GetIsTenant() {
			t.Errorf("tenant index %v, want is_tenant", info.GetPayloadSchema()["tenant"])
		}
		if sm := info.GetConfig().GetStrictModeConfig(); !sm.GetEnabled() || sm.GetUpsertMaxBatchsize() != 2 || sm.GetFilterMaxConditions() != 2 {
			t.Errorf("strict mode read back %v", sm)
		}
		upsert := func(pts ...*qdrant.PointStruct) error {
			_, err := tg.c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true), Points: pts})
			return err
		}
		if err := upsert(point(1, "a", "acme", 1), point(2, "a", "globex", 1), point(3, "b", "acme", 1)); status.Code(err) != codes.PermissionDenied {
			t.Errorf("upsert of 3 points over upsert_max_batchsize 2 = %v, want PermissionDenied", err)
		}
		if err := upsert(point(1, "a", "acme", 1), point(2, "a", "globex", 1)); err != nil {
			t.Fatal(err)
		}
		acme := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tenant", "acme")}}
		if got := tg.ids(t, acme); len(got) != 1 || got[0] != uuidN(1) {
			t.Errorf("acme's points %v, want %s", got, uuidN(1))
		}
		del := func(f *qdrant.Filter) error {
			_, err := tg.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: tg.coll, Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelectorFilter(f)})
			return err
		}
		three := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tenant", "acme"), qdrant.NewMatchKeyword("doc_id", "a"), qdrant.NewMatchInt("seq", 1)}}
		if err := del(three); status.Code(err) != codes.PermissionDenied {
			t.Errorf("delete by 3 conditions over filter_max_conditions 2 = %v, want PermissionDenied", err)
		}
		if err := del(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("unindexed", "x")}}); status.Code(err) != codes.PermissionDenied {
			t.Errorf("delete by an unindexed field = %v, want PermissionDenied", err)
		}
		if err := tg.c.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: tg.coll,
			StrictModeConfig: &qdrant.StrictModeConfig{FilterMaxConditions: qdrant.PtrOf(uint64(5))}}); err != nil {
			t.Fatal(err)
		}
		if err := del(three); err != nil {
			t.Errorf("delete by 3 conditions after raising the limit = %v", err)
		}
		info, err = tg.c.GetCollectionInfo(ctx, tg.coll)
		if sm := info.GetConfig().GetStrictModeConfig(); err != nil || sm.GetUpsertMaxBatchsize() != 2 || sm.GetFilterMaxConditions() != 5 {
			t.Errorf("strict mode after the update %v (%v), want the other limits kept", sm, err)
		}
	})
}
