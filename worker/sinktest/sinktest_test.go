package sinktest_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// memSink is a reference sink: it stores points with their ingest_seq and
// follows the same procedure as the Qdrant sink, on a map; with a flaw it
// is a broken sink the suite must fail.
type memSink struct {
	mu      sync.Mutex
	records worker.Records
	points  map[string]memPoint // by chunk id
	flaw    flaw
}

// flaw is a way to break the reference sink.
type flaw int

const (
	sound flaw = iota
	// ignoresContext writes whatever its context says.
	ignoresContext
	// olderOverwritesNewer upserts without the update filter (step 2), so
	// an older version replaces a newer one's points.
	olderOverwritesNewer
	// keepsOlderChunks never removes the document's older points (step 3).
	keepsOlderChunks
	// skipsRecheck never re-reads the record after its write (step 4), so
	// an older version written last leaves its extra points.
	skipsRecheck
)

type memPoint struct {
	doc     string
	seq     uint64
	content string
}

func (m *memSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil && m.flaw != ignoresContext {
		return err
	}
	m.mu.Lock()
	for _, c := range chunks { // step 2 with update_filter ingest_seq < S
		if old, ok := m.points[c.ID]; ok && old.seq >= doc.Seq && m.flaw != olderOverwritesNewer {
			continue
		}
		m.points[c.ID] = memPoint{doc.ID, doc.Seq, c.Chunk.Content()}
	}
	for id, p := range m.points { // step 3
		if p.doc == doc.ID && p.seq < doc.Seq && m.flaw != keepsOlderChunks {
			delete(m.points, id)
		}
	}
	m.mu.Unlock()
	if m.flaw == skipsRecheck {
		return nil
	}
	newest, err := m.records.NewestSeq(ctx, doc.ID, "") // step 4
	if err != nil {
		return err
	}
	if newest > doc.Seq {
		m.mu.Lock()
		for id, p := range m.points {
			if p.doc == doc.ID && p.seq == doc.Seq {
				delete(m.points, id)
			}
		}
		m.mu.Unlock()
	}
	return nil
}

func (m *memSink) Chunks(_ context.Context, docID string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for id, p := range m.points {
		if p.doc == docID {
			out[id] = p.content
		}
	}
	return out, nil
}

func newMemSink(f flaw) sinktest.NewSink {
	return func(_ *testing.T, records worker.Records) (worker.Sink, sinktest.Reader) {
		m := &memSink{records: records, points: map[string]memPoint{}, flaw: f}
		return m, m
	}
}

func TestReferenceSinkConforms(t *testing.T) {
	sinktest.Run(t, newMemSink(sound))
}

// TestSuiteFailsBrokenSinks: each flaw of the reference sink fails exactly
// the checks that catch it, and the sound sink fails none.
func TestSuiteFailsBrokenSinks(t *testing.T) {
	for _, tt := range []struct {
		name string
		flaw flaw
		want []string
	}{
		{"sound", sound, nil},
		{"ignores its context", ignoresContext, []string{"CancelledContext"}},
		{"lets an older version overwrite a newer", olderOverwritesNewer, []string{
			"ThreeVersionsWrittenOutOfOrder", "TwoVersionsWrittenOutOfOrder"}},
		{"never removes older chunks", keepsOlderChunks, []string{
			"ChangedDocumentLeavesNewChunks", "DeleteRemovesOlder", "DocumentsIndependent", "ZeroChunksRemovesOlder"}},
		{"never re-reads the record", skipsRecheck, []string{
			"NewerDeleteWrittenBeforeOlder", "NewerZeroChunksWrittenBeforeOlder", "ThreeVersionsWrittenOutOfOrder", "TwoVersionsWrittenOutOfOrder"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			failures := sinktest.Failures(t, newMemSink(tt.flaw))
			if got := slices.Sorted(maps.Keys(failures)); !slices.Equal(got, tt.want) {
				t.Errorf("checks failed = %q, want %q", got, tt.want)
			}
			for name, msg := range failures {
				t.Logf("%s: %s", name, msg)
			}
		})
	}
}

func TestChunkID(t *testing.T) {
	if got, want := sinktest.ChunkID("docs/a.md", 0), "792eb6ad-d4df-57d5-9e6f-cad1f78b3044"; got != want {
		t.Fatalf("ChunkID(docs/a.md, 0) = %s, want %s", got, want)
	}
}

func TestRecordsOnlyMoveForward(t *testing.T) {
	r := sinktest.NewRecords()
	steps := []struct {
		seq  uint64
		want bool
	}{{5, true}, {3, false}, {5, true}, {9, true}, {8, false}}
	for _, s := range steps {
		if got := r.Begin("d", s.seq); got != s.want {
			t.Errorf("Begin(d, %d) = %v, want %v", s.seq, got, s.want)
		}
	}
	if n, _ := r.NewestSeq(context.Background(), "d", ""); n != 9 {
		t.Errorf("NewestSeq = %d, want 9", n)
	}
}
