package qdrantsink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Collection metadata of a model switch (docs/operations.md, "Switching
// the embedding model").
const (
	// MetadataVectors maps each dense vector a reembed filled to the model
	// that filled it.
	MetadataVectors = "chunkstream_vectors"
	// MetadataSearchVector names the dense vector readers search by when
	// they name none (Search); VectorDense when absent.
	MetadataSearchVector = "chunkstream_search_vector"
)

// Errors of a model switch.
var (
	// ErrVectorIncomplete reports a cut-over to a vector some points
	// still lack.
	ErrVectorIncomplete = errors.New("qdrantsink: points lack the vector")
	// ErrVectorInUse reports a drop of the vector readers search by.
	ErrVectorInUse = errors.New("qdrantsink: readers search by the vector")
	// ErrNotDenseVector reports a cut-over to, or a drop of, a vector that
	// is not one of the collection's dense vectors: the sparse bm25
	// vector is every worker's and every search's, never switched or
	// dropped.
	ErrNotDenseVector = errors.New("qdrantsink: not a dense vector of the collection")
)

// denseVector checks that vector is a dense vector of coll's, given its
// info.
func denseVector(info *qdrant.CollectionInfo, coll, vector string) error {
	dense := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()
	if _, ok := dense[vector]; ok {
		return nil
	}
	names := slices.Sorted(maps.Keys(dense))
	return fmt.Errorf("%w: %q of %q (its dense vectors: %s)", ErrNotDenseVector, vector, coll, strings.Join(names, ", "))
}

// reembedPage is the number of points a reembed reads, embeds and writes
// at a time unless ReembedOptions.Page says otherwise.
const reembedPage = 64

// ReembedOptions say what Reembed fills.
type ReembedOptions struct {
	// Collection is the collection (or alias) whose points get the vector.
	Collection string
	// Vector is the dense vector to fill, created (cosine, the embedder's
	// size) when the collection has none of that name.
	Vector string
	// Embedder embeds each point's content.
	Embedder Embedder
	// Page is the number of points per request (reembedPage when 0; at
	// most strict mode's limits).
	Page int
	// Progress, when set, is told the counts after the vector is created
	// and after every page.
	Progress func(ReembedProgress)
}

// ReembedProgress counts a reembed's points.
type ReembedProgress struct {
	// Total is the collection's points, Missing those without the vector,
	// Filled those this run gave it.
	Total, Missing, Filled uint64
	// Created tells whether this run created the vector.
	Created bool
}

// Reembed fills a dense vector of every point of a live collection with
// the embedder's vector of the point's content (no re-chunking), creating
// the vector first when missing (Qdrant 1.18 or later). It reads only the
// points that lack the vector, so a run that was stopped resumes where it
// was, and each write applies only if the point is still the version read
// (its ingest_seq): a point a worker rewrote meanwhile keeps what the
// worker wrote. The other vectors, and searches by them, are untouched.
// It returns once no point lacks the vector, or with ErrVectorIncomplete
// when points keep lacking it (workers that do not write it yet).
func Reembed(ctx context.Context, client *qdrant.Client, o ReembedOptions) (ReembedProgress, error) {
	var prog ReembedProgress
	fail := func(what string, err error) (ReembedProgress, error) {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return prog, fmt.Errorf("qdrantsink: reembed %q of %q: %s: %w", o.Vector, o.Collection, what, err)
	}
	if o.Vector == "" || o.Vector == VectorBM25 || o.Embedder == nil {
		return fail("options", errors.New("a dense vector name and an embedder are required"))
	}
	info, err := client.GetCollectionInfo(ctx, o.Collection)
	if err != nil {
		return fail("collection info", err)
	}
	dims, err := o.Embedder.Probe(ctx)
	if err != nil {
		return fail("embedder probe", err)
	}
	recorded := info.GetConfig().GetMetadata()[MetadataVectors].GetStructValue().GetFields()
	if m, ok := recorded[o.Vector]; ok && m.GetStringValue() != o.Embedder.Model() {
		return fail("model", fmt.Errorf("the vector holds model %q's vectors, not %q's: choose another name", m.GetStringValue(), o.Embedder.Model()))
	}
	if _, ok := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()[o.Vector]; ok {
		if err := fitsDense(info.GetConfig().GetParams(), o.Vector, dims); err != nil {
			return fail("vector", err)
		}
	} else {
		_, err := client.CreateVectorName(ctx, &qdrant.CreateVectorNameRequest{
			CollectionName: o.Collection, VectorName: o.Vector, Wait: qdrant.PtrOf(true), Ordering: strong(),
			VectorConfig: &qdrant.CreateVectorNameRequest_DenseConfig{DenseConfig: &qdrant.DenseVectorCreationConfig{Size: uint64(dims), Distance: qdrant.Distance_Cosine}},
		})
		if status.Code(err) == codes.Unimplemented {
			return fail("create the vector", fmt.Errorf("this Qdrant cannot add a vector to a live collection (1.18 or later can): %w", err))
		}
		if err != nil {
			return fail("create the vector", err)
		}
		prog.Created = true
	}
	if err := recordVectorModel(ctx, client, o.Collection, recorded, o.Vector, o.Embedder.Model()); err != nil {
		return fail("record the model", err)
	}
	page := cmp.Or(o.Page, reembedPage)
	if sm := info.GetConfig().GetStrictModeConfig(); sm.GetEnabled() {
		if sm.MaxQueryLimit != nil {
			page = min(page, int(sm.GetMaxQueryLimit()))
		}
		if sm.UpsertMaxBatchsize != nil {
			page = min(page, int(sm.GetUpsertMaxBatchsize()))
		}
	}
	missing := &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasVector(o.Vector)}}
	count := func(f *qdrant.Filter) (uint64, error) {
		return client.Count(ctx, &qdrant.CountPoints{CollectionName: o.Collection, Filter: f, Exact: qdrant.PtrOf(true)})
	}
	report := func() error {
		var err error
		if prog.Total, err = count(nil); err == nil {
			prog.Missing, err = count(missing)
		}
		if err == nil && o.Progress != nil {
			o.Progress(prog)
		}
		return err
	}
	if err := report(); err != nil {
		return fail("count", err)
	}
	// Passes in id order over the points that lack the vector; one that
	// filled nothing while points still lack it means they are rewritten
	// without it as fast as they are filled.
	for pass := 0; prog.Missing > 0; pass++ {
		filledBefore := prog.Filled
		var offset *qdrant.PointId
		for {
			pts, next, err := client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
				CollectionName: o.Collection, Filter: missing, Offset: offset, Limit: qdrant.PtrOf(uint32(page)),
				WithPayload: qdrant.NewWithPayloadInclude(FieldContent, FieldIngestSeq),
			})
			if err != nil {
				return fail("read points", err)
			}
			if len(pts) > 0 {
				n, err := fillPage(ctx, client, o, pts)
				if err != nil {
					return fail("fill", err)
				}
				prog.Filled += n
				if err := report(); err != nil {
					return fail("count", err)
				}
			}
			if next == nil || len(pts) == 0 {
				break
			}
			offset = next
		}
		if err := report(); err != nil {
			return fail("count", err)
		}
		if prog.Missing > 0 && prog.Filled == filledBefore && pass > 0 {
			return prog, fmt.Errorf("%w: %d points of %q still lack %q: run the workers with CHUNKSTREAM_QDRANT_NEXT_VECTOR=%s first, then reembed again",
				ErrVectorIncomplete, prog.Missing, o.Collection, o.Vector, o.Vector)
		}
	}
	return prog, nil
}

