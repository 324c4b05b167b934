package qdrantsink

import (
	"context"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestVersionsInTwoCollections: two fleets' sinks, one writing the
// collection "chunks" and one "chunks_v2" (a rolling restart onto a new
// collection), share the document records. A version overtaken by a newer
// one written to the other collection keeps its chunks where it went;
// overtaken in its own collection it is removed as before, so that each
// collection ends with the newest version written to it.
func TestVersionsInTwoCollections(t *testing.T) {
	srv := qdranttest.Start(t)
	records := sinktest.NewRecords()
	oldFleet := newSink(t, srv, records, nil)
	cfg := testConfig(srv)
	cfg.Collection = "chunks_v2"
	newFleet := newSinkWith(t, srv, cfg, records)
	v1, v2 := reader(srv, "chunks"), reader(srv, "chunks_v2")
	ctx := context.Background()

	// write runs steps 1 to 4 of doc at sink, parking it after step
	// until park is closed when park is set; it returns when the version
	// is parked (or done) and a channel of Write's result.
	write := func(s *Sink, doc worker.Doc, chunks []worker.Chunk, step Step, park chan struct{}) <-chan error {
		if !records.BeginAt(doc.RecordID(), s.Target(doc), doc.Seq) {
			t.Fatalf("version %d superseded at step 1", doc.Seq)
		}
		parked := make(chan struct{})
		done := make(chan error, 1)
		s.hook = func(_ context.Context, st Step, d worker.Doc) {
			if park != nil && st == step && d.Seq == doc.Seq {
				close(parked)
				<-park
			}
		}
		go func() { done <- s.Write(ctx, doc, chunks) }()
		if park != nil {
			select {
			case <-parked:
			case <-time.After(10 * time.Second):
				t.Fatalf("version %d never reached %s", doc.Seq, step)
			}
		}
		return done
	}
	wait := func(done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Write did not return")
		}
	}
	chunksOf := func(r sinktest.Reader, docID string) map[string]string {
		t.Helper()
		got, err := r.Chunks(ctx, docID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	// Overtaken from the other collection: both keep their version.
	u, uc := sinktest.Version("a.md", 1, "first text", "more")
	wait(write(oldFleet, u, uc, "", nil))
	v, vc := sinktest.Version("a.md", 2, "second text", "more", "and more")
	release := make(chan struct{})
	parked := write(oldFleet, v, vc, StepDeletedOlder, release)
	n, nc := sinktest.Version("a.md", 3, "third text")
	wait(write(newFleet, n, nc, "", nil))
	close(release)
	wait(parked)
	if got, want := chunksOf(v1, "a.md"), sinktest.Want(vc); !equalChunks(got, want) {
		t.Errorf("chunks holds %v, want version 2 (overtaken in chunks_v2 only) %v", got, want)
	}
	if got, want := chunksOf(v2, "a.md"), sinktest.Want(nc); !equalChunks(got, want) {
		t.Errorf("chunks_v2 holds %v, want version 3 %v", got, want)
	}

	// Overtaken in its own collection, its upsert landing after the newer
	// version's, while a still newer version went to the other: removed
	// (its collection ends at its newest version, not with the overtaken
	// version's extra chunks).
	b, bc := sinktest.Version("b.md", 1, "one", "two", "three")
	release = make(chan struct{})
	parked = write(oldFleet, b, bc, StepBegin, release)
	m, mc := sinktest.Version("b.md", 2, "one")
	wait(write(oldFleet, m, mc, "", nil))
	p, pc := sinktest.Version("b.md", 3, "elsewhere")
	wait(write(newFleet, p, pc, "", nil))
	close(release)
	wait(parked)
	if got, want := chunksOf(v1, "b.md"), sinktest.Want(mc); !equalChunks(got, want) {
		t.Errorf("chunks holds %v, want version 2, its newest %v", got, want)
	}
}
