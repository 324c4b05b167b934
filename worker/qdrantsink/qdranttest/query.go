package qdranttest

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxPrefetchDepth is Qdrant's limit on nested prefetches.
const maxPrefetchDepth = 64

// A hit is a point with its score.
type hit struct {
	p     *point
	score float32
}

// A stage is a query or one of its prefetches: the fields QueryPoints and
// PrefetchQuery share.
type stage struct {
	prefetch  []*qdrant.PrefetchQuery
	query     *qdrant.Query
	using     string
	filter    *qdrant.Filter
	limit     int
	threshold *float32
}

func prefetchStage(pq *qdrant.PrefetchQuery) stage {
	return stage{prefetch: pq.GetPrefetch(), query: pq.Query, using: pq.GetUsing(), filter: pq.Filter,
		limit: limitOf(pq.Limit), threshold: pq.ScoreThreshold}
}

// limitOf is a request's limit, 10 when absent.
func limitOf(l *uint64) int {
	if l == nil {
		return 10
	}
	return int(min(*l, math.MaxInt32))
}

// Query runs Qdrant's universal query, as far as the package
// documentation lists it.
func (ps *pointsServer) Query(_ context.Context, req *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	return withCollection(ps.s, req.GetCollectionName(), func(c *collection) (*qdrant.QueryResponse, error) {
		if req.LookupFrom != nil || req.ShardKeySelector != nil {
			return nil, status.Error(codes.Unimplemented, "qdranttest: lookup_from and shard keys are not supported")
		}
		top := stage{prefetch: req.GetPrefetch(), query: req.Query, using: req.GetUsing(), filter: req.Filter,
			limit: limitOf(req.Limit), threshold: req.ScoreThreshold}
		offset := int(min(req.GetOffset(), math.MaxInt32))
		top.limit += offset
		if d := depth(req.GetPrefetch()); d > maxPrefetchDepth {
			return nil, invalid("Validation failed: prefetches depth %d exceeds max depth %d", d, maxPrefetchDepth)
		}
		if err := c.checkLimit(uint64(top.limit)); err != nil {
			return nil, err
		}
		if err := c.checkStrictFilter(req.Filter, false); err != nil {
			return nil, err
		}
		hits, err := ps.s.run(c, top, nil)
		if err != nil {
			return nil, err
		}
		hits = hits[min(offset, len(hits)):]
		wp := req.GetWithPayload()
		if wp == nil {
			wp = qdrant.NewWithPayload(false)
		}
		resp := &qdrant.QueryResponse{Result: make([]*qdrant.ScoredPoint, 0, len(hits))}
		for _, h := range hits {
			rp := h.p.retrieved(wp, req.GetWithVectors())
			resp.Result = append(resp.Result, &qdrant.ScoredPoint{Id: rp.Id, Payload: rp.Payload, Score: h.score, Vectors: rp.Vectors})
		}
		return resp, nil
	})
}

func depth(pfs []*qdrant.PrefetchQuery) int {
	d := 0
	for _, pf := range pfs {
		d = max(d, 1+depth(pf.GetPrefetch()))
	}
	return d
}

// and returns the conjunction of two optional filters.
func and(a, b *qdrant.Filter) *qdrant.Filter {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(a), qdrant.NewFilterAsCondition(b)}}
}

// run evaluates one stage, with the filter of the stages above it. s.mu
// must be held.
func (s *Server) run(c *collection, st stage, above *qdrant.Filter) ([]hit, error) {
	if err := checkFilter(st.filter); err != nil {
		return nil, err
	}
	filter := and(above, st.filter) // Qdrant propagates filters into the prefetches
	if len(st.prefetch) == 0 {
		switch q := st.query.GetVariant().(type) {
		case nil: // the matching points in id order, score 0
			ps := c.matching(filter)
			hits := make([]hit, min(st.limit, len(ps)))
			for i := range hits {
				hits[i] = hit{p: ps[i]}
			}
			return hits, nil
		case *qdrant.Query_Nearest:
			return s.nearest(c, q.Nearest, st, c.matching(filter), true)
		case *qdrant.Query_Fusion, *qdrant.Query_Rrf:
			return nil, invalid("Validation failed: cannot apply Fusion without prefetches")
		default:
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T is not supported", q)
		}
	}
	var sources [][]hit
	for _, pf := range st.prefetch {
		hits, err := s.run(c, prefetchStage(pf), filter)
		if err != nil {
			return nil, err
		}
		sources = append(sources, hits)
	}
	switch q := st.query.GetVariant().(type) {
	case nil:
		return nil, invalid("Validation failed: cannot have prefetches without a query")
	case *qdrant.Query_Fusion:
		if q.Fusion == qdrant.Fusion_DBSF {
			return cut(dbsf(sources), st.limit, nil, true), nil
		}
		return rrf(sources, 2, nil, st.limit)
	case *qdrant.Query_Rrf:
		k := 2
		if q.Rrf.K != nil {
			k = int(q.Rrf.GetK())
		}
		return rrf(sources, k, q.Rrf.GetWeights(), st.limit)
	case *qdrant.Query_Nearest:
		// Rescoring: the points the prefetches found, scored by the query.
		seen := map[string]bool{}
		var candidates []*point
		for _, hits := range sources {
			for _, h := range hits {
				if !seen[h.p.key] {
					seen[h.p.key] = true
					candidates = append(candidates, h.p)
				}
			}
		}
		return s.nearest(c, q.Nearest, st, candidates, false)
	default:
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T is not supported", q)
	}
}

