// Package sinktest is the conformance suite every worker.Sink passes, and
// an in-memory worker.Records for sink tests.
//
// The suite plays the worker around the sink: before each Write it moves
// the document record forward (step 1 of the processing procedure;
// a version whose record was already overtaken is skipped, as the worker
// acks it as superseded), then calls Write (steps 2 to 4). It checks what
// the sink stores through a Reader:
//
//   - re-writing the same version is idempotent;
//   - a cancelled context is honoured: Write returns an error that is not
//     permanent and stores nothing;
//   - a newer version with zero chunks, or a delete, removes the document's
//     older chunks;
//   - a changed document leaves exactly its new chunks;
//   - versions whose Writes run out of order (both started, the newer
//     written first) end at the newest, for two and three versions, with an
//     upsert or a delete as the newest;
//   - documents do not disturb each other.
//
// The suite's own tests run it against an in-memory reference sink and
// against broken copies of it, each of which must fail exactly the checks
// that catch its flaw, so a check that cannot fail shows up there.
package sinktest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// Reader tells what a sink currently stores. The suite calls it only when
// no Write is running.
type Reader interface {
	// Chunks returns the chunks the sink currently holds for the document,
	// as chunk id → content; an empty or nil map when it holds none. For a
	// change feed such as the subject sink's, that is the replay
	// docs/wire.md ("Reading CHUNKS") tells consumers to do.
	Chunks(ctx context.Context, docID string) (map[string]string, error)
}

// ReaderFunc adapts a function to the Reader interface.
type ReaderFunc func(ctx context.Context, docID string) (map[string]string, error)

// Chunks calls f(ctx, docID).
func (f ReaderFunc) Chunks(ctx context.Context, docID string) (map[string]string, error) {
	return f(ctx, docID)
}

// NewSink builds a fresh, empty sink for one subtest. records is the
// document record store the suite advances; a sink that re-reads records
// (step 4) must use it, others may ignore it.
type NewSink func(t *testing.T, records worker.Records) (worker.Sink, Reader)

// Records is an in-memory worker.Records whose records only move forward,
// like the KV bucket's compare-and-set. It is safe for concurrent use.
type Records struct {
	mu   sync.Mutex
	recs map[string]messages.DocRecord
}

// NewRecords returns an empty record store.
func NewRecords() *Records { return &Records{recs: map[string]messages.DocRecord{}} }

// Begin moves docID's record to seq, its place unknown, unless it already
// holds a higher sequence, reporting whether it did (false = superseded).
// Equal sequences (a redelivery) begin again.
func (r *Records) Begin(docID string, seq uint64) bool { return r.BeginAt(docID, "", seq) }

// BeginAt is Begin for a version written to target (worker.TargetSink), as
// the worker's step 1 records it.
func (r *Records) BeginAt(docID, target string, seq uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.recs[docID]
	if cur.IngestSeq > seq {
		return false
	}
	r.recs[docID] = messages.DocRecord{IngestSeq: seq, Targets: messages.TargetsWith(cur, ok, target, seq)}
	return true
}

// NewestSeq returns the newest sequence begun for docID at target
// (messages.DocRecord.NewestAt), 0 when none.
func (r *Records) NewestSeq(_ context.Context, docID, target string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs[docID].NewestAt(target), nil
}

// ChunkNamespace is the UUIDv5 namespace of chunk ids (messages.ChunkID).
var ChunkNamespace = uuid.MustParse("213f4c7f-db65-5c3f-bc36-05b524c4bce3")

// ChunkID returns the id of a document's chunk at a position.
func ChunkID(docID string, position int) string {
	return uuid.NewSHA1(ChunkNamespace, fmt.Appendf(nil, "%s#%d", docID, position)).String()
}

