package qdrantsink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/bm25"
)

// ErrNoVectors reports a search of a collection without a vector it can
// query: no bm25 vector (CHUNKSTREAM_BM25=off) and no dense vector, or a
// dense one without an embedder.
var ErrNoVectors = errors.New("qdrantsink: nothing to search by")

// SearchOptions say what Search queries.
type SearchOptions struct {
	// Collection is the collection (or alias) to search.
	Collection string
	// Limit is the number of hits (10 when 0).
	Limit int
	// Embedder embeds the query for the dense vector, when the collection
	// has one; nil searches by BM25 alone.
	Embedder Embedder
	// Tenant restricts the search to a tenant's documents. A collection
	// that holds tenants' documents (MetadataTenants) requires one
	// (ErrTenantRequired).
	Tenant string
	// Vector names the dense vector to search by; when empty, the one the
	// collection names (MetadataSearchVector, set at a model switch's
	// cut-over), else VectorDense.
	Vector string
}

// Hit is one chunk a search found.
type Hit struct {
	// Score is the point's score: the fused score (reciprocal rank
	// fusion) of a hybrid search, else the BM25 or cosine score.
	Score float32 `json:"score"`
	// ID is the point's id, DocID its document's, Position its index in
	// the document; Tenant is the document's tenant, if any.
	ID       string `json:"id"`
	DocID    string `json:"doc_id"`
	Tenant   string `json:"tenant,omitempty"`
	Position int64  `json:"position"`
	// FirstLine and LastLine are the chunk's lines in its document (from
	// its span; 0 when it has none).
	FirstLine int64 `json:"first_line,omitempty"`
	LastLine  int64 `json:"last_line,omitempty"`
	// Headers are the chunk's Markdown headers (metadata h1 to h6), in
	// order.
	Headers []string `json:"headers,omitempty"`
	// Content is the chunk's text.
	Content string `json:"content"`
}

// What Search searched by.
const (
	SearchHybrid = "bm25+dense"
	SearchBM25   = "bm25"
	SearchDense  = "dense"
)

// searchPrefetch is how many candidates each vector gives a fused search
// per hit wanted.
const searchPrefetch = 5

