package qdranttest

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// point is one stored point.
type point struct {
	key     string // idKey(id)
	id      *qdrant.PointId
	payload map[string]*qdrant.Value
	dense   map[string][]float32
	sparse  map[string]*qdrant.SparseVector
}

var (
	allPayload = qdrant.NewWithPayload(true)
	allVectors = qdrant.NewWithVectors(true)
)

func (p *point) retrieved(wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) *qdrant.RetrievedPoint {
	rp := &qdrant.RetrievedPoint{Id: proto.Clone(p.id).(*qdrant.PointId)}
	switch sel := wp.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		if sel.Enable {
			rp.Payload = clonePayload(p.payload, nil, nil)
		}
	case *qdrant.WithPayloadSelector_Include:
		rp.Payload = clonePayload(p.payload, sel.Include.GetFields(), nil)
	case *qdrant.WithPayloadSelector_Exclude:
		rp.Payload = clonePayload(p.payload, nil, sel.Exclude.GetFields())
	}
	want := func(string) bool { return false }
	switch sel := wv.GetSelectorOptions().(type) {
	case *qdrant.WithVectorsSelector_Enable:
		want = func(string) bool { return sel.Enable }
	case *qdrant.WithVectorsSelector_Include:
		want = func(n string) bool { return slices.Contains(sel.Include.GetNames(), n) }
	}
	out := map[string]*qdrant.VectorOutput{}
	for n, d := range p.dense {
		if want(n) {
			out[n] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: append([]float32(nil), d...)}}}
		}
	}
	for n, sv := range p.sparse {
		if want(n) {
			out[n] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Sparse{Sparse: proto.Clone(sv).(*qdrant.SparseVector)}}
		}
	}
	if len(out) > 0 {
		if v, ok := out[""]; ok && len(out) == 1 {
			rp.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: v}}
		} else {
			rp.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: out}}}
		}
	}
	return rp
}

func clonePayload(p map[string]*qdrant.Value, include, exclude []string) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(p))
	for k, v := range p {
		if include != nil && !slices.Contains(include, k) || slices.Contains(exclude, k) {
			continue
		}
		out[k] = proto.Clone(v).(*qdrant.Value)
	}
	return out
}

// idKey returns the canonical key of a point id, or InvalidArgument.
func idKey(id *qdrant.PointId) (string, error) {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return "n" + strconv.FormatUint(v.Num, 10), nil
	case *qdrant.PointId_Uuid:
		u, err := uuid.Parse(v.Uuid)
		if err != nil {
			return "", invalid("Unable to parse UUID: %s", v.Uuid)
		}
		return "u" + u.String(), nil
	default:
		return "", invalid("point id is missing")
	}
}

// compareIDs orders ids as Qdrant's scroll does: numbers first, then UUIDs.
func compareIDs(a, b *qdrant.PointId) int {
	an, aNum := a.GetPointIdOptions().(*qdrant.PointId_Num)
	bn, bNum := b.GetPointIdOptions().(*qdrant.PointId_Num)
	switch {
	case aNum && bNum:
		return cmp.Compare(an.Num, bn.Num)
	case aNum:
		return -1
	case bNum:
		return 1
	}
	ka, _ := idKey(a)
	kb, _ := idKey(b)
	return strings.Compare(ka, kb)
}

// build validates a PointStruct against the collection and converts it;
// the point keeps (and may change) the PointStruct's payload and vectors.
// infer computes the sparse vector of a Document.
func (c *collection) build(ps *qdrant.PointStruct, infer func(*qdrant.Document) (*qdrant.SparseVector, error)) (string, *point, error) {
	key, err := idKey(ps.GetId())
	if err != nil {
		return "", nil, err
	}
	if _, ok := ps.GetId().GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
		ps.Id = qdrant.NewIDUUID(strings.TrimPrefix(key, "u")) // canonical form, as Qdrant returns it
	}
	for k, v := range ps.GetPayload() {
		if err := checkValue(k, v); err != nil {
			return "", nil, err
		}
	}
	p := &point{key: key, id: ps.GetId(), payload: ps.GetPayload(), dense: map[string][]float32{}, sparse: map[string]*qdrant.SparseVector{}}
	if p.payload == nil {
		p.payload = map[string]*qdrant.Value{}
	}
	named := map[string]*qdrant.Vector{}
	switch v := ps.GetVectors().GetVectorsOptions().(type) {
	case nil:
	case *qdrant.Vectors_Vector:
		named[""] = v.Vector
	case *qdrant.Vectors_Vectors:
		named = v.Vectors.GetVectors()
	}
	for name, vec := range named {
		if err := c.addVector(p, name, vec, infer); err != nil {
			return "", nil, err
		}
	}
	return key, p, nil
}

