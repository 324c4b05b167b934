package sinktest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// memSink is a reference sink: it stores points with their ingest_seq and
// follows the same procedure as the Qdrant sink, on a map.
type memSink struct {
	mu      sync.Mutex
	records worker.Records
	points  map[string]memPoint // by chunk id
}

type memPoint struct {
	doc     string
	seq     uint64
	content string
}

func (m *memSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	for _, c := range chunks { // step 2 with update_filter ingest_seq < S
		if old, ok := m.points[c.ID]; ok && old.seq >= doc.Seq {
			continue
		}
		m.points[c.ID] = memPoint{doc.ID, doc.Seq, c.Chunk.Content()}
	}
	for id, p := range m.points { // step 3
		if p.doc == doc.ID && p.seq < doc.Seq {
			delete(m.points, id)
		}
	}
	m.mu.Unlock()
	newest, err := m.records.NewestSeq(ctx, doc.ID) // step 4
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

func TestReferenceSinkConforms(t *testing.T) {
	sinktest.Run(t, func(t *testing.T, records worker.Records) (worker.Sink, sinktest.Reader) {
		m := &memSink{records: records, points: map[string]memPoint{}}
		return m, m
	})
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
	if n, _ := r.NewestSeq(context.Background(), "d"); n != 9 {
		t.Errorf("NewestSeq = %d, want 9", n)
	}
}
