package worker_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// firstSink records Doc.First of every write per document, failing the
// first write of the documents in fail once.
type firstSink struct {
	mu     sync.Mutex
	firsts map[string][]bool
	fail   map[string]bool
}

func (s *firstSink) Write(_ context.Context, doc worker.Doc, _ []worker.Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firsts[doc.ID] = append(s.firsts[doc.ID], doc.First)
	if s.fail[doc.ID] {
		delete(s.fail, doc.ID)
		return errors.New("write failed once")
	}
	return nil
}

func (s *firstSink) get(id string) []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.firsts[id])
}

// TestDocFirst: Doc.First is true exactly for a delivery whose step 1
// created the document's record: not for a later version, not for a
// redelivery of the first one, and not when a record existed, even one
// deleted by hand or one that does not parse.
func TestDocFirst(t *testing.T) {
	e := newEnv(t, testConfig())
	ctx := context.Background()
	// Records that existed: deleted by hand, and unreadable.
	if _, err := e.top.Docs.Put(ctx, messages.DocRecordKey("deleted.md"), []byte(`{"ingest_seq":1,"state":"done"}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.top.Docs.Delete(ctx, messages.DocRecordKey("deleted.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.top.Docs.Put(ctx, messages.DocRecordKey("garbled.md"), []byte("not a record")); err != nil {
		t.Fatal(err)
	}
	sink := &firstSink{firsts: map[string][]bool{}, fail: map[string]bool{"retried.md": true}}
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	send := func(id, text string) uint64 {
		return e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: []byte("# " + text + "\n\ntext")}, "")
	}
	wait := func(seq uint64) {
		t.Helper()
		testutil.WaitFor(t, 20*time.Second, "the request", func() bool { _, ok := res.finals()[seq]; return ok })
	}
	wait(send("a.md", "one"))
	wait(send("a.md", "two"))
	wait(send("retried.md", "one"))
	wait(send("deleted.md", "one"))
	wait(send("garbled.md", "one"))
	for id, want := range map[string][]bool{
		"a.md":       {true, false},
		"retried.md": {true, false},
		"deleted.md": {false},
		"garbled.md": {false},
	} {
		if got := sink.get(id); !slices.Equal(got, want) {
			t.Errorf("%s: Doc.First of its writes = %v, want %v", id, got, want)
		}
	}
}