//nolint:staticcheck // the deprecated Data/Indices fields are still accepted by Qdrant
func (c *collection) addVector(p *point, name string, vec *qdrant.Vector, infer func(*qdrant.Document) (*qdrant.SparseVector, error)) error {
	var dense []float32
	var sparse *qdrant.SparseVector
	switch v := vec.GetVector().(type) {
	case *qdrant.Vector_Dense:
		dense = v.Dense.GetData()
	case *qdrant.Vector_Sparse:
		sparse = v.Sparse
	case *qdrant.Vector_Document:
		sv, err := infer(v.Document)
		if err != nil {
			return err
		}
		if _, ok := c.sparse[name]; !ok {
			if _, ok := c.dense[name]; ok {
				return invalid("Conversion between sparse and regular vectors failed")
			}
		}
		sparse = sv
	case nil:
		if vec.GetIndices() != nil {
			sparse = &qdrant.SparseVector{Indices: vec.GetIndices().GetData(), Values: vec.GetData()}
		} else {
			dense = vec.GetData()
		}
	default:
		return invalid("vector %q: only dense and sparse vectors are supported by qdranttest", name)
	}
	if sparse != nil {
		if _, ok := c.sparse[name]; !ok {
			return notVector(c, name)
		}
		if err := checkSparse(sparse, "points: sparse vector "+strconv.Quote(name)); err != nil {
			return err
		}
		p.sparse[name] = sparse
		return nil
	}
	params, ok := c.dense[name]
	if !ok {
		return notVector(c, name)
	}
	if uint64(len(dense)) != params.GetSize() {
		return invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(dense))
	}
	if params.GetDistance() == qdrant.Distance_Cosine {
		normalize(dense)
	}
	p.dense[name] = dense
	return nil
}

// checkSparse refuses a sparse vector whose lengths differ or whose
// indices repeat, as Qdrant does; where names the vector in the message.
func checkSparse(sv *qdrant.SparseVector, where string) error {
	if len(sv.GetIndices()) != len(sv.GetValues()) {
		return invalid("Sparse vector: indices and values must be of the same length")
	}
	if !uniqueIndices(sv.GetIndices()) {
		return status.Errorf(codes.InvalidArgument, "Validation error in body: [%s: indices must be unique]", where)
	}
	return nil
}

// uniqueIndices reports whether no index repeats.
func uniqueIndices(ix []uint32) bool {
	seen := make(map[uint32]bool, len(ix))
	for _, i := range ix {
		if seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// float32Epsilon is the gap between 1 and the next float32.
const float32Epsilon = 1.0 / (1 << 23)

// normalize scales v to length 1, as Qdrant stores the vectors of a
// cosine collection (and returns them so): a vector whose squared length
// is below float32's epsilon, or within 1e-6 of 1, is kept as it is.
func normalize(v []float32) {
	var sq float32
	for _, x := range v {
		sq += x * x
	}
	if sq < float32Epsilon || math.Abs(float64(sq)-1) <= 1e-6 {
		return
	}
	n := float32(math.Sqrt(float64(sq)))
	for i := range v {
		v[i] /= n
	}
}

func checkValue(key string, v *qdrant.Value) error {
	if !utf8.ValidString(key) {
		return invalid("payload key is not valid UTF-8")
	}
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		if !utf8.ValidString(k.StringValue) {
			return invalid("payload %q: string is not valid UTF-8", key)
		}
	case *qdrant.Value_StructValue:
		for kk, vv := range k.StructValue.GetFields() {
			if err := checkValue(kk, vv); err != nil {
				return err
			}
		}
	case *qdrant.Value_ListValue:
		for _, vv := range k.ListValue.GetValues() {
			if err := checkValue(key, vv); err != nil {
				return err
			}
		}
	}
	return nil
}

type pointsServer struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

func done(wait bool) *qdrant.PointsOperationResponse {
	st := qdrant.UpdateStatus_Acknowledged
	if wait {
		st = qdrant.UpdateStatus_Completed
	}
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: st}}
}