// Search finds the chunks of a collection that best match text through
// Qdrant's Query API and says what it searched by: BM25 and dense
// prefetches (searchPrefetch × Limit candidates each) fused by reciprocal
// rank fusion when the collection has both vectors and an embedder is
// given, else either vector alone. The BM25 query vector is computed for
// the language the collection records; a query of stop words only finds
// nothing by BM25.
func Search(ctx context.Context, client *qdrant.Client, text string, o SearchOptions) (hits []Hit, by string, err error) {
	if o.Limit <= 0 {
		o.Limit = 10
	}
	info, err := client.GetCollectionInfo(ctx, o.Collection)
	if err != nil {
		return nil, "", fmt.Errorf("qdrantsink: search %q: %w", o.Collection, err)
	}
	if info.GetConfig().GetMetadata()[MetadataTenants].GetBoolValue() && o.Tenant == "" {
		return nil, "", fmt.Errorf("%w: %q", ErrTenantRequired, o.Collection)
	}
	// Without a tenant only untenanted points match, also where the
	// collection's mark was lost (a collection made again under workers
	// that had marked the one before): no tenant's point is ever found by
	// a search that names none.
	filter := &qdrant.Filter{Must: []*qdrant.Condition{tenantIs(o.Tenant)}}
	denseName := cmp.Or(o.Vector, info.GetConfig().GetMetadata()[MetadataSearchVector].GetStringValue(), VectorDense)
	if m := info.GetConfig().GetMetadata()[MetadataVectors].GetStructValue().GetFields()[denseName]; m != nil && o.Embedder != nil &&
		m.GetStringValue() != o.Embedder.Model() {
		return nil, "", fmt.Errorf("qdrantsink: search %q: vector %q holds model %q's vectors, the embedder is %q", o.Collection, denseName, m.GetStringValue(), o.Embedder.Model())
	}
	params := info.GetConfig().GetParams()
	_, hasBM25 := params.GetSparseVectorsConfig().GetMap()[VectorBM25]
	encoding := info.GetConfig().GetMetadata()[MetadataEncoding].GetStringValue()
	hasBM25 = hasBM25 && encoding != EncodingNone
	var sparse *qdrant.Query // nil when the query has no terms
	if hasBM25 {
		enc, err := bm25.NewEncoder(encodingLanguage(encoding), bm25.DefaultAvgDL)
		if err != nil {
			return nil, "", fmt.Errorf("qdrantsink: search %q: encoding %q: %w", o.Collection, encoding, err)
		}
		if q := enc.Query(text); len(q.Indices) > 0 {
			sparse = qdrant.NewQuerySparse(q.Indices, q.Values)
		}
	}
	var dense *qdrant.Query
	dp, ok := params.GetVectorsConfig().GetParamsMap().GetMap()[denseName]
	if !ok && o.Vector != "" {
		return nil, "", fmt.Errorf("qdrantsink: search %q: no dense vector %q", o.Collection, o.Vector)
	}
	if ok && o.Embedder != nil {
		vecs, err := o.Embedder.Embed(ctx, []string{text})
		if err != nil {
			return nil, "", fmt.Errorf("qdrantsink: search %q: embed the query: %w", o.Collection, err)
		}
		if len(vecs) != 1 || uint64(len(vecs[0])) != dp.GetSize() {
			return nil, "", fmt.Errorf("%w: the query's vector does not fit %q (size %d)", ErrEmbedding, o.Collection, dp.GetSize())
		}
		dense = qdrant.NewQueryDense(vecs[0])
	}
	req := &qdrant.QueryPoints{
		CollectionName: o.Collection,
		Limit:          qdrant.PtrOf(uint64(o.Limit)),
		WithPayload:    qdrant.NewWithPayloadInclude(FieldContent, FieldDocID, FieldTenant, FieldPosition, FieldSpan, FieldMetadata),
		Filter:         filter,
	}
	switch {
	case hasBM25 && dense != nil:
		by = SearchHybrid
		pre := qdrant.PtrOf(uint64(searchPrefetch * o.Limit))
		req.Prefetch = []*qdrant.PrefetchQuery{{Query: dense, Using: qdrant.PtrOf(denseName), Limit: pre, Filter: filter}}
		if sparse != nil {
			req.Prefetch = append(req.Prefetch, &qdrant.PrefetchQuery{Query: sparse, Using: qdrant.PtrOf(VectorBM25), Limit: pre, Filter: filter})
		}
		req.Query = qdrant.NewQueryFusion(qdrant.Fusion_RRF)
	case hasBM25:
		if sparse == nil {
			return nil, SearchBM25, nil
		}
		by, req.Query, req.Using = SearchBM25, sparse, qdrant.PtrOf(VectorBM25)
	case dense != nil:
		by, req.Query, req.Using = SearchDense, dense, qdrant.PtrOf(denseName)
	default:
		return nil, "", fmt.Errorf("%w in %q: no bm25 vector, and no dense vector or no embedder", ErrNoVectors, o.Collection)
	}
	pts, err := client.Query(ctx, req)
	if err != nil {
		return nil, by, fmt.Errorf("qdrantsink: search %q: %w", o.Collection, err)
	}
	hits = make([]Hit, len(pts))
	for i, p := range pts {
		hits[i] = hitOf(p)
	}
	return hits, by, nil
}

// encodingLanguage reads the language of an encoding description
// ("qdrant/bm25 language=english …"); English when it names none, as for
// a collection that records no encoding.
func encodingLanguage(encoding string) bm25.Language {
	for _, f := range strings.Fields(encoding) {
		if lang, ok := strings.CutPrefix(f, "language="); ok {
			return bm25.Language(lang)
		}
	}
	return bm25.English
}

// hitOf reads a scored point's payload.
func hitOf(p *qdrant.ScoredPoint) Hit {
	pl := p.GetPayload()
	span := pl[FieldSpan].GetStructValue().GetFields()
	h := Hit{
		Score:     p.GetScore(),
		ID:        p.GetId().GetUuid(),
		DocID:     pl[FieldDocID].GetStringValue(),
		Tenant:    pl[FieldTenant].GetStringValue(),
		Position:  pl[FieldPosition].GetIntegerValue(),
		FirstLine: span["first_line"].GetIntegerValue(),
		LastLine:  span["last_line"].GetIntegerValue(),
		Content:   pl[FieldContent].GetStringValue(),
	}
	md := pl[FieldMetadata].GetStructValue().GetFields()
	for _, k := range []string{"h1", "h2", "h3", "h4", "h5", "h6"} {
		if v := md[k].GetStringValue(); v != "" {
			h.Headers = append(h.Headers, v)
		}
	}
	return h
}
