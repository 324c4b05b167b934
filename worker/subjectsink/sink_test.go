package subjectsink_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/sinktest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

type env struct {
	js  jetstream.JetStream
	cfg topology.Config
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := topology.DefaultConfig()
	if _, err := topology.Ensure(context.Background(), js, cfg); err != nil {
		t.Fatal(err)
	}
	return &env{js: js, cfg: cfg}
}

// stored is one record of CHUNKS with its stream sequence and the batch
// headers the server keeps.
type stored struct {
	seq    uint64
	rec    messages.ChunkRecord
	batch  string
	commit bool
}

func (e *env) records(t testing.TB) []stored {
	t.Helper()
	ctx := context.Background()
	st, err := e.js.Stream(ctx, e.cfg.ChunksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatalf("record %d: %v", seq, err)
		}
		out = append(out, stored{seq: seq, rec: rec, batch: m.Header.Get(jetstreamext.BatchIDHeader),
			commit: m.Header.Get(jetstreamext.BatchCommitHeader) == "1"})
	}
	return out
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("chunk %d", i)
	}
	return out
}

// TestLargeDocumentBatches: a version of 2,500 chunks is stored as three
// atomic batches cut at multiples of MaxBatch (1,000, 1,000, 500), each
// contiguous and ending with a commit, in position order; written again
// (a redelivery within the duplicate window), nothing new is stored.
func TestLargeDocumentBatches(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 256)
	doc, chunks := sinktest.Version("big.md", 7, texts(2500)...)
	ctx := context.Background()
	if err := sink.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	got := e.records(t)
	if len(got) != 2500 {
		t.Fatalf("CHUNKS holds %d records, want 2500", len(got))
	}
	var batches []string
	for i, s := range got {
		if s.rec.Position != i || s.rec.Count != 2500 || s.rec.IngestSeq != 7 {
			t.Fatalf("record %d: position %d count %d ingest_seq %d, want %d 2500 7", s.seq, s.rec.Position, s.rec.Count, s.rec.IngestSeq, i)
		}
		if i == 0 || s.batch != got[i-1].batch {
			batches = append(batches, s.batch)
		}
		last := i == len(got)-1 || (i+1)%subjectsink.MaxBatch == 0
		if s.commit != last {
			t.Errorf("record at position %d: commit %v, want %v", i, s.commit, last)
		}
	}
	if len(batches) != 3 {
		t.Errorf("records in %d batches, want 3", len(batches))
	}

	if err := sink.Write(ctx, doc, chunks); err != nil {
		t.Fatalf("Write again = %v, want nil (stored before)", err)
	}
	if n := len(e.records(t)); n != 2500 {
		t.Errorf("after a second Write CHUNKS holds %d records, want 2500", n)
	}
}

// TestPartlyWrittenVersionCompletes: a version whose first batch was
// stored before its worker died is completed by the redelivery: the
// stored batch is refused as a duplicate (nothing stored twice) and the
// rest follows.
func TestPartlyWrittenVersionCompletes(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 0)
	doc, chunks := sinktest.Version("big.md", 9, texts(1200)...)
	ctx := context.Background()
	if err := sink.Write(ctx, doc, chunks[:subjectsink.MaxBatch]); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, doc, chunks); err != nil {
		t.Fatal(err)
	}
	got := e.records(t)
	if len(got) != 1200 {
		t.Fatalf("CHUNKS holds %d records, want 1200", len(got))
	}
	for i, s := range got {
		if s.rec.Position != i {
			t.Fatalf("record %d at position %d, want %d", s.seq, s.rec.Position, i)
		}
	}
}

// TestOneRecordVersions: a delete, a version without chunks and one of a
// single chunk are each one record, published as a plain message (stored
// whole or not at all without a batch), and stored once when written
// again.
func TestOneRecordVersions(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 0)
	ctx := context.Background()
	empty, _ := sinktest.Version("a.md", 3)
	one, chunks := sinktest.Version("a.md", 5, "only chunk")
	for range 2 {
		if err := sink.Write(ctx, empty, nil); err != nil {
			t.Fatal(err)
		}
		if err := sink.Write(ctx, sinktest.Delete("a.md", 4), nil); err != nil {
			t.Fatal(err)
		}
		if err := sink.Write(ctx, one, chunks); err != nil {
			t.Fatal(err)
		}
	}
	got := e.records(t)
	if len(got) != 3 {
		t.Fatalf("CHUNKS holds %d records, want 3", len(got))
	}
	for i, s := range got[:2] {
		if s.rec.Op != messages.OpDelete || s.rec.Count != 0 || s.rec.IngestSeq != uint64(3+i) {
			t.Errorf("record %d = %+v, want a delete record of version %d", s.seq, s.rec, 3+i)
		}
	}
	if r := got[2].rec; r.Op != messages.OpUpsert || r.Count != 1 || r.IngestSeq != 5 {
		t.Errorf("record %d = %+v, want the one chunk of version 5", got[2].seq, r)
	}
}