// Upsert inserts or overwrites points, honouring update_filter and
// update_mode. The request is validated whole before anything is applied.
func (ps *pointsServer) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		if err := checkFilter(req.UpdateFilter); err != nil {
			return nil, err
		}
		if err := c.checkBatch(len(req.GetPoints())); err != nil {
			return nil, err
		}
		if err := c.checkStrictFilter(req.UpdateFilter, true); err != nil {
			return nil, err
		}
		type entry struct {
			key string
			p   *point
		}
		var batch []entry
		// The request was decoded for this call alone: its points become the
		// stored ones without a copy, as a server takes what it parsed.
		for _, raw := range req.GetPoints() {
			key, p, err := c.build(raw, func(d *qdrant.Document) (*qdrant.SparseVector, error) { return ps.s.infer(d, false) })
			if err != nil {
				return nil, err
			}
			batch = append(batch, entry{key, p})
		}
		for _, e := range batch {
			old, exists := c.points[e.key]
			switch req.GetUpdateMode() {
			case qdrant.UpdateMode_InsertOnly:
				if exists {
					continue
				}
			case qdrant.UpdateMode_UpdateOnly:
				if !exists {
					continue
				}
			}
			if exists && req.UpdateFilter != nil && !matchFilter(old, req.UpdateFilter) {
				continue
			}
			c.put(e.p)
		}
		return done(req.GetWait()), nil
	})
}

// Delete removes points selected by ids or by a filter.
func (ps *pointsServer) Delete(_ context.Context, req *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		switch sel := req.GetPoints().GetPointsSelectorOneOf().(type) {
		case *qdrant.PointsSelector_Points:
			var keys []string
			for _, id := range sel.Points.GetIds() {
				k, err := idKey(id)
				if err != nil {
					return nil, err
				}
				keys = append(keys, k)
			}
			for _, k := range keys {
				c.remove(k)
			}
		case *qdrant.PointsSelector_Filter:
			if err := checkFilter(sel.Filter); err != nil {
				return nil, err
			}
			if err := c.checkStrictFilter(sel.Filter, true); err != nil {
				return nil, err
			}
			for _, p := range c.matching(sel.Filter) {
				c.remove(p.key)
			}
		default:
			return nil, invalid("points selector is required")
		}
		return done(req.GetWait()), nil
	})
}

// Get returns points by id; missing ids are skipped, as in Qdrant.
func (ps *pointsServer) Get(_ context.Context, req *qdrant.GetPoints) (*qdrant.GetResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.GetResponse, error) {
		wp := req.GetWithPayload()
		if wp == nil {
			wp = allPayload
		}
		resp := &qdrant.GetResponse{}
		for _, id := range req.GetIds() {
			k, err := idKey(id)
			if err != nil {
				return nil, err
			}
			if p := c.points[k]; p != nil {
				resp.Result = append(resp.Result, p.retrieved(wp, req.GetWithVectors()))
			}
		}
		return resp, nil
	})
}