// Version builds a document version and its chunks, one per text.
func Version(docID string, seq uint64, texts ...string) (worker.Doc, []worker.Chunk) {
	doc := worker.Doc{ID: docID, Seq: seq, Op: worker.OpUpsert, Version: fmt.Sprintf("v%d", seq), Subject: "ingest.test"}
	var chunks []worker.Chunk
	for i, t := range texts {
		md := chunking.Metadata{{Key: "file", Value: docID}, {Key: "index", Value: i}}
		chunks = append(chunks, worker.Chunk{ID: ChunkID(docID, i), Position: i, Chunk: chunking.NewChunk(t, md)})
	}
	return doc, chunks
}

// Delete builds a delete request of a document.
func Delete(docID string, seq uint64) worker.Doc {
	return worker.Doc{ID: docID, Seq: seq, Op: worker.OpDelete, Subject: "ingest.test"}
}

// Want returns the Reader view of chunks.
func Want(chunks []worker.Chunk) map[string]string {
	out := map[string]string{}
	for _, c := range chunks {
		out[c.ID] = c.Chunk.Content()
	}
	return out
}

// harness plays the worker around one sink for one check; t receives the
// check's failures.
type harness struct {
	t       testing.TB
	sink    worker.Sink
	reader  Reader
	records *Records
}

// newHarness builds a fresh sink with newSink, handed t, and reports the
// check's failures to tb.
func newHarness(tb testing.TB, t *testing.T, newSink NewSink) *harness {
	records := NewRecords()
	sink, reader := newSink(t, records)
	return &harness{t: tb, sink: sink, reader: reader, records: records}
}

// begin is step 1.
func (h *harness) begin(doc worker.Doc) bool { return h.records.Begin(doc.ID, doc.Seq) }

func (h *harness) write(doc worker.Doc, chunks []worker.Chunk) {
	h.t.Helper()
	if err := h.sink.Write(context.Background(), doc, chunks); err != nil {
		h.t.Fatalf("Write(%s@%d, %d chunks) = %v", doc.ID, doc.Seq, len(chunks), err)
	}
}

// process is steps 1 to 4 as the worker runs them.
func (h *harness) process(doc worker.Doc, chunks []worker.Chunk) {
	h.t.Helper()
	if h.begin(doc) {
		h.write(doc, chunks)
	}
}

func (h *harness) expect(docID string, want map[string]string) {
	h.t.Helper()
	got, err := h.reader.Chunks(context.Background(), docID)
	if err != nil {
		h.t.Fatalf("Chunks(%s) = %v", docID, err)
	}
	if !maps.Equal(got, want) { // a nil map equals an empty one
		h.t.Fatalf("Chunks(%s) =\n  %v\nwant\n  %v", docID, sorted(got), sorted(want))
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k[:8]+"="+v)
	}
	slices.Sort(out)
	return out
}

// Run runs the conformance suite against sinks made by newSink: each
// check is a subtest with a fresh sink.
func Run(t *testing.T, newSink NewSink) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(newHarness(t, t, newSink)) })
	}
}

// check is one check of the suite.
type check struct {
	name string
	run  func(h *harness)
}