// fillPage embeds the contents of pts and writes each vector if its point
// is still the version read: one batch update, one vector update per
// ingest_seq filtered by it. A point deleted meanwhile is skipped.
func fillPage(ctx context.Context, client *qdrant.Client, o ReembedOptions, pts []*qdrant.RetrievedPoint) (uint64, error) {
	texts := make([]string, len(pts))
	for i, p := range pts {
		texts[i] = p.GetPayload()[FieldContent].GetStringValue()
	}
	vecs, err := o.Embedder.Embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return 0, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vecs), len(texts))
	}
	bySeq := map[int64][]*qdrant.PointVectors{}
	var seqs []int64
	for i, p := range pts {
		seq := p.GetPayload()[FieldIngestSeq].GetIntegerValue()
		if _, ok := bySeq[seq]; !ok {
			seqs = append(seqs, seq)
		}
		bySeq[seq] = append(bySeq[seq], &qdrant.PointVectors{Id: p.GetId(),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{o.Vector: qdrant.NewVectorDense(vecs[i])})})
	}
	op := func(seq int64, pvs []*qdrant.PointVectors) *qdrant.PointsUpdateOperation {
		return qdrant.NewPointsUpdateUpdateVectors(&qdrant.PointsUpdateOperation_UpdateVectors{Points: pvs,
			UpdateFilter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt(FieldIngestSeq, seq)}}})
	}
	var ops []*qdrant.PointsUpdateOperation
	for _, seq := range seqs {
		ops = append(ops, op(seq, bySeq[seq]))
	}
	batch := func(ops []*qdrant.PointsUpdateOperation) error {
		_, err := client.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: o.Collection, Wait: qdrant.PtrOf(true), Ordering: strong(), Operations: ops})
		return err
	}
	err = batch(ops)
	if status.Code(err) != codes.NotFound {
		return uint64(len(pts)), err
	}
	// A point was deleted meanwhile (a worker's newer version): point by
	// point, skipping those gone.
	for _, seq := range seqs {
		for _, pv := range bySeq[seq] {
			if err := batch([]*qdrant.PointsUpdateOperation{op(seq, []*qdrant.PointVectors{pv})}); err != nil && status.Code(err) != codes.NotFound {
				return 0, err
			}
		}
	}
	return uint64(len(pts)), nil
}