// Scroll pages through the points matching a filter, ordered by id.
func (ps *pointsServer) Scroll(_ context.Context, req *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.ScrollResponse, error) {
		if req.OrderBy != nil {
			return nil, status.Error(codes.Unimplemented, "qdranttest: order_by is not supported")
		}
		if err := checkFilter(req.Filter); err != nil {
			return nil, err
		}
		limit := 10
		if req.Limit != nil {
			limit = int(req.GetLimit())
		}
		if limit == 0 {
			return nil, invalid("limit must be positive")
		}
		if err := c.checkLimit(uint64(limit)); err != nil {
			return nil, err
		}
		if err := c.checkStrictFilter(req.Filter, false); err != nil {
			return nil, err
		}
		wp := req.GetWithPayload()
		if wp == nil {
			wp = allPayload
		}
		resp := &qdrant.ScrollResponse{}
		for _, p := range c.matching(req.Filter) {
			if req.Offset != nil && compareIDs(p.id, req.Offset) < 0 {
				continue
			}
			if len(resp.Result) == limit {
				resp.NextPageOffset = proto.Clone(p.id).(*qdrant.PointId)
				break
			}
			resp.Result = append(resp.Result, p.retrieved(wp, req.GetWithVectors()))
		}
		return resp, nil
	})
}

// Count counts the points matching a filter.
func (ps *pointsServer) Count(_ context.Context, req *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.CountResponse, error) {
		if err := checkFilter(req.Filter); err != nil {
			return nil, err
		}
		return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: uint64(len(c.matching(req.Filter)))}}, nil
	})
}

// CreateFieldIndex records a payload index in the collection's schema.
func (ps *pointsServer) CreateFieldIndex(_ context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		if req.GetFieldName() == "" {
			return nil, invalid("field name is required")
		}
		if req.FieldType == nil {
			return nil, invalid("field type is required")
		}
		t, ok := map[qdrant.FieldType]qdrant.PayloadSchemaType{
			qdrant.FieldType_FieldTypeKeyword:  qdrant.PayloadSchemaType_Keyword,
			qdrant.FieldType_FieldTypeInteger:  qdrant.PayloadSchemaType_Integer,
			qdrant.FieldType_FieldTypeFloat:    qdrant.PayloadSchemaType_Float,
			qdrant.FieldType_FieldTypeGeo:      qdrant.PayloadSchemaType_Geo,
			qdrant.FieldType_FieldTypeText:     qdrant.PayloadSchemaType_Text,
			qdrant.FieldType_FieldTypeBool:     qdrant.PayloadSchemaType_Bool,
			qdrant.FieldType_FieldTypeDatetime: qdrant.PayloadSchemaType_Datetime,
			qdrant.FieldType_FieldTypeUuid:     qdrant.PayloadSchemaType_Uuid,
		}[req.GetFieldType()]
		if !ok {
			return nil, invalid("unknown field type %v", req.GetFieldType())
		}
		if p := req.GetFieldIndexParams(); p != nil {
			// The parameters must be those of the field type, as Qdrant
			// checks them.
			want := map[qdrant.PayloadSchemaType]bool{
				qdrant.PayloadSchemaType_Keyword:  p.GetKeywordIndexParams() != nil,
				qdrant.PayloadSchemaType_Integer:  p.GetIntegerIndexParams() != nil,
				qdrant.PayloadSchemaType_Float:    p.GetFloatIndexParams() != nil,
				qdrant.PayloadSchemaType_Geo:      p.GetGeoIndexParams() != nil,
				qdrant.PayloadSchemaType_Text:     p.GetTextIndexParams() != nil,
				qdrant.PayloadSchemaType_Bool:     p.GetBoolIndexParams() != nil,
				qdrant.PayloadSchemaType_Datetime: p.GetDatetimeIndexParams() != nil,
				qdrant.PayloadSchemaType_Uuid:     p.GetUuidIndexParams() != nil,
			}
			if !want[t] {
				return nil, invalid("field index parameters do not match the field type %v", req.GetFieldType())
			}
			c.params[req.GetFieldName()] = proto.CloneOf(p)
		} else {
			delete(c.params, req.GetFieldName())
		}
		c.schema[req.GetFieldName()] = t
		if t == qdrant.PayloadSchemaType_Keyword {
			c.indexKeyword(req.GetFieldName())
		}
		return done(req.GetWait()), nil
	})
}

// UpdateVectors replaces the named vectors given for each point, leaving
// its other vectors and its payload as they are; a point that does not
// exist is NotFound, as in Qdrant, and with update_filter a point that
// does not match it is left alone. The request is validated whole before
// anything is applied.
func (ps *pointsServer) UpdateVectors(_ context.Context, req *qdrant.UpdatePointVectors) (*qdrant.PointsOperationResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		if err := c.updateVectors(ps.s, req.GetPoints(), req.UpdateFilter); err != nil {
			return nil, err
		}
		return done(req.GetWait()), nil
	})
}