// nearest scores candidates by a vector input on the stage's vector.
// search tells a search (a sparse vector finds only the points sharing
// an index with it) from the rescoring of prefetched points (every
// candidate holding the vector is scored).
func (s *Server) nearest(c *collection, in *qdrant.VectorInput, st stage, candidates []*point, search bool) ([]hit, error) {
	var dense []float32
	var sparse *qdrant.SparseVector
	switch v := in.GetVariant().(type) {
	case *qdrant.VectorInput_Dense:
		dense = v.Dense.GetData()
	case *qdrant.VectorInput_Sparse:
		sparse = v.Sparse
	case *qdrant.VectorInput_Document:
		sv, err := s.infer(v.Document, true)
		if err != nil {
			return nil, err
		}
		if _, ok := c.dense[st.using]; ok {
			return nil, invalid("Conversion between sparse and regular vectors failed")
		}
		sparse = sv
	default:
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: vector input %T is not supported", v)
	}
	var hits []hit
	larger := true
	if sparse != nil {
		params, ok := c.sparse[st.using]
		if !ok {
			return nil, notVector(c, st.using)
		}
		if err := checkSparse(sparse, "query: sparse vector"); err != nil {
			return nil, err
		}
		q := sortedSparse(sparse)
		if params.GetModifier() == qdrant.Modifier_Idf {
			q = c.withIDF(st.using, q)
		}
		if len(q.idx) == 0 {
			return nil, nil
		}
		for _, p := range candidates {
			d, ok := p.sparse[st.using]
			if !ok {
				continue
			}
			score, overlap := q.dot(sortedSparse(d))
			if overlap || !search {
				hits = append(hits, hit{p, score})
			}
		}
	} else {
		params, ok := c.dense[st.using]
		if !ok {
			return nil, notVector(c, st.using)
		}
		if uint64(len(dense)) != params.GetSize() {
			return nil, invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(dense))
		}
		q := slices.Clone(dense)
		dist := params.GetDistance()
		if dist == qdrant.Distance_Cosine {
			normalize(q)
		}
		larger = dist == qdrant.Distance_Cosine || dist == qdrant.Distance_Dot
		for _, p := range candidates {
			if v, ok := p.dense[st.using]; ok {
				hits = append(hits, hit{p, distance(dist, q, v)})
			}
		}
	}
	return cut(hits, st.limit, st.threshold, larger), nil
}

func notVector(c *collection, name string) error {
	if name == "" {
		return invalid("Not existing vector name error: (default vector)")
	}
	return invalid("Not existing vector name error: %s", name)
}

// distance scores v against the query q (already normalised for cosine).
func distance(d qdrant.Distance, q, v []float32) float32 {
	var sum float32
	for i := range q {
		switch d {
		case qdrant.Distance_Euclid:
			x := q[i] - v[i]
			sum += x * x
		case qdrant.Distance_Manhattan:
			sum += float32(math.Abs(float64(q[i] - v[i])))
		default:
			sum += q[i] * v[i]
		}
	}
	if d == qdrant.Distance_Euclid {
		return float32(math.Sqrt(float64(sum)))
	}
	return sum
}

// cut orders hits by score (larger or smaller first; equal scores by id,
// where Qdrant promises no order), drops those worse than the threshold,
// and keeps limit.
func cut(hits []hit, limit int, threshold *float32, larger bool) []hit {
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			if larger {
				return cmp.Compare(b.score, a.score)
			}
			return cmp.Compare(a.score, b.score)
		}
		return compareIDs(a.p.id, b.p.id)
	})
	if threshold != nil {
		hits = slices.DeleteFunc(hits, func(h hit) bool {
			return larger && h.score < *threshold || !larger && h.score > *threshold
		})
	}
	return hits[:min(limit, len(hits))]
}

