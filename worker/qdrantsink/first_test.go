package qdrantsink

import (
	"context"
	"slices"
	"testing"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestFirstVersionRaces drives every interleaving of two versions of a
// new document, the first to begin skipping the reuse read and step 3,
// with texts shared at other positions: the document always ends at the
// newer version, and every point carries the vector of its own text.
func TestFirstVersionRaces(t *testing.T) {
	e := newRaceEnv(t, &fakeEmbedder{dims: 4}, true)
	older := upsertVersion(10, "t-a", "t-b", "t-c")
	newers := []version{
		upsertVersion(11, "t-b", "t-a"),
		upsertVersion(11, "t-a", "t-b", "t-c", "t-d"),
		emptyVersion(11),
		deleteVersion(11),
	}
	e.races(t, []version{older}, newers, embedderSteps(), e.checkVectors)
}

// TestFirstVersionThreeRaces does the same for three versions.
func TestFirstVersionThreeRaces(t *testing.T) {
	e := newRaceEnv(t, &fakeEmbedder{dims: 4}, true)
	v1 := upsertVersion(1, "t-a", "t-b", "t-c", "t-d")
	v2 := upsertVersion(2, "t-b", "t-a")
	steps, newest := threeVersionSteps([]version{upsertVersion(3, "t-c", "t-a", "t-e"), deleteVersion(3)})
	e.races(t, []version{v1, v2}, newest, steps, e.checkVectors)
}

// TestFirstVersionRequests: the first version of a document is one
// upsert (no read of stored vectors, no delete of older points) and a
// re-check; a later version reads, then upserts and deletes in one
// ordered batch update; a first delete or zero-chunk version sends
// nothing.
func TestFirstVersionRequests(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	emb := &fakeEmbedder{dims: 4}
	s := newSink(t, srv, records, emb)
	ctx := context.Background()
	methods := func(doc worker.Doc, chunks []worker.Chunk) []string {
		t.Helper()
		srv.ResetCalls()
		if err := s.Write(ctx, doc, chunks); err != nil {
			t.Fatalf("Write(%s@%d) = %v", doc.ID, doc.Seq, err)
		}
		var out []string
		for _, c := range srv.Calls() {
			out = append(out, c.Method)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		doc   worker.Doc
		texts []string
		first bool
		want  []string
	}{
		{"first version", worker.Doc{ID: "f.md", Seq: 1}, []string{"a", "b"}, true, []string{"Upsert"}},
		{"next version", worker.Doc{ID: "f.md", Seq: 2}, []string{"a", "c"}, false, []string{"Scroll", "UpdateBatch"}},
		{"first zero-chunk version", worker.Doc{ID: "z.md", Seq: 3}, nil, true, nil},
		{"first delete", worker.Doc{ID: "d.md", Seq: 4, Op: worker.OpDelete}, nil, true, nil},
		{"delete", worker.Doc{ID: "f.md", Seq: 5, Op: worker.OpDelete}, nil, false, []string{"Delete"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, chunks := sinktest.Version(tc.doc.ID, tc.doc.Seq, tc.texts...)
			if tc.doc.Op == worker.OpDelete {
				doc = sinktest.Delete(tc.doc.ID, tc.doc.Seq)
			}
			doc.First = tc.first
			records.Begin(doc.ID, doc.Seq)
			if got := methods(doc, chunks); !slices.Equal(got, tc.want) {
				t.Errorf("requests %v, want %v", got, tc.want)
			}
			got := must(reader(srv, "chunks").Chunks(ctx, doc.ID))
			if want := sinktest.Want(chunks); !equalChunks(got, want) {
				t.Errorf("chunks %v, want %v", got, want)
			}
		})
	}
}
