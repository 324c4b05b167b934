package qdrantsink

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/bm25"
)

// MetadataEncoding is the key, in a collection's metadata, of the sparse
// encoding its points carry (Sink.Encoding).
const MetadataEncoding = "chunkstream_bm25"

// EncodingNone is the encoding of points without a sparse vector
// (Config.BM25 off).
const EncodingNone = "none"

// ErrEncodingMismatch reports a collection whose points carry another
// sparse encoding than the sink writes; it also wraps
// ErrCollectionMismatch.
var ErrEncodingMismatch = errors.New("qdrantsink: collection holds another BM25 encoding")

// encodingSample is the number of points whose vectors are checked in a
// collection that records no encoding.
const encodingSample = 64

// Encoding describes the sparse vectors the sink's points carry: package
// bm25's description of its encoder (the same whether the worker or
// Qdrant computes them) or EncodingNone. It implements
// worker.EncodingSink, so it enters the settings fingerprint.
func (s *Sink) Encoding() string {
	if s.cfg.BM25 == BM25Off {
		return EncodingNone
	}
	return s.bm25.Encoding()
}

// sparse returns the bm25 vector of a chunk's text, nil for none: a text
// without terms has none, and off writes none.
func (s *Sink) sparse(text string) *qdrant.Vector {
	switch s.cfg.BM25 {
	case BM25Off:
	case BM25Qdrant:
		if s.bm25.HasTerms(text) {
			return qdrant.NewVectorDocument(&qdrant.Document{Text: text, Model: bm25.Model, Options: s.bm25Opts})
		}
	default:
		if v := s.bm25.Document(text); len(v.Indices) > 0 {
			return qdrant.NewVectorSparse(v.Indices, v.Values)
		}
	}
	return nil
}

// checkEncoding compares the encoding a collection records with the
// sink's (docs/operations.md, "Changing the BM25 encoding").
func (s *Sink) checkEncoding(ctx context.Context, name string, info *qdrant.CollectionInfo) error {
	want := s.Encoding()
	if v, ok := info.GetConfig().GetMetadata()[MetadataEncoding]; ok {
		if got := v.GetStringValue(); got != want {
			return s.encodingMismatch(name, fmt.Sprintf("its points carry %q", got))
		}
		return nil
	}
	cctx, cancel := s.callCtx(ctx)
	pts, err := s.client.Scroll(cctx, &qdrant.ScrollPoints{
		CollectionName: name,
		Limit:          qdrant.PtrOf(uint32(min(encodingSample, s.page(name)))),
		WithPayload:    qdrant.NewWithPayloadInclude(FieldContent),
		WithVectors:    qdrant.NewWithVectorsInclude(VectorBM25),
	})
	cancel()
	if err != nil {
		return classify(fmt.Sprintf("collection %q sample", name), err)
	}
	for _, p := range pts {
		got := p.GetVectors().GetVectors().GetVectors()[VectorBM25].GetSparse()
		var want bm25.Vector // none for off
		if s.cfg.BM25 != BM25Off {
			want = s.bm25.Document(p.GetPayload()[FieldContent].GetStringValue())
		}
		if !slices.Equal(got.GetIndices(), want.Indices) || !slices.Equal(got.GetValues(), want.Values) {
			return s.encodingMismatch(name, "it records no encoding, and its points' bm25 vectors are not this worker's")
		}
	}
	cctx, cancel = s.callCtx(ctx)
	err = s.client.UpdateCollection(cctx, &qdrant.UpdateCollection{
		CollectionName: name,
		Metadata:       map[string]*qdrant.Value{MetadataEncoding: qdrant.NewValueString(want)},
	})
	cancel()
	if err != nil {
		return classify(fmt.Sprintf("collection %q record encoding", name), err)
	}
	s.log.Info("qdrantsink: recorded the collection's BM25 encoding", "collection", name, "encoding", want, "points_checked", len(pts))
	return nil
}

// encodingMismatch is the error of a collection written with another
// encoding, naming the two ways out.
func (s *Sink) encodingMismatch(name, why string) error {
	return fmt.Errorf("%w (%w): collection %q: %s; this worker writes %q (CHUNKSTREAM_BM25=%s, CHUNKSTREAM_BM25_AVGDL=%v). "+
		"Either configure the worker as the collection was written, or migrate (docs/operations.md, \"Changing the BM25 encoding\"): "+
		"run the workers with CHUNKSTREAM_QDRANT_COLLECTION set to a new collection, then `producer -resend-stale` with the same sources, "+
		"then point the readers' alias at the new collection",
		ErrEncodingMismatch, ErrCollectionMismatch, name, why, s.Encoding(), s.cfg.BM25, s.cfg.AvgDL)
}