// updateVectors applies an UpdateVectors of points. ps.s.mu must be held.
func (c *collection) updateVectors(s *Server, points []*qdrant.PointVectors, filter *qdrant.Filter) error {
	if err := checkFilter(filter); err != nil {
		return err
	}
	if err := c.checkBatch(len(points)); err != nil {
		return err
	}
	if err := c.checkStrictFilter(filter, true); err != nil {
		return err
	}
	if len(points) == 0 {
		return invalid("Validation error in body: [points: must not be empty]")
	}
	type change struct {
		old *point
		p   *point
	}
	var changes []change
	for _, pv := range points {
		key, err := idKey(pv.GetId())
		if err != nil {
			return err
		}
		old := c.points[key]
		if old == nil {
			return status.Errorf(codes.NotFound, "Not found: No point with id %s found", strings.TrimLeft(key, "nu"))
		}
		named := map[string]*qdrant.Vector{}
		switch v := pv.GetVectors().GetVectorsOptions().(type) {
		case *qdrant.Vectors_Vector:
			named[""] = v.Vector
		case *qdrant.Vectors_Vectors:
			named = v.Vectors.GetVectors()
		}
		if len(named) == 0 {
			return invalid("Validation error in body: [points: vectors must not be empty]")
		}
		// The new vectors go on a copy, so that a refused request changes
		// nothing.
		p := &point{key: old.key, id: old.id, payload: old.payload, dense: maps.Clone(old.dense), sparse: maps.Clone(old.sparse)}
		for name, vec := range named {
			if err := c.addVector(p, name, vec, func(d *qdrant.Document) (*qdrant.SparseVector, error) { return s.infer(d, false) }); err != nil {
				return err
			}
		}
		changes = append(changes, change{old, p})
	}
	for _, ch := range changes {
		if filter != nil && !matchFilter(ch.old, filter) {
			continue
		}
		c.put(ch.p)
	}
	return nil
}

// UpdateBatch applies its operations in order, each as its own request
// would be, and stops at the first that fails, returning its error; the
// operations before it stay applied (Qdrant applies a batch operation by
// operation, not as one transaction). Upserts, deletes of points and
// updates of vectors are supported; other operations are Unimplemented.
func (ps *pointsServer) UpdateBatch(ctx context.Context, req *qdrant.UpdateBatchPoints) (*qdrant.UpdateBatchResponse, error) {
	resp := &qdrant.UpdateBatchResponse{}
	for _, op := range req.GetOperations() {
		var (
			r   *qdrant.PointsOperationResponse
			err error
		)
		switch o := op.GetOperation().(type) {
		case *qdrant.PointsUpdateOperation_Upsert:
			r, err = ps.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: req.GetCollectionName(), Wait: req.Wait,
				Points: o.Upsert.GetPoints(), UpdateFilter: o.Upsert.UpdateFilter, UpdateMode: o.Upsert.UpdateMode})
		case *qdrant.PointsUpdateOperation_DeletePoints_:
			r, err = ps.Delete(ctx, &qdrant.DeletePoints{CollectionName: req.GetCollectionName(), Wait: req.Wait, Points: o.DeletePoints.GetPoints()})
		case *qdrant.PointsUpdateOperation_UpdateVectors_:
			r, err = ps.UpdateVectors(ctx, &qdrant.UpdatePointVectors{CollectionName: req.GetCollectionName(), Wait: req.Wait,
				Points: o.UpdateVectors.GetPoints(), UpdateFilter: o.UpdateVectors.UpdateFilter})
		case nil:
			err = invalid("operation is required")
		default:
			err = status.Errorf(codes.Unimplemented, "qdranttest: batch operation %T is not supported", o)
		}
		if err != nil {
			return nil, err
		}
		resp.Result = append(resp.Result, r.GetResult())
	}
	return resp, nil
}
