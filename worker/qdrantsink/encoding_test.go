package qdrantsink

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestDefaultEncoding: the sink's default encoding is the one the
// settings fingerprint leaves out, so fingerprints of existing records
// stay valid.
func TestDefaultEncoding(t *testing.T) {
	enc, err := bm25.NewEncoder(bm25.English, DefaultConfig().AvgDL)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Encoding() != messages.DefaultEncoding {
		t.Errorf("the default encoder's Encoding() = %q, want messages.DefaultEncoding %q", enc.Encoding(), messages.DefaultEncoding)
	}
	var _ worker.EncodingSink = (*Sink)(nil)
}

// encodingOf reads the encoding a collection records.
func encodingOf(t *testing.T, srv *qdranttest.Server, coll string) string {
	t.Helper()
	info, err := srv.Client(t).GetCollectionInfo(context.Background(), coll)
	if err != nil {
		t.Fatal(err)
	}
	return info.GetConfig().GetMetadata()[MetadataEncoding].GetStringValue()
}

// newSinkWith starts a sink of cfg on srv, failing the test on error.
func newSinkWith(t *testing.T, srv *qdranttest.Server, cfg Config, records worker.Records) *Sink {
	t.Helper()
	s, err := New(context.Background(), cfg, records, nil, nil)
	if err != nil {
		t.Fatalf("New(%s %v) = %v", cfg.BM25, cfg.AvgDL, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestEncodingIsRecorded: a new collection records the encoding of the
// sink that creates it; local and qdrant write the same vectors and
// share it, other settings do not.
func TestEncodingIsRecorded(t *testing.T) {
	tests := []struct {
		bm25  string
		avgdl float64
		want  string
	}{
		{BM25Local, 256, "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256"},
		{BM25Qdrant, 256, "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256"},
		{BM25Local, 100, "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=100"},
		{BM25Off, 256, EncodingNone},
	}
	for _, tt := range tests {
		srv := qdranttest.Start(t)
		cfg := testConfig(srv)
		cfg.BM25, cfg.AvgDL = tt.bm25, tt.avgdl
		s := newSinkWith(t, srv, cfg, sinktest.NewRecords())
		if got := encodingOf(t, srv, "chunks"); got != tt.want || s.Encoding() != tt.want {
			t.Errorf("BM25=%s avgdl %v: collection records %q, Encoding() = %q, want %q", tt.bm25, tt.avgdl, got, s.Encoding(), tt.want)
		}
	}
}

// TestOtherEncodingRefused: a worker configured differently from the
// collection's encoding does not start, and says how to migrate; one
// configured the same way, computing locally or in Qdrant, does.
func TestOtherEncodingRefused(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	first := newSinkWith(t, srv, testConfig(srv), records)
	doc, chunks := sinktest.Version("a.md", 1, "BM25 ranks the chunks of a document")
	records.Begin(doc.ID, doc.Seq)
	if err := first.Write(context.Background(), doc, chunks); err != nil {
		t.Fatal(err)
	}
	for _, change := range []func(*Config){
		func(c *Config) { c.AvgDL = 100 },
		func(c *Config) { c.BM25 = BM25Off },
	} {
		cfg := testConfig(srv)
		change(&cfg)
		_, err := New(context.Background(), cfg, records, nil, nil)
		if !errors.Is(err, ErrEncodingMismatch) || !errors.Is(err, ErrCollectionMismatch) {
			t.Fatalf("New(%s avgdl %v) on a collection of the default encoding = %v, want ErrEncodingMismatch", cfg.BM25, cfg.AvgDL, err)
		}
		for _, fix := range []string{"CHUNKSTREAM_QDRANT_COLLECTION", "producer -resend-stale", "alias", "docs/operations.md", messages.DefaultEncoding} {
			if !strings.Contains(err.Error(), fix) {
				t.Errorf("New(%s avgdl %v) = %v, want it to name %q", cfg.BM25, cfg.AvgDL, err, fix)
			}
		}
	}
	cfg := testConfig(srv)
	cfg.BM25 = BM25Qdrant
	newSinkWith(t, srv, cfg, records)

	// A collection a request names is refused for the message alone.
	other := testConfig(srv)
	other.AvgDL, other.Collection = 100, "other"
	s := newSinkWith(t, srv, other, records)
	doc, chunks = sinktest.Version("b.md", 2, "x")
	doc.Collection = "chunks"
	records.Begin(doc.ID, doc.Seq)
	if err := s.Write(context.Background(), doc, chunks); !fault.IsPermanent(err) || !errors.Is(err, ErrEncodingMismatch) {
		t.Errorf("Write to a collection of another encoding = %v, want a permanent ErrEncodingMismatch", err)
	}
}

// TestUnrecordedEncoding: a collection that records no encoding (written
// before collections recorded it) is given the worker's when its points
// carry exactly the worker's vectors, and refused otherwise.
func TestUnrecordedEncoding(t *testing.T) {
	texts := []string{"Rotating credentials without downtime", "the and of", "Sparse vectors with the IDF modifier"}
	// unrecorded returns a server with a collection written by a sink of
	// avgdl whose metadata was then removed.
	unrecorded := func(t *testing.T, avgdl float64) (*qdranttest.Server, *sinktest.Records) {
		srv := qdranttest.Start(t)
		records := sinktest.NewRecords()
		cfg := testConfig(srv)
		cfg.AvgDL = avgdl
		s := newSinkWith(t, srv, cfg, records)
		doc, chunks := sinktest.Version("a.md", 1, texts...)
		records.Begin(doc.ID, doc.Seq)
		if err := s.Write(context.Background(), doc, chunks); err != nil {
			t.Fatal(err)
		}
		err := srv.Client(t).UpdateCollection(context.Background(), &qdrant.UpdateCollection{
			CollectionName: "chunks", Metadata: map[string]*qdrant.Value{MetadataEncoding: qdrant.NewValueNull()},
		})
		if err != nil || encodingOf(t, srv, "chunks") != "" {
			t.Fatalf("removing the metadata: %v", err)
		}
		return srv, records
	}
	t.Run("same vectors", func(t *testing.T) {
		srv, records := unrecorded(t, 256)
		cfg := testConfig(srv)
		cfg.BM25 = BM25Qdrant
		newSinkWith(t, srv, cfg, records)
		if got := encodingOf(t, srv, "chunks"); got != messages.DefaultEncoding {
			t.Errorf("recorded %q, want %q", got, messages.DefaultEncoding)
		}
	})
	t.Run("other vectors", func(t *testing.T) {
		srv, records := unrecorded(t, 100)
		for _, mode := range []string{BM25Local, BM25Off} {
			cfg := testConfig(srv)
			cfg.BM25 = mode
			if _, err := New(context.Background(), cfg, records, nil, nil); !errors.Is(err, ErrEncodingMismatch) {
				t.Errorf("New(%s) on points of avgdl 100 = %v, want ErrEncodingMismatch", mode, err)
			}
		}
		if got := encodingOf(t, srv, "chunks"); got != "" {
			t.Errorf("a refused worker recorded %q", got)
		}
	})
	t.Run("empty", func(t *testing.T) {
		srv := qdranttest.Start(t)
		createCollection(t, srv, "chunks", nil, qdrant.Modifier_Idf)
		cfg := testConfig(srv)
		cfg.BM25 = BM25Off
		newSinkWith(t, srv, cfg, sinktest.NewRecords())
		if got := encodingOf(t, srv, "chunks"); got != EncodingNone {
			t.Errorf("recorded %q, want %q", got, EncodingNone)
		}
	})
}

// TestSparseVectorModes: qdrant mode sends each chunk's text as a
// Document, and Qdrant stores the vectors local mode computes; a chunk
// without terms gets none in either; off writes none.
func TestSparseVectorModes(t *testing.T) {
	texts := []string{"# Title\n\nThe cats are running to the tables.", "the and of", "Ünïcödé, x² and İstanbul"}
	vectors := map[string]map[string]*qdrant.SparseVector{}
	for _, mode := range []string{BM25Local, BM25Qdrant, BM25Off} {
		srv := qdranttest.Start(t)
		records := sinktest.NewRecords()
		cfg := testConfig(srv)
		cfg.BM25 = mode
		s := newSinkWith(t, srv, cfg, records)
		doc, chunks := sinktest.Version("a.md", 1, texts...)
		records.Begin(doc.ID, doc.Seq)
		if err := s.Write(context.Background(), doc, chunks); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		vectors[mode] = map[string]*qdrant.SparseVector{}
		for _, p := range srv.Points("chunks") {
			if v := p.GetVectors().GetVectors().GetVectors()[VectorBM25]; v != nil {
				vectors[mode][p.GetPayload()[FieldContent].GetStringValue()] = v.GetSparse()
			}
		}
	}
	for _, text := range texts {
		want := bm25.Document(text)
		for _, mode := range []string{BM25Local, BM25Qdrant} {
			got, ok := vectors[mode][text]
			if ok != (len(want.Indices) > 0) || !slices.Equal(got.GetIndices(), want.Indices) || !slices.Equal(got.GetValues(), want.Values) {
				t.Errorf("%s: bm25 of %q = %v (present %v), want %v", mode, text, got, ok, want)
			}
		}
	}
	if len(vectors[BM25Off]) != 0 {
		t.Errorf("off wrote bm25 vectors: %v", vectors[BM25Off])
	}
}