// TestGroupWithStoredVersion: versions committed together while one of
// them was stored before (the group is refused as holding a duplicate)
// are each stored once, whole and contiguous.
func TestGroupWithStoredVersion(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 0)
	ctx := context.Background()
	stored, storedChunks := sinktest.Version("stored.md", 1, texts(3)...)
	if err := sink.Write(ctx, stored, storedChunks); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for d := range 16 {
		wg.Go(func() {
			doc, chunks := stored, storedChunks
			if d > 0 {
				doc, chunks = sinktest.Version(fmt.Sprintf("doc-%d.md", d), uint64(d+1), texts(5)...)
			}
			if err := sink.Write(ctx, doc, chunks); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := e.records(t)
	if len(got) != 3+15*5 {
		t.Errorf("CHUNKS holds %d records, want %d", len(got), 3+15*5)
	}
	checkContiguous(t, got)
}

// TestConcurrentVersionsContiguous: documents written at once by many
// goroutines each end up contiguous in CHUNKS.
func TestConcurrentVersionsContiguous(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 16)
	var wg sync.WaitGroup
	for d := range 24 {
		wg.Go(func() {
			doc, chunks := sinktest.Version(fmt.Sprintf("doc-%d.md", d), uint64(d+1), texts(40+d)...)
			if err := sink.Write(context.Background(), doc, chunks); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := checkContiguous(t, e.records(t)); n != 24 {
		t.Errorf("%d documents in CHUNKS, want 24", n)
	}
}

// checkContiguous requires each document's records to be one run in
// position order, and returns the number of documents.
func checkContiguous(t *testing.T, got []stored) int {
	t.Helper()
	seen := map[string]bool{}
	for i, s := range got {
		if i > 0 && got[i-1].rec.DocID == s.rec.DocID {
			if s.rec.Position != got[i-1].rec.Position+1 {
				t.Fatalf("record %d: %s position %d after %d", s.seq, s.rec.DocID, s.rec.Position, got[i-1].rec.Position)
			}
			continue
		}
		if seen[s.rec.DocID] || s.rec.Position != 0 {
			t.Fatalf("record %d: %s position %d starts a second run of its document", s.seq, s.rec.DocID, s.rec.Position)
		}
		seen[s.rec.DocID] = true
	}
	return len(seen)
}

// TestStreamWithoutAtomicIsAnOutage: a CHUNKS that an operator changed
// to refuse atomic batches fails writes as an outage of NATS (the worker
// holds its deliveries) and fails the probe, naming allow_atomic.
func TestStreamWithoutAtomicIsAnOutage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	st, err := e.js.Stream(ctx, e.cfg.ChunksStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := st.CachedInfo().Config
	sc.AllowAtomicPublish = false
	if _, err := e.js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 0)
	doc, chunks := sinktest.Version("a.md", 1, "one", "two")
	err = sink.Write(ctx, doc, chunks)
	if dep, ok := fault.UnavailableDependency(err); !ok || dep != worker.DependencyNATS {
		t.Errorf("Write = %v, want Unavailable(%s)", err, worker.DependencyNATS)
	}
	if err := sink.Probe(ctx, worker.DependencyNATS); err == nil {
		t.Error("Probe = nil, want an error naming allow_atomic")
	}
}

// TestPartlyStoredBatchCompletes: a batch the server stored in part (a
// server of one replica out of room in the middle of it keeps the records
// before) is refused as a duplicate on the next try; the sink then
// publishes the version record by record, so every record is stored once.
func TestPartlyStoredBatchCompletes(t *testing.T) {
	e := newEnv(t)
	sink := subjectsink.New(e.js, e.cfg.ChunksPrefix, 0)
	doc, chunks := sinktest.Version("part.md", 3, texts(5)...)
	ctx := context.Background()
	if err := sink.Write(ctx, doc, chunks[:2]); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, doc, chunks); err != nil {
		t.Fatalf("Write of the whole version = %v", err)
	}
	seen := map[int]int{}
	for _, s := range e.records(t) {
		seen[s.rec.Position]++
	}
	for pos := range 5 {
		if seen[pos] != 1 {
			t.Errorf("position %d stored %d times, want once (stored: %v)", pos, seen[pos], seen)
		}
	}
}