// recordVectorModel records in the collection's metadata that vector holds
// model's vectors.
func recordVectorModel(ctx context.Context, client *qdrant.Client, coll string, recorded map[string]*qdrant.Value, vector, model string) error {
	fields := map[string]any{}
	for k, v := range recorded {
		fields[k] = v.GetStringValue()
	}
	fields[vector] = model
	return setMetadata(ctx, client, coll, MetadataVectors, fields)
}

// setMetadata merges one key into a collection's metadata.
func setMetadata(ctx context.Context, client *qdrant.Client, coll, key string, value any) error {
	v, err := qdrant.TryValueMap(map[string]any{key: value})
	if err != nil {
		return err
	}
	return client.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: coll, Metadata: v})
}

// CutOver makes vector the one readers search by when they name none
// (MetadataSearchVector), once no point lacks it (ErrVectorIncomplete
// otherwise); it must be a dense vector (ErrNotDenseVector).
func CutOver(ctx context.Context, client *qdrant.Client, coll, vector string) error {
	info, err := client.GetCollectionInfo(ctx, coll)
	if err != nil {
		return fmt.Errorf("qdrantsink: cut-over of %q to %q: %w", coll, vector, err)
	}
	// The sparse bm25 is never the vector readers switch to; a dense
	// vector not made yet is one every point lacks (below).
	if _, sparse := info.GetConfig().GetParams().GetSparseVectorsConfig().GetMap()[vector]; sparse {
		return denseVector(info, coll, vector)
	}
	n, err := client.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Exact: qdrant.PtrOf(true),
		Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasVector(vector)}}})
	if err != nil {
		return fmt.Errorf("qdrantsink: cut-over of %q to %q: %w", coll, vector, err)
	}
	if n > 0 {
		return fmt.Errorf("%w: %d points of %q lack %q: reembed first", ErrVectorIncomplete, n, coll, vector)
	}
	if err := setMetadata(ctx, client, coll, MetadataSearchVector, vector); err != nil {
		return fmt.Errorf("qdrantsink: cut-over of %q to %q: %w", coll, vector, err)
	}
	return nil
}

// DropVector removes a dense vector from a live collection (Qdrant 1.18 or
// later), refusing the one readers search by (ErrVectorInUse) and any
// vector that is not dense (ErrNotDenseVector: bm25). It returns how many
// points held the vector; with dryRun it only counts them.
func DropVector(ctx context.Context, client *qdrant.Client, coll, vector string, dryRun bool) (points uint64, err error) {
	info, err := client.GetCollectionInfo(ctx, coll)
	if err != nil {
		return 0, fmt.Errorf("qdrantsink: drop %q of %q: %w", vector, coll, err)
	}
	if err := denseVector(info, coll, vector); err != nil {
		return 0, err
	}
	md := info.GetConfig().GetMetadata()
	if vector == cmp.Or(md[MetadataSearchVector].GetStringValue(), VectorDense) {
		return 0, fmt.Errorf("%w: %q of %q; cut over to another vector first", ErrVectorInUse, vector, coll)
	}
	points, err = client.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Exact: qdrant.PtrOf(true),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasVector(vector)}}})
	if err != nil || dryRun {
		return points, err
	}
	if _, err := client.DeleteVectorName(ctx, &qdrant.DeleteVectorNameRequest{CollectionName: coll, VectorName: vector,
		Wait: qdrant.PtrOf(true), Ordering: strong()}); err != nil {
		return points, fmt.Errorf("qdrantsink: drop %q of %q: %w", vector, coll, err)
	}
	fields := map[string]any{}
	for k, v := range md[MetadataVectors].GetStructValue().GetFields() {
		if k != vector {
			fields[k] = v.GetStringValue()
		}
	}
	if err := setMetadata(ctx, client, coll, MetadataVectors, fields); err != nil {
		return points, fmt.Errorf("qdrantsink: drop %q of %q: %w", vector, coll, err)
	}
	return points, nil
}
