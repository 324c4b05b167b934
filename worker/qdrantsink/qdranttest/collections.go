package qdranttest

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// collection is one in-memory collection.
type collection struct {
	dense   map[string]*qdrant.VectorParams       // "" = the unnamed default vector
	sparse  map[string]*qdrant.SparseVectorParams // by name
	schema  map[string]qdrant.PayloadSchemaType
	params  map[string]*qdrant.PayloadIndexParams // an index's parameters, when created with some
	points  map[string]*point                     // by idKey
	indexes map[string]keywordIndex               // keyword payload indexes of top-level fields
	// metadata is the collection's metadata (Qdrant 1.15.4 and later).
	metadata map[string]*qdrant.Value
	// strictMode is the collection's strict mode configuration, nil for
	// none.
	strictMode *qdrant.StrictModeConfig
}

type collectionsServer struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

// Create creates a collection.
func (cs *collectionsServer) Create(_ context.Context, req *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	name := req.GetCollectionName()
	if name == "" || strings.ContainsAny(name, "/\\\x00") {
		return nil, invalid("collection name %q is invalid", name)
	}
	c := &collection{
		dense:   map[string]*qdrant.VectorParams{},
		sparse:  map[string]*qdrant.SparseVectorParams{},
		schema:  map[string]qdrant.PayloadSchemaType{},
		params:  map[string]*qdrant.PayloadIndexParams{},
		points:  map[string]*point{},
		indexes: map[string]keywordIndex{},
	}
	switch cfg := req.GetVectorsConfig().GetConfig().(type) {
	case nil:
	case *qdrant.VectorsConfig_Params:
		c.dense[""] = cfg.Params
	case *qdrant.VectorsConfig_ParamsMap:
		maps.Copy(c.dense, cfg.ParamsMap.GetMap())
	}
	for n, p := range c.dense {
		if p.GetSize() == 0 || p.GetSize() > 65536 {
			return nil, invalid("vector %q: size %d out of range 1..65536", n, p.GetSize())
		}
		if p.GetDistance() == qdrant.Distance_UnknownDistance {
			return nil, invalid("vector %q: distance is required", n)
		}
	}
	for n, p := range req.GetSparseVectorsConfig().GetMap() {
		if _, clash := c.dense[n]; clash {
			return nil, invalid("vector name %q used for a dense and a sparse vector", n)
		}
		c.sparse[n] = p
	}
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	if cs.s.collections[name] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", name)
	}
	if hasMetadata(cs.s.version) {
		c.metadata = mergeMetadata(nil, req.GetMetadata())
	}
	if req.StrictModeConfig != nil {
		c.strictMode = mergeStrict(nil, req.StrictModeConfig)
	}
	cs.s.collections[name] = c
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

// Get returns a collection's configuration, payload schema and point count.
func (cs *collectionsServer) Get(_ context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	return withCollection(cs.s, req.GetCollectionName(), func(c *collection) (*qdrant.GetCollectionInfoResponse, error) {
		params := &qdrant.CollectionParams{ShardNumber: 1}
		if vp, ok := c.dense[""]; ok && len(c.dense) == 1 {
			params.VectorsConfig = qdrant.NewVectorsConfig(proto.CloneOf(vp))
		} else if len(c.dense) > 0 {
			params.VectorsConfig = qdrant.NewVectorsConfigMap(cloneMap(c.dense))
		}
		if len(c.sparse) > 0 {
			params.SparseVectorsConfig = qdrant.NewSparseVectorsConfig(cloneMap(c.sparse))
		}
		schema := map[string]*qdrant.PayloadSchemaInfo{}
		for k, t := range c.schema {
			schema[k] = &qdrant.PayloadSchemaInfo{DataType: t}
			if p := c.params[k]; p != nil {
				schema[k].Params = proto.CloneOf(p)
			}
		}
		n := uint64(len(c.points))
		return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
			Status:          qdrant.CollectionStatus_Green,
			OptimizerStatus: &qdrant.OptimizerStatus{Ok: true},
			SegmentsCount:   1,
			Config:          &qdrant.CollectionConfig{Params: params, Metadata: mergeMetadata(nil, c.metadata), StrictModeConfig: proto.CloneOf(c.strictMode)},
			PayloadSchema:   schema,
			PointsCount:     &n,
		}}, nil
	})
}

// hasMetadata reports whether a server of version keeps collection
// metadata: older ones do not know the field, and protobuf drops it.
func hasMetadata(version string) bool { return atLeast(version, 1, 15, 4) }

// mergeMetadata returns a copy of dst with src merged in as Qdrant merges
// metadata: key by key at the top level, a null value removing its key.
func mergeMetadata(dst, src map[string]*qdrant.Value) map[string]*qdrant.Value {
	out := cloneMap(dst)
	for k, v := range src {
		if _, null := v.GetKind().(*qdrant.Value_NullValue); null {
			delete(out, k)
			continue
		}
		out[k] = proto.CloneOf(v)
	}
	return out
}

