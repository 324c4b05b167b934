package producer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// TestBackfillIncrementalQdrant: the incremental backfill (3 edits, 1
// removal, -delete-missing) through the worker's Qdrant sink leaves the
// collection holding exactly the current files' chunks.
func TestBackfillIncrementalQdrant(t *testing.T) {
	const n = 200
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	qd := qdranttest.Start(t)
	qcfg := qdrantsink.DefaultConfig()
	qcfg.Addr = qd.Addr()
	sink, err := qdrantsink.New(ctx, qcfg, worker.NewKVRecords(e.top.Docs), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	dir := t.TempDir()
	writeFiles(t, dir, n, 4000) // a few chunks each

	if s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/"}); err != nil || s.Sent != n {
		t.Fatalf("first run = %+v, %v", s.Stats, err)
	}
	e.runWorkerWith(ctx, sink, n)
	compareViews(t, points(t, qd, qcfg.Collection), expected(t, dir, "kb/"))

	for _, i := range []int{3, 50, 120} {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.md", i))
		if err := os.WriteFile(p, mdContent(i+1000, 400), 0o644); err != nil { // shorter: fewer chunks
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "d07", "f00007.md")); err != nil {
		t.Fatal(err)
	}
	s, err := e.producer(Options{}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, IDPrefix: "kb/", DeleteMissing: true})
	if err != nil || s.Sent != 4 || s.Deleted != 1 {
		t.Fatalf("incremental run = %+v, %v; want 3 updates and 1 delete", s.Stats, err)
	}
	before := len(qd.Points(qcfg.Collection))
	e.runWorkerWith(ctx, sink, 4)
	compareViews(t, points(t, qd, qcfg.Collection), expected(t, dir, "kb/"))
	after := len(qd.Points(qcfg.Collection))
	if after >= before-3 {
		t.Errorf("%d points before the incremental run, %d after: the edits and the delete should remove some", before, after)
	}
	t.Logf("%d points, then %d", before, after)
}

// points returns the collection's chunk hashes by document, by position.
func points(t *testing.T, qd *qdranttest.Server, collection string) map[string][]string {
	t.Helper()
	byDoc := map[string]map[int64]string{}
	for _, p := range qd.Points(collection) {
		doc := p.Payload["doc_id"].GetStringValue()
		if byDoc[doc] == nil {
			byDoc[doc] = map[int64]string{}
		}
		byDoc[doc][p.Payload["position"].GetIntegerValue()] = p.Payload["hash"].GetStringValue()
	}
	out := map[string][]string{}
	for doc, m := range byDoc {
		hs := make([]string, len(m))
		for pos, h := range m {
			if pos < 0 || int(pos) >= len(hs) {
				t.Fatalf("document %s: position %d of %d points", doc, pos, len(m))
			}
			hs[pos] = h
		}
		out[doc] = hs
	}
	return out
}
