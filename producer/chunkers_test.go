package producer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// TestExtraChunker: a chunker and a format none of the module's packages
// knows, registered in a registry, are served by the producer and the
// worker as they are: the format is inferred from the extension, the
// chunker chosen for it by default, its option checked, its chunks
// written and fingerprinted, a re-run skips them; a registry without it
// refuses its documents.
func TestExtraChunker(t *testing.T) {
	reg := registrytest.With(registrytest.Lines())
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := map[string]string{"a.lines": "one\ntwo\nthree\n", "b.lines": "alpha\nbeta\ngamma\ndelta\nepsilon\n", "c.md": "# C\n\ntext\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := New(e.nc, e.js, Options{Chunkers: reg})
	s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Exts: []string{".lines", ".md"}})
	if err != nil || s.Sent != 3 {
		t.Fatalf("Backfill = %+v, %v; want 3 sent", s.Stats, err)
	}
	results := e.runWorkerChunkers(ctx, subjectsink.New(e.js, e.cfg.ChunksPrefix, e.cfg.MaxPendingPublishes), reg, 3)
	for id, rs := range results {
		if rs[0].Outcome != worker.OutcomeAcked {
			t.Errorf("%s: %+v, want acked", id, rs[0])
		}
	}
	got := e.view(ctx)
	rs, _ := reg.Resolver(registry.Defaults{})
	for name, text := range files {
		c, err := rs.Choose(registry.Request{ID: name})
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := rs.Chunker(c)
		chunks, _, _ := ch.Chunk(chunking.Document{Path: name, Content: []byte(text)})
		var want []string
		for _, c := range chunks {
			want = append(want, c.Hash())
		}
		if !slices.Equal(got[name], want) {
			t.Errorf("%s: chunks %v, want %v (chunker %s)", name, got[name], want, c.Entry.Name)
		}
	}
	if len(got["b.lines"]) != 3 {
		t.Errorf("b.lines has %d chunks, want 3 of two lines at most", len(got["b.lines"]))
	}
	// The records hold the settings fingerprints: a re-run skips all.
	if s, err := p.Backfill(ctx, BackfillOptions{Paths: []string{dir}, Exts: []string{".lines", ".md"}}); err != nil || s.Skipped != 3 {
		t.Errorf("re-run = %+v, %v; want 3 skipped", s.Stats, err)
	}
	// An option of the chunker is checked like any other.
	if _, err := p.checks.Choose(registry.Request{ID: "x.lines", Options: map[string]any{"per_chunk": 0}}); err == nil {
		t.Error("per_chunk 0 accepted")
	}
	// Workers of the default registry do not know it.
	if _, err := New(e.nc, e.js, Options{}).checks.Choose(registry.Request{ID: "x.lines", Chunker: "lines"}); err == nil {
		t.Error("the default registry knows the lines chunker")
	}
}