// cloneMap returns a deep copy of a map of messages.
func cloneMap[M proto.Message](m map[string]M) map[string]M {
	out := make(map[string]M, len(m))
	for k, v := range m {
		out[k] = proto.CloneOf(v)
	}
	return out
}

// Update changes a collection's metadata, merged into the stored one, and
// its strict mode configuration, the fields given replacing the stored
// ones; the double implements no other change.
func (cs *collectionsServer) Update(_ context.Context, req *qdrant.UpdateCollection) (*qdrant.CollectionOperationResponse, error) {
	if req.OptimizersConfig != nil || req.Params != nil || req.HnswConfig != nil || req.VectorsConfig != nil ||
		req.QuantizationConfig != nil || req.SparseVectorsConfig != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: collection updates other than metadata and strict mode are not supported")
	}
	for k, v := range req.GetMetadata() {
		if err := checkValue(k, v); err != nil {
			return nil, err
		}
	}
	return withCollection(cs.s, req.GetCollectionName(), func(c *collection) (*qdrant.CollectionOperationResponse, error) {
		if hasMetadata(cs.s.version) && len(req.GetMetadata()) > 0 {
			c.metadata = mergeMetadata(c.metadata, req.GetMetadata())
		}
		if req.StrictModeConfig != nil {
			c.strictMode = mergeStrict(c.strictMode, req.StrictModeConfig)
		}
		return &qdrant.CollectionOperationResponse{Result: true}, nil
	})
}

// List lists the collections.
func (cs *collectionsServer) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	resp := &qdrant.ListCollectionsResponse{}
	for _, n := range slices.Sorted(maps.Keys(cs.s.collections)) {
		resp.Collections = append(resp.Collections, &qdrant.CollectionDescription{Name: n})
	}
	return resp, nil
}

// CollectionExists tells whether a collection exists.
func (cs *collectionsServer) CollectionExists(_ context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

// Delete deletes a collection; deleting a missing one reports false.
func (cs *collectionsServer) Delete(_ context.Context, req *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	delete(cs.s.collections, req.GetCollectionName())
	// Qdrant removes a deleted collection's aliases.
	maps.DeleteFunc(cs.s.aliases, func(_, c string) bool { return c == req.GetCollectionName() })
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

// hasVectorNames reports whether a server of version can add and remove
// named vectors on a live collection (Qdrant 1.18); older ones do not know
// the calls.
func hasVectorNames(version string) bool { return atLeast(version, 1, 18, 0) }

// CreateVectorName adds a named dense vector to a live collection, as
// Qdrant 1.18 does: its points have no value for it until written. A name
// in use (dense or sparse) is InvalidArgument, as is a size out of range
// or a missing distance; sparse vectors are not supported by the double.
func (ps *pointsServer) CreateVectorName(_ context.Context, req *qdrant.CreateVectorNameRequest) (*qdrant.PointsOperationResponse, error) {
	if !hasVectorNames(ps.s.currentVersion()) {
		return nil, status.Error(codes.Unimplemented, "unknown method CreateVectorName for service qdrant.Points")
	}
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		name := req.GetVectorName()
		dc := req.GetDenseConfig()
		switch {
		case name == "":
			return nil, invalid("Validation error in body: [vector_name: must not be empty]")
		case dc == nil:
			return nil, status.Error(codes.Unimplemented, "qdranttest: only dense vectors can be created on a live collection")
		case dc.GetSize() == 0 || dc.GetSize() > 65536:
			return nil, invalid("vector %q: size %d out of range 1..65536", name, dc.GetSize())
		case dc.GetDistance() == qdrant.Distance_UnknownDistance:
			return nil, invalid("vector %q: distance is required", name)
		}
		_, dense := c.dense[name]
		_, sparse := c.sparse[name]
		if dense || sparse {
			return nil, invalid("Vector with name %s already exists", name)
		}
		c.dense[name] = &qdrant.VectorParams{Size: dc.GetSize(), Distance: dc.GetDistance()}
		return done(req.GetWait()), nil
	})
}

// DeleteVectorName removes a named vector from a live collection and from
// every point, as Qdrant 1.18 does; a name the collection does not have
// is InvalidArgument.
func (ps *pointsServer) DeleteVectorName(_ context.Context, req *qdrant.DeleteVectorNameRequest) (*qdrant.PointsOperationResponse, error) {
	if !hasVectorNames(ps.s.currentVersion()) {
		return nil, status.Error(codes.Unimplemented, "unknown method DeleteVectorName for service qdrant.Points")
	}
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.PointsOperationResponse, error) {
		name := req.GetVectorName()
		_, dense := c.dense[name]
		_, sparse := c.sparse[name]
		if !dense && !sparse {
			return nil, invalid("Not existing vector name error: %s", name)
		}
		delete(c.dense, name)
		delete(c.sparse, name)
		for _, p := range c.points {
			delete(p.dense, name)
			delete(p.sparse, name)
		}
		return done(req.GetWait()), nil
	})
}