// checks are the suite's checks, in the order Run runs them.
var checks = []check{
	{"Idempotent", func(h *harness) {
		doc, chunks := Version("a.md", 10, "alpha", "beta", "gamma")
		h.process(doc, chunks)
		h.expect("a.md", Want(chunks))
		h.process(doc, chunks) // redelivery
		h.write(doc, chunks)   // and once more without step 1
		h.expect("a.md", Want(chunks))
	}},
	{"CancelledContext", func(h *harness) {
		doc, chunks := Version("c.md", 5, "one", "two")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h.begin(doc)
		err := h.sink.Write(ctx, doc, chunks)
		if err == nil {
			h.t.Fatal("Write with a cancelled context = nil, want an error")
		}
		if fault.IsPermanent(err) {
			h.t.Fatalf("Write with a cancelled context = %v, a permanent error; want a transient one", err)
		}
		h.expect("c.md", nil)
		h.write(doc, chunks) // the retry lands
		h.expect("c.md", Want(chunks))
	}},
	{"ZeroChunksRemovesOlder", func(h *harness) {
		doc, chunks := Version("z.md", 1, "x", "y")
		h.process(doc, chunks)
		empty, _ := Version("z.md", 2)
		h.process(empty, nil)
		h.expect("z.md", nil)
	}},
	{"DeleteRemovesOlder", func(h *harness) {
		doc, chunks := Version("d.md", 1, "x", "y", "z")
		h.process(doc, chunks)
		h.process(Delete("d.md", 2), nil)
		h.expect("d.md", nil)
		// Re-created after the delete.
		doc3, chunks3 := Version("d.md", 3, "back")
		h.process(doc3, chunks3)
		h.expect("d.md", Want(chunks3))
	}},
	{"ChangedDocumentLeavesNewChunks", func(h *harness) {
		doc1, chunks1 := Version("m.md", 1, "one", "two", "three", "four")
		h.process(doc1, chunks1)
		doc2, chunks2 := Version("m.md", 2, "uno", "dos")
		h.process(doc2, chunks2)
		h.expect("m.md", Want(chunks2))
		doc3, chunks3 := Version("m.md", 3, "eins", "zwei", "drei", "vier", "fünf")
		h.process(doc3, chunks3)
		h.expect("m.md", Want(chunks3))
	}},
	{"OlderArrivesAfterNewer", func(h *harness) {
		doc1, chunks1 := Version("o.md", 1, "old-a", "old-b", "old-c")
		doc2, chunks2 := Version("o.md", 2, "new-a")
		h.process(doc2, chunks2)
		h.process(doc1, chunks1) // superseded at step 1
		h.expect("o.md", Want(chunks2))
	}},
	{"TwoVersionsWrittenOutOfOrder", func(h *harness) {
		doc1, chunks1 := Version("r.md", 1, "old-a", "old-b", "old-c")
		doc2, chunks2 := Version("r.md", 2, "new-a", "new-b")
		h.begin(doc1)
		h.begin(doc2)
		h.write(doc2, chunks2)
		h.write(doc1, chunks1) // began before doc2, written after
		h.expect("r.md", Want(chunks2))
	}},
	{"ThreeVersionsWrittenOutOfOrder", func(h *harness) {
		doc1, chunks1 := Version("t.md", 1, "1a", "1b", "1c", "1d")
		doc2, chunks2 := Version("t.md", 2, "2a", "2b", "2c")
		doc3, chunks3 := Version("t.md", 3, "3a")
		h.begin(doc1)
		h.begin(doc2)
		h.begin(doc3)
		h.write(doc3, chunks3)
		h.write(doc1, chunks1)
		h.write(doc2, chunks2)
		h.expect("t.md", Want(chunks3))
	}},
	{"NewerDeleteWrittenBeforeOlder", func(h *harness) {
		doc1, chunks1 := Version("x.md", 1, "a", "b")
		h.begin(doc1)
		del := Delete("x.md", 2)
		h.begin(del)
		h.write(del, nil)
		h.write(doc1, chunks1)
		h.expect("x.md", nil)
	}},
	{"NewerZeroChunksWrittenBeforeOlder", func(h *harness) {
		doc0, chunks0 := Version("y.md", 1, "p", "q")
		h.process(doc0, chunks0)
		doc1, chunks1 := Version("y.md", 2, "a", "b", "c")
		h.begin(doc1)
		empty, _ := Version("y.md", 3)
		h.begin(empty)
		h.write(empty, nil)
		h.write(doc1, chunks1)
		h.expect("y.md", nil)
	}},
	{"DocumentsIndependent", func(h *harness) {
		docA, chunksA := Version("dir/a.md", 1, "a1", "a2")
		docB, chunksB := Version("dir/b.md", 2, "b1")
		h.process(docA, chunksA)
		h.process(docB, chunksB)
		h.process(Delete("dir/a.md", 3), nil)
		h.expect("dir/a.md", nil)
		h.expect("dir/b.md", Want(chunksB))
	}},
}
