package qdrantsink

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// stepPre parks a writer before step 1: it moves the record only when
// released, and is superseded if a newer version began meanwhile.
const stepPre Step = "pre"

var pauseSteps = []Step{stepPre, StepBegin, StepUpserted, StepDeletedOlder, StepRechecked}

// embedderSteps are the pause steps of the two-version races of a sink
// with an embedder, fewer under the race detector.
func embedderSteps() []Step {
	if raceDetector {
		return []Step{stepPre, StepVectorsRead, StepUpserted, StepDeletedOlder}
	}
	return []Step{stepPre, StepBegin, StepVectorsRead, StepUpserted, StepDeletedOlder, StepRechecked}
}

// threeVersionSteps are the pause steps of the three-version races and the
// newest versions they race, fewer with -short or the race detector
// (unless CHUNKSTREAM_TEST_FULL=1 asks for the long form). StepBegin is
// left out: it differs from stepPre only in when the record moves, which
// the two-version races cover.
func threeVersionSteps(newest []version) ([]Step, []version) {
	if testing.Short() || raceDetector && !testutil.Enabled(testutil.Full) {
		return []Step{stepPre, StepUpserted, StepDeletedOlder}, newest[:1]
	}
	return []Step{stepPre, StepUpserted, StepDeletedOlder, StepRechecked}, newest
}

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
	// first makes step 1 tell each version whether it is the first of its
	// document (Doc.First), as the worker does; without it no version is.
	first bool
}

// newRaceEnv starts a Qdrant double and a sink on it with emb (nil: none)
// whose step hook parks the writers of the races.
func newRaceEnv(t *testing.T, emb Embedder, first bool) *raceEnv {
	e := &raceEnv{srv: qdranttest.Start(t), records: sinktest.NewRecords(), first: first}
	e.reader = reader(e.srv, "chunks")
	e.sink = newSink(t, e.srv, e.records, emb)
	e.sink.hook = func(_ context.Context, step Step, doc worker.Doc) {
		v, _ := e.writers.Load(fmt.Sprintf("%s@%d", doc.ID, doc.Seq))
		if w := v.(*writer); w.pause == step {
			close(w.parked)
			<-w.release
		}
	}
	return e
}

// begin is step 1 as the worker runs it: it moves the record, reporting
// false when a newer version began first (superseded), and with first
// tells the version whether it is the first of its document (no record
// before). The driver calls it one writer at a time.
func (e *raceEnv) begin(doc *worker.Doc) bool {
	newest, _ := e.records.NewestSeq(context.Background(), doc.ID, "")
	if !e.records.Begin(doc.ID, doc.Seq) {
		return false
	}
	doc.First = e.first && newest == 0
	return true
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
			e.begin(&w.doc)
		}
	}
	ctx := context.Background()
	for _, w := range ws {
		go func() {
			if w.pause == stepPre {
				close(w.parked)
				<-w.release
				if !e.begin(&w.doc) {
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

// races runs, each as a subtest, every race of the versions older (oldest
// first) and one of newest (in turn), each version parked at one of steps
// and released in every order, and requires the document to end at the
// newest version; check, when set, checks each race's document as well.
// Choices that park a version at a step it never reaches are left out.
func (e *raceEnv) races(t *testing.T, older, newest []version, steps []Step, check func(t *testing.T, docID string)) {
	for _, last := range newest {
		vs := append(slices.Clone(older), last)
		for _, pauses := range stepChoices(len(vs), steps) {
			if neverParked(vs, pauses) {
				continue
			}
			for _, order := range permutations(len(vs)) {
				t.Run(raceName(last, pauses, order), func(t *testing.T) {
					ws := make([]*writer, len(vs))
					for i, v := range vs {
						ws[i] = v.writer(pauses[i])
					}
					got := e.race(t, ws, order)
					if want := sinktest.Want(ws[len(ws)-1].chunks); !equalChunks(got, want) {
						t.Fatalf("ended with %v, want %v", got, want)
					}
					if check != nil {
						check(t, ws[0].doc.ID)
					}
				})
			}
		}
	}
}

// neverParked tells whether a version would never reach its pause step:
// one without chunks reads no stored vectors.
func neverParked(vs []version, pauses []Step) bool {
	for i, v := range vs {
		if len(v.chunks) == 0 && pauses[i] == StepVectorsRead {
			return true
		}
	}
	return false
}

// stepChoices returns every choice of one step of steps for each of n
// versions, the last version's choice varying fastest.
func stepChoices(n int, steps []Step) [][]Step {
	if n == 0 {
		return [][]Step{nil}
	}
	var out [][]Step
	for _, first := range steps {
		for _, rest := range stepChoices(n-1, steps) {
			out = append(out, append([]Step{first}, rest...))
		}
	}
	return out
}

// raceName names a race by its newest version, the pause steps (older and
// newer for two versions) and the release order.
func raceName(newest version, pauses []Step, order []int) string {
	if len(pauses) == 2 {
		return fmt.Sprintf("%s/older@%s/newer@%s/release%v", newest.name, pauses[0], pauses[1], order)
	}
	names := make([]string, len(pauses))
	for i, p := range pauses {
		names[i] = string(p)
	}
	return fmt.Sprintf("%s/%s/release%v", newest.name, strings.Join(names, "-"), order)
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
	older := upsertVersion(10, "old-0", "old-1", "old-2")
	newers := []version{
		upsertVersion(11, "new-0", "new-1"),
		upsertVersion(11, "new-0", "new-1", "new-2", "new-3"),
		emptyVersion(11),
		deleteVersion(11),
	}
	newRaceEnv(t, nil, false).races(t, []version{older}, newers, pauseSteps, nil)
}

// TestThreeVersionRaces does the same for three versions; the newest is an
// upsert or a delete.
func TestThreeVersionRaces(t *testing.T) {
	v1 := upsertVersion(1, "a0", "a1", "a2", "a3")
	v2 := upsertVersion(2, "b0", "b1")
	steps, newest := threeVersionSteps([]version{upsertVersion(3, "c0", "c1", "c2"), deleteVersion(3)})
	newRaceEnv(t, nil, false).races(t, []version{v1, v2}, newest, steps, nil)
}

func equalChunks(got, want map[string]string) bool {
	return len(got) == 0 && len(want) == 0 || maps.Equal(got, want)
}
