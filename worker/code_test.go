package worker_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestCodeRecords: a request for a .py file, and one for a file without
// extension that names the code chunker and its language, go through the
// worker to the subject sink as the code chunker's chunks (language and
// symbol paths in the metadata, verbatim spans).
func TestCodeRecords(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg)
	sink := subjectsink.New(e.js, cfg.ChunksPrefix, cfg.MaxPendingPublishes)
	_, res, _ := e.startWorker(worker.Options{Sink: sink})
	py := []byte("import os\n\n\nclass Store:\n    def get(self, key):\n        return os.environ.get(key)\n\n\ndef main():\n    print(Store().get('HOME'))\n")
	reqs := []messages.IngestRequest{
		{V: 1, ID: "tools/store.py", Content: py, Options: map[string]any{"max_char": 80}},
		{V: 1, ID: "bin/run", Chunker: "code", Options: map[string]any{"language": "python", "max_char": 80}, Content: py},
	}
	for _, r := range reqs {
		e.publish("ingest.code", r, "")
	}
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == len(reqs) })
	byDoc := map[string][]messages.ChunkRecord{}
	for _, m := range e.streamMsgs(cfg.ChunksStream) {
		rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		byDoc[rec.DocID] = append(byDoc[rec.DocID], rec)
	}
	for _, r := range reqs {
		c, err := registry.Default().NewChunker("code", r.Options)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := c.Chunk(chunking.Document{Path: r.ID, Content: r.Content})
		if err != nil {
			t.Fatal(err)
		}
		got := byDoc[r.ID]
		if len(got) != len(want) || len(want) < 2 {
			t.Fatalf("%s: %d records, want the %d chunks of the code chunker", r.ID, len(got), len(want))
		}
		for _, rec := range got {
			w := want[rec.Position]
			if rec.Content != w.Content() || !reflect.DeepEqual(rec.Metadata, w.Metadata()) || !reflect.DeepEqual(rec.Span, w.Span()) {
				t.Errorf("%s#%d: record %q %v, want %q %v", r.ID, rec.Position, rec.Content, rec.Metadata, w.Content(), w.Metadata())
			}
			if l, _ := rec.Metadata.Get("language"); l != "python" {
				t.Errorf("%s#%d: language %v", r.ID, rec.Position, l)
			}
			if s, _ := rec.Metadata.Get("symbols"); len(s.([]any)) == 0 {
				t.Errorf("%s#%d: no symbols", r.ID, rec.Position)
			}
		}
	}
}