// A sparseQuery is a sparse vector sorted by index.
type sparseQuery struct {
	idx  []uint32
	vals []float32
}

func sortedSparse(v *qdrant.SparseVector) sparseQuery {
	q := sparseQuery{idx: slices.Clone(v.GetIndices()), vals: slices.Clone(v.GetValues())}
	if !slices.IsSorted(q.idx) {
		perm := make([]int, len(q.idx))
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, func(a, b int) int { return cmp.Compare(v.GetIndices()[a], v.GetIndices()[b]) })
		for i, p := range perm {
			q.idx[i], q.vals[i] = v.GetIndices()[p], v.GetValues()[p]
		}
	}
	return q
}

// dot returns the dot product of two sorted sparse vectors, summed in
// increasing index order, and whether they share an index.
func (q sparseQuery) dot(d sparseQuery) (float32, bool) {
	var sum float32
	overlap := false
	for i, j := 0, 0; i < len(q.idx) && j < len(d.idx); {
		switch {
		case q.idx[i] < d.idx[j]:
			i++
		case q.idx[i] > d.idx[j]:
			j++
		default:
			sum += q.vals[i] * d.vals[j]
			overlap = true
			i++
			j++
		}
	}
	return sum, overlap
}

// withIDF multiplies each query value by its index's inverse document
// frequency over the collection's points holding the vector, as Qdrant's
// IDF modifier does (bm25.IDF).
func (c *collection) withIDF(name string, q sparseQuery) sparseQuery {
	df := make(map[uint32]int, len(q.idx))
	total := 0
	for _, p := range c.points {
		d, ok := p.sparse[name]
		if !ok {
			continue
		}
		total++
		for _, i := range d.GetIndices() {
			if _, want := slices.BinarySearch(q.idx, i); want {
				df[i]++
			}
		}
	}
	out := sparseQuery{idx: q.idx, vals: make([]float32, len(q.vals))}
	for k, i := range q.idx {
		out.vals[k] = q.vals[k] * bm25.IDF(total, df[i])
	}
	return out
}

// rrf fuses ranked lists by reciprocal rank as Qdrant does: a point at
// 0-based position i of a list of weight w scores 1/((i+1)/w + k − 1),
// summed in binary32 over the lists in order; k is 2 unless the query
// gives it. Points of equal score keep the order in which they were
// first met (Qdrant promises none).
func rrf(sources [][]hit, k int, weights []float32, limit int) ([]hit, error) {
	if weights != nil && len(weights) != len(sources) {
		return nil, invalid("Validation failed: Number of weights in RRF should match number of pre-fetches: got %d, expected %d", len(weights), len(sources))
	}
	hits := fuse(sources, func(s, pos int) float32 {
		w := float32(1)
		if weights != nil {
			w = weights[s]
		}
		if w > 0 {
			return 1 / (float32(pos+1)/w + float32(k) - 1)
		}
		return 0
	})
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	return hits[:min(limit, len(hits))], nil
}

// dbsf fuses lists by distribution-based score fusion as Qdrant does:
// each list's scores normalised to [0, 1] between its mean ∓ 3 standard
// deviations (sample variance, Welford's method, in binary32; a list of
// one point scores 0.5), summed per point.
func dbsf(sources [][]hit) []hit {
	norms := make([][]float32, len(sources))
	for s, hits := range sources {
		norm := make([]float32, len(hits))
		switch {
		case len(hits) == 1:
			norm[0] = 0.5
		case len(hits) > 1:
			var mean, agg float32
			for i, h := range hits {
				old := h.score - mean
				mean += old / float32(i+1)
				agg += old * (h.score - mean)
			}
			std := float32(math.Sqrt(float64(agg / float32(len(hits)-1))))
			lo, hi := mean-3*std, mean+3*std
			for i, h := range hits {
				if lo == hi {
					norm[i] = 0.5
				} else {
					norm[i] = (h.score - lo) / (hi - lo)
				}
			}
		}
		norms[s] = norm
	}
	return fuse(sources, func(s, i int) float32 { return norms[s][i] })
}

// fuse sums each point's scores over the lists, score(s, i) being the
// score of the i-th hit of list s; points keep the order first met.
func fuse(sources [][]hit, score func(s, i int) float32) []hit {
	var order []*point
	scores := map[string]float32{}
	for s, hits := range sources {
		for i, h := range hits {
			if _, ok := scores[h.p.key]; !ok {
				order = append(order, h.p)
			}
			scores[h.p.key] += score(s, i)
		}
	}
	hits := make([]hit, len(order))
	for i, p := range order {
		hits[i] = hit{p, scores[p.key]}
	}
	return hits
}
