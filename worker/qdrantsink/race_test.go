package qdrantsink

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// stepPre parks a writer before step 1: it moves the record only when
// released, and is superseded if a newer version began meanwhile.
const stepPre Step = "pre"

var pauseSteps = []Step{stepPre, StepBegin, StepUpserted, StepDeletedOlder, StepRechecked}

// writer is one document version in a race.
type writer struct {
	doc     worker.Doc
	chunks  []worker.Chunk
	pause   Step
	parked  chan struct{}
	release chan struct{}
	done    chan error
}

// raceEnv is one sink shared by many race scenarios, each on its own
// document.
type raceEnv struct {
	srv     *qdranttest.Server
	sink    *Sink
	records *sinktest.Records
	writers sync.Map // "doc id@seq" → *writer
	n       atomic.Int64
	reader  sinktest.Reader
}

func newRaceEnv(t *testing.T) *raceEnv {
	e := &raceEnv{srv: qdranttest.Start(t), records: sinktest.NewRecords()}
	e.reader = reader(e.srv, "chunks")
	e.sink = newSink(t, e.srv, e.records, nil)
	e.sink.hook = func(_ context.Context, step Step, doc worker.Doc) {
		v, _ := e.writers.Load(fmt.Sprintf("%s@%d", doc.ID, doc.Seq))
		if w := v.(*writer); w.pause == step {
			close(w.parked)
			<-w.release
		}
	}
	return e
}

// race runs the writers (versions of one document) on a fresh document id,
// each parked at its pause step, then releases them one by one in order
// (indexes into ws), each running to the end before the next is released.
// It returns the final chunks of the document. Every interleaving of the
// sink's steps between versions is one choice of pause steps and release
// order.
func (e *raceEnv) race(t *testing.T, ws []*writer, order []int) map[string]string {
	t.Helper()
	docID := fmt.Sprintf("race-%d.md", e.n.Add(1))
	for _, w := range ws {
		w.doc.ID = docID
		w.chunks = slices.Clone(w.chunks)
		for i := range w.chunks {
			w.chunks[i].ID = sinktest.ChunkID(docID, w.chunks[i].Position)
		}
		w.parked, w.release, w.done = make(chan struct{}), make(chan struct{}), make(chan error, 1)
		e.writers.Store(fmt.Sprintf("%s@%d", docID, w.doc.Seq), w)
	}
	// Writers not parked before step 1 began in sequence order.
	for _, w := range ws {
		if w.pause != stepPre {
			e.records.Begin(w.doc.ID, w.doc.Seq)
		}
	}
	ctx := context.Background()
	for _, w := range ws {
		go func() {
			if w.pause == stepPre {
				close(w.parked)
				<-w.release
				if !e.records.Begin(w.doc.ID, w.doc.Seq) {
					w.done <- nil // superseded: acked, nothing written
					return
				}
			}
			w.done <- e.sink.Write(ctx, w.doc, w.chunks)
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

type version struct {
	name   string
	doc    worker.Doc
	chunks []worker.Chunk
}

func upsertVersion(seq uint64, texts ...string) version {
	doc, chunks := sinktest.Version("race.md", seq, texts...)
	return version{fmt.Sprintf("v%d:%d-chunks", seq, len(texts)), doc, chunks}
}

func deleteVersion(seq uint64) version {
	return version{fmt.Sprintf("v%d:delete", seq), sinktest.Delete("race.md", seq), nil}
}

func emptyVersion(seq uint64) version {
	doc, _ := sinktest.Version("race.md", seq)
	return version{fmt.Sprintf("v%d:zero-chunks", seq), doc, nil}
}

func (v version) writer(pause Step) *writer {
	return &writer{doc: v.doc, chunks: v.chunks, pause: pause}
}

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, slices.Insert(slices.Clone(p), i, n-1))
		}
	}
	return out
}

// TestTwoVersionRaces drives every interleaving of an older upsert and a
// newer version (fewer chunks, more chunks, zero chunks, delete) at the
// granularity of the sink's steps: each is parked before step 1, before
// step 2, after step 2, after step 3 or after step 4, then they are
// released in both orders. The document always ends at the newer version.
func TestTwoVersionRaces(t *testing.T) {
	e := newRaceEnv(t)
	older := upsertVersion(10, "old-0", "old-1", "old-2")
	newers := []version{
		upsertVersion(11, "new-0", "new-1"),
		upsertVersion(11, "new-0", "new-1", "new-2", "new-3"),
		emptyVersion(11),
		deleteVersion(11),
	}
	for _, newer := range newers {
		for _, po := range pauseSteps {
			for _, pn := range pauseSteps {
				for _, order := range permutations(2) {
					name := fmt.Sprintf("%s/older@%s/newer@%s/release%v", newer.name, po, pn, order)
					t.Run(name, func(t *testing.T) {
						ws := []*writer{older.writer(po), newer.writer(pn)}
						got := e.race(t, ws, order)
						if want := sinktest.Want(ws[1].chunks); !equalChunks(got, want) {
							t.Fatalf("ended with %v, want %v", got, want)
						}
					})
				}
			}
		}
	}
}

// TestThreeVersionRaces does the same for three versions; the newest is an
// upsert or a delete.
func TestThreeVersionRaces(t *testing.T) {
	e := newRaceEnv(t)
	v1 := upsertVersion(1, "a0", "a1", "a2", "a3")
	v2 := upsertVersion(2, "b0", "b1")
	newest := []version{upsertVersion(3, "c0", "c1", "c2"), deleteVersion(3)}
	// StepBegin is left out here: it differs from stepPre only in when the
	// record moves, which the two-version races cover.
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
						name := fmt.Sprintf("%s/%s-%s-%s/release%v", v3.name, p1, p2, p3, order)
						t.Run(name, func(t *testing.T) {
							ws := []*writer{v1.writer(p1), v2.writer(p2), v3.writer(p3)}
							got := e.race(t, ws, order)
							if want := sinktest.Want(ws[2].chunks); !equalChunks(got, want) {
								t.Fatalf("ended with %v, want %v", got, want)
							}
						})
					}
				}
			}
		}
	}
}

func equalChunks(got, want map[string]string) bool {
	return len(got) == 0 && len(want) == 0 || maps.Equal(got, want)
}
