package qdrantsink

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// beginFirst is step 1 as the worker runs it for a document: it moves the
// record and tells the version whether it is the first (no record
// before), as Doc.First. The race drivers call it one writer at a time.
func (e *raceEnv) beginFirst(doc *worker.Doc) bool {
	newest, _ := e.records.NewestSeq(context.Background(), doc.ID)
	if !e.records.Begin(doc.ID, doc.Seq) {
		return false
	}
	doc.First = newest == 0
	return true
}

// raceFirst is race (race_test.go) for a document without a record: each
// version learns at its step 1 whether it is the first, as from the
// worker, so the first to begin skips the reuse read and step 3.
func (e *raceEnv) raceFirst(t *testing.T, ws []*writer, order []int) map[string]string {
	t.Helper()
	docID := fmt.Sprintf("first-%d.md", e.n.Add(1))
	for _, w := range ws {
		w.doc.ID = docID
		w.chunks = slices.Clone(w.chunks)
		for i := range w.chunks {
			w.chunks[i].ID = sinktest.ChunkID(docID, w.chunks[i].Position)
		}
		w.parked, w.release, w.done = make(chan struct{}), make(chan struct{}), make(chan error, 1)
		e.writers.Store(fmt.Sprintf("%s@%d", docID, w.doc.Seq), w)
	}
	docs := make([]worker.Doc, len(ws))
	for i, w := range ws {
		docs[i] = w.doc
		if w.pause != stepPre {
			e.beginFirst(&docs[i])
		}
	}
	ctx := context.Background()
	for i, w := range ws {
		go func() {
			doc := docs[i]
			if w.pause == stepPre {
				close(w.parked)
				<-w.release
				if !e.beginFirst(&doc) {
					w.done <- nil
					return
				}
			}
			w.done <- e.sink.Write(ctx, doc, w.chunks)
		}()
		select {
		case <-w.parked:
		case <-time.After(10 * time.Second):
			t.Fatalf("writer %d never reached %s", w.doc.Seq, w.pause)
		}
	}
	for _, i := range order {
		w := ws[i]
		close(w.release)
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("Write(seq %d) = %v", w.doc.Seq, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("writer %d did not finish", w.doc.Seq)
		}
	}
	got, err := e.reader.Chunks(ctx, docID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFirstVersionRaces drives every interleaving of two versions of a
// new document, the first to begin skipping the reuse read and step 3,
// with texts shared at other positions: the document always ends at the
// newer version, and every point carries the vector of its own text.
func TestFirstVersionRaces(t *testing.T) {
	e := newReuseRaceEnv(t)
	older := upsertVersion(10, "t-a", "t-b", "t-c")
	newers := []version{
		upsertVersion(11, "t-b", "t-a"),
		upsertVersion(11, "t-a", "t-b", "t-c", "t-d"),
		emptyVersion(11),
		deleteVersion(11),
	}
	steps := []Step{stepPre, StepBegin, StepVectorsRead, StepUpserted, StepDeletedOlder, StepRechecked}
	if raceDetector {
		steps = []Step{stepPre, StepVectorsRead, StepUpserted, StepDeletedOlder}
	}
	for _, newer := range newers {
		for _, po := range steps {
			for _, pn := range steps {
				if len(newer.chunks) == 0 && pn == StepVectorsRead {
					continue // no chunks: no vectors read
				}
				for _, order := range permutations(2) {
					t.Run(fmt.Sprintf("%s/older@%s/newer@%s/release%v", newer.name, po, pn, order), func(t *testing.T) {
						ws := []*writer{older.writer(po), newer.writer(pn)}
						got := e.raceFirst(t, ws, order)
						if want := sinktest.Want(ws[1].chunks); !equalChunks(got, want) {
							t.Fatalf("ended with %v, want %v", got, want)
						}
						checkVectors(t, e.srv, ws[0].doc.ID, "fake", 4)
					})
				}
			}
		}
	}
}

// TestFirstVersionThreeRaces does the same for three versions.
func TestFirstVersionThreeRaces(t *testing.T) {
	e := newReuseRaceEnv(t)
	v1 := upsertVersion(1, "t-a", "t-b", "t-c", "t-d")
	v2 := upsertVersion(2, "t-b", "t-a")
	newest := []version{upsertVersion(3, "t-c", "t-a", "t-e"), deleteVersion(3)}
	steps := []Step{stepPre, StepUpserted, StepDeletedOlder, StepRechecked}
	if testing.Short() || raceDetector {
		steps = []Step{stepPre, StepUpserted, StepDeletedOlder}
		newest = newest[:1]
	}
	for _, v3 := range newest {
		for _, p1 := range steps {
			for _, p2 := range steps {
				for _, p3 := range steps {
					for _, order := range permutations(3) {
						t.Run(fmt.Sprintf("%s/%s-%s-%s/release%v", v3.name, p1, p2, p3, order), func(t *testing.T) {
							ws := []*writer{v1.writer(p1), v2.writer(p2), v3.writer(p3)}
							got := e.raceFirst(t, ws, order)
							if want := sinktest.Want(ws[2].chunks); !equalChunks(got, want) {
								t.Fatalf("ended with %v, want %v", got, want)
							}
							checkVectors(t, e.srv, ws[0].doc.ID, "fake", 4)
						})
					}
				}
			}
		}
	}
}

// TestFirstVersionRequests: the first version of a document is one
// upsert (no read of stored vectors, no delete of older points) and a
// re-check; a later version reads, upserts and deletes; a first delete or
// zero-chunk version sends nothing.
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
		{"next version", worker.Doc{ID: "f.md", Seq: 2}, []string{"a", "c"}, false, []string{"Scroll", "Upsert", "Delete"}},
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
