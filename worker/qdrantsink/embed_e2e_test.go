package qdrantsink_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// runEmbedder runs the client's Run until the test ends (after the
// worker, which is stopped by a cleanup registered later).
func runEmbedder(t testing.TB, c *embed.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("embed Run: %v", err)
		}
	})
}

// expectVectors requires every point of the document to carry the test
// server's vector of its own content.
func (e *e2e) expectVectors(docID, model string, dims int) {
	e.t.Helper()
	for _, p := range e.stored(docID) {
		content := p.GetPayload()[qdrantsink.FieldContent].GetStringValue()
		got := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorDense].GetDense().GetData()
		if !slices.Equal(got, embedtest.Vector(model, content, dims)) {
			e.t.Fatalf("%s: the point at position %d does not carry the vector of its content", docID, p.GetPayload()[qdrantsink.FieldPosition].GetIntegerValue())
		}
	}
}

// TestEndToEndBatchedEmbedder: documents processed together share
// embeddings requests; each document's points carry the vectors of their
// own texts; a document with a chunk the endpoint refuses (400) is
// dead-lettered, permanently, alone; a document re-ingested after a
// paragraph was inserted embeds only its changed chunks; re-sent
// unchanged, nothing.
func TestEndToEndBatchedEmbedder(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	api := embedtest.Start(t, embedtest.Config{RejectMarker: "UNEMBEDDABLE"})
	cfg := embed.DefaultConfig()
	cfg.URL, cfg.Model, cfg.Batch, cfg.Concurrency = api.URL(), "m", 16, 2
	client, err := embed.New(cfg, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runEmbedder(t, client)
	e := newE2EWith(t, e2eOptions{embedder: client, config: func(c *worker.Config, _ *qdrantsink.Config) { c.Concurrency = 16 }})

	docs := map[string]string{}
	seqs := map[string]uint64{}
	for i := range 20 {
		id := fmt.Sprintf("batch/%02d.md", i)
		docs[id] = doc(fmt.Sprintf("Batch %d", i), 1+i%4)
		if i == 7 {
			docs[id] += "\n\nA paragraph that is UNEMBEDDABLE.\n"
		}
	}
	for id, content := range docs {
		seqs[id] = e.publish(messages.IngestRequest{ID: id, Content: []byte(content)})
	}
	results := e.wait(slices.Collect(maps.Values(seqs))...)
	for id, content := range docs {
		r := results[seqs[id]]
		if id == "batch/07.md" {
			if r.Outcome != worker.OutcomePermanent || !strings.Contains(fmt.Sprint(r.Err), "cannot be embedded") {
				t.Fatalf("%s: %s (%v), want a permanent dead letter with the endpoint's reason", id, r.Outcome, r.Err)
			}
			continue
		}
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("%s: %s (%v), want acked", id, r.Outcome, r.Err)
		}
		e.expectDoc(id, content, seqs[id])
		e.expectVectors(id, "m", 8)
	}
	if n := e.deadLetters(); n != 1 {
		t.Errorf("%d dead letters, want 1", n)
	}

	// A paragraph inserted near the start: only the changed chunks are
	// embedded, the chunks that moved keep their vectors.
	id := "batch/03.md"
	stored := map[string]bool{}
	for _, c := range expected(t, id, docs[id]) {
		stored[c.Content()] = true
	}
	edited := strings.Replace(docs[id], "## Section 0", "A new paragraph before the first section.\n\n## Section 0", 1)
	changed := 0
	for _, c := range expected(t, id, edited) {
		if !stored[c.Content()] {
			changed++
		}
	}
	before := api.Stats().Inputs
	s := e.publish(messages.IngestRequest{ID: id, Content: []byte(edited)})
	if r := e.wait(s)[s]; r.Outcome != worker.OutcomeAcked {
		t.Fatalf("edited %s: %s (%v)", id, r.Outcome, r.Err)
	}
	if got := api.Stats().Inputs - before; got != changed || changed == 0 {
		t.Errorf("edited %s: %d inputs embedded, want the %d changed chunks", id, got, changed)
	}
	e.expectDoc(id, edited, s)
	e.expectVectors(id, "m", 8)

	// Re-sent unchanged: nothing is embedded.
	before = api.Stats().Inputs
	s = e.publish(messages.IngestRequest{ID: id, Content: []byte(edited)})
	if r := e.wait(s)[s]; r.Outcome != worker.OutcomeAcked {
		t.Fatalf("re-sent %s: %s (%v)", id, r.Outcome, r.Err)
	}
	if got := api.Stats().Inputs - before; got != 0 {
		t.Errorf("re-sent %s unchanged: %d inputs embedded, want 0", id, got)
	}
	e.expectVectors(id, "m", 8)
}
