package qdrantsink

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// checkVectors asserts that every point of the document carries the dense
// vector of its own content from model, with the digest, model and size
// it came from.
func checkVectors(t *testing.T, srv *qdranttest.Server, docID, model string, dims int) {
	t.Helper()
	for _, p := range srv.Points("chunks") {
		pl := p.GetPayload()
		if pl[FieldDocID].GetStringValue() != docID {
			continue
		}
		content := pl[FieldContent].GetStringValue()
		got := p.GetVectors().GetVectors().GetVectors()[VectorDense].GetDense().GetData()
		if want := embedtest.Vector(model, content, dims); !slices.Equal(got, want) {
			t.Errorf("point of %q at position %d: dense vector is not the vector of its content", content, pl[FieldPosition].GetIntegerValue())
		}
		if d := pl[FieldDenseDigest].GetStringValue(); d != fmt.Sprintf("%x", sha256.Sum256([]byte(content))) {
			t.Errorf("point of %q: dense_digest %s is not the digest of its content", content, d)
		}
		if m, n := pl[FieldDenseModel].GetStringValue(), pl[FieldDenseDims].GetIntegerValue(); m != model || n != int64(dims) {
			t.Errorf("point of %q: dense_model %q, dense_dims %d; want %q, %d", content, m, n, model, dims)
		}
	}
}

// write runs steps 1 to 4 of a version.
func write(t *testing.T, s *Sink, records *sinktest.Records, doc worker.Doc, chunks []worker.Chunk) {
	t.Helper()
	records.Begin(doc.ID, doc.Seq)
	if err := s.Write(context.Background(), doc, chunks); err != nil {
		t.Fatalf("Write(%s@%d) = %v", doc.ID, doc.Seq, err)
	}
}

func (f *fakeEmbedder) counts() (inputs, reused int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inputs, f.reused
}

// TestReuseUnchangedChunks: a new version embeds only the texts the
// document's stored points do not carry; a chunk that moved keeps its
// vector, a text repeated within a version is embedded once, and every
// point ends with the vector of its own text.
func TestReuseUnchangedChunks(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	emb := &fakeEmbedder{dims: 4}
	s := newSink(t, srv, records, emb)
	steps := []struct {
		name          string
		texts         []string
		embed, reused int
	}{
		{"first version", []string{"alpha", "beta", "gamma"}, 3, 0},
		{"a paragraph inserted: the later chunks move", []string{"alpha", "inserted", "beta", "gamma"}, 1, 3},
		{"re-sent unchanged", []string{"alpha", "inserted", "beta", "gamma"}, 0, 4},
		{"a text repeated", []string{"gamma", "delta", "delta", "alpha"}, 1, 3},
		{"a chunk edited, one removed", []string{"gamma", "delta!", "alpha"}, 1, 2},
	}
	for i, st := range steps {
		in0, re0 := emb.counts()
		doc, chunks := sinktest.Version("r.md", uint64(i+1), st.texts...)
		write(t, s, records, doc, chunks)
		in, re := emb.counts()
		if in-in0 != st.embed || re-re0 != st.reused {
			t.Errorf("%s: %d texts embedded, %d reused; want %d and %d", st.name, in-in0, re-re0, st.embed, st.reused)
		}
		if got, want := must(reader(srv, "chunks").Chunks(context.Background(), "r.md")), sinktest.Want(chunks); !equalChunks(got, want) {
			t.Fatalf("%s: chunks %v, want %v", st.name, got, want)
		}
		checkVectors(t, srv, "r.md", "fake", 4)
	}
}

// TestReuseNeedsTheSameModelAndSize: vectors from another model, of
// another size, or without a digest (points written before digests were
// stored) are not reused: their texts are embedded again.
func TestReuseNeedsTheSameModelAndSize(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	old := &fakeEmbedder{dims: 4, model: "old-model"}
	doc, chunks := sinktest.Version("m.md", 1, "alpha", "beta")
	write(t, newSink(t, srv, records, old), records, doc, chunks)

	emb := &fakeEmbedder{dims: 4, model: "new-model"}
	s := newSink(t, srv, records, emb)
	doc, chunks = sinktest.Version("m.md", 2, "alpha", "beta")
	write(t, s, records, doc, chunks)
	if in, _ := emb.counts(); in != 2 {
		t.Fatalf("after a model change %d texts embedded, want 2", in)
	}
	checkVectors(t, srv, "m.md", "new-model", 4)

	// Points whose recorded size differs, or that carry no digest.
	ctx := context.Background()
	for i, pl := range []map[string]any{
		{FieldDocID: "x.md", FieldIngestSeq: 1, FieldDenseDigest: fmt.Sprintf("%x", sha256.Sum256([]byte("alpha"))), FieldDenseModel: "new-model", FieldDenseDims: 8},
		{FieldDocID: "x.md", FieldIngestSeq: 1, FieldContent: "beta"},
	} {
		_, err := s.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "chunks", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{
			Id:      qdrant.NewID(sinktest.ChunkID("x.md", 10+i)),
			Payload: qdrant.NewValueMap(pl),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{VectorDense: qdrant.NewVectorDense([]float32{1, 0, 0, 0})}),
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	doc, chunks = sinktest.Version("x.md", 2, "alpha", "beta")
	write(t, s, records, doc, chunks)
	if in, _ := emb.counts(); in != 4 {
		t.Fatalf("%d texts embedded, want 4 (nothing reusable)", in)
	}
	checkVectors(t, srv, "x.md", "new-model", 4)
}

// TestReuseRaces drives every interleaving, at the granularity of the
// sink's steps (including the read of stored vectors), of two versions
// of a document that share texts at other positions, so that each may
// reuse vectors from the other's points, written or about to be
// deleted. The document always ends at the newer version, and every
// point carries the vector of its own text.
func TestReuseRaces(t *testing.T) {
	e := newRaceEnv(t, &fakeEmbedder{dims: 4}, false)
	older := upsertVersion(10, "t-a", "t-b", "t-c")
	newers := []version{
		upsertVersion(11, "t-b", "t-a", "t-d"),
		upsertVersion(11, "t-c"),
		upsertVersion(11, "t-a", "t-b", "t-c", "t-e"),
		deleteVersion(11),
	}
	e.races(t, []version{older}, newers, embedderSteps(), e.checkVectors)
}

// TestReuseThreeVersionRaces does the same for three versions.
func TestReuseThreeVersionRaces(t *testing.T) {
	if testing.Short() || raceDetector && !testutil.Enabled(testutil.Full) {
		t.Skip("the two-version reuse races cover the steps; this is the long form (CHUNKSTREAM_TEST_FULL=1 runs it under the race detector)")
	}
	e := newRaceEnv(t, &fakeEmbedder{dims: 4}, false)
	v1 := upsertVersion(1, "t-a", "t-b", "t-c", "t-d")
	v2 := upsertVersion(2, "t-b", "t-a")
	v3 := upsertVersion(3, "t-c", "t-a", "t-e")
	steps := []Step{stepPre, StepVectorsRead, StepUpserted, StepDeletedOlder}
	e.races(t, []version{v1, v2}, []version{v3}, steps, e.checkVectors)
}

// checkVectors checks that every point of the race's document carries the
// vector of its own text from the races' embedder.
func (e *raceEnv) checkVectors(t *testing.T, docID string) {
	t.Helper()
	checkVectors(t, e.srv, docID, "fake", 4)
}
