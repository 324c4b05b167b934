package qdrantsink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// TestEndToEndHTML sends HTML pages through JetStream and the worker to
// Qdrant: one request naming the format html, one implied by its id's
// extension. Each page's points are its chunks as the html chunker makes
// them (content and hash), their payload holds the page's title and lang
// and the header path in the metadata, and a span into the page's bytes
// that is not verbatim; filters on the title and lang, sent by the real
// client, select the points of one page.
func TestEndToEndHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)
	pages := map[string]struct {
		format, page, title, lang string
	}{
		"https://example.org/guide": {"html", `<!doctype html><html lang="en"><head><title>Install guide</title></head><body>` +
			`<nav>Home | Docs</nav><main><h1>Guide</h1><p>Read this first.</p><h2>Install</h2><p>Run the installer, then restart.</p>` +
			`<h2>Upgrade</h2><p>Stop the service before you upgrade it.</p></main><footer>© us</footer></body></html>`, "Install guide", "en"},
		"site/kurs.html": {"", `<html lang="de"><title>Kurs</title><h1>Einführung</h1><p>Erst lesen, dann üben.</p>` +
			`<h2>Übungen</h2><ul><li>Eins</li><li>Zwei</li></ul></html>`, "Kurs", "de"},
	}
	opts := map[string]any{"max_char": 60, "min_char": 0, "chunk_overlap": 0}
	var seqs []uint64
	for id, p := range pages {
		seqs = append(seqs, e.publish(messages.IngestRequest{ID: id, Format: p.format, Content: []byte(p.page), Options: opts}))
	}
	for seq, r := range e.wait(seqs...) {
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("seq %d: %s (%s)", seq, r.Outcome, r.Err)
		}
	}
	htmlChunker, err := registry.Default().NewChunker("html", opts)
	if err != nil {
		t.Fatal(err)
	}
	for id, p := range pages {
		want, _, err := htmlChunker.Chunk(chunking.Document{Path: id, Format: "html", Content: []byte(p.page)})
		if err != nil {
			t.Fatal(err)
		}
		got := e.stored(id)
		if len(want) < 2 || len(got) != len(want) {
			t.Fatalf("%s: %d points, want the html chunker's %d chunks (at least 2)", id, len(got), len(want))
		}
		for pos, c := range want {
			pt := got[messages.ChunkID(id, pos)]
			if pt == nil {
				t.Fatalf("%s: chunk %d has no point", id, pos)
			}
			pl := pt.GetPayload()
			md := pl[qdrantsink.FieldMetadata].GetStructValue().GetFields()
			if pl[qdrantsink.FieldContent].GetStringValue() != c.Content() || pl[qdrantsink.FieldHash].GetStringValue() != c.Hash() {
				t.Errorf("%s chunk %d: content %q hash %s, want %q %s", id, pos, pl[qdrantsink.FieldContent].GetStringValue(),
					pl[qdrantsink.FieldHash].GetStringValue(), c.Content(), c.Hash())
			}
			if md["title"].GetStringValue() != p.title || md["lang"].GetStringValue() != p.lang {
				t.Errorf("%s chunk %d: title %q lang %q, want %q %q", id, pos, md["title"].GetStringValue(), md["lang"].GetStringValue(), p.title, p.lang)
			}
			if h1, _ := c.Metadata().Get("h1"); h1 == nil || md["h1"].GetStringValue() != h1 {
				t.Errorf("%s chunk %d: h1 %q, want the chunk's %v", id, pos, md["h1"].GetStringValue(), h1)
			}
			if h2, ok := c.Metadata().Get("h2"); ok && md["h2"].GetStringValue() != h2 {
				t.Errorf("%s chunk %d: h2 %q, want %v", id, pos, md["h2"].GetStringValue(), h2)
			}
			sp := pl[qdrantsink.FieldSpan].GetStructValue().GetFields()
			start, end := int(sp["start"].GetIntegerValue()), int(sp["end"].GetIntegerValue())
			if ws := c.Span(); start != ws.Start || end != ws.End || sp["verbatim"].GetBoolValue() || end <= start || end > len(p.page) {
				t.Errorf("%s chunk %d: span %v, want [%d, %d) of the page, not verbatim", id, pos, sp, ws.Start, ws.End)
			}
		}
	}
	c := e.qd.Client(t)
	ctx := context.Background()
	docsOf := func(f *qdrant.Filter) []string {
		t.Helper()
		pts, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "chunks", Filter: f, Limit: qdrant.PtrOf(uint32(100)),
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range pts {
			ids = append(ids, p.GetPayload()[qdrantsink.FieldDocID].GetStringValue())
		}
		return ids
	}
	for _, tc := range []struct{ field, value, doc string }{
		{"metadata.lang", "de", "site/kurs.html"},
		{"metadata.title", "Install guide", "https://example.org/guide"},
	} {
		ids := docsOf(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(tc.field, tc.value)}})
		if len(ids) != len(e.stored(tc.doc)) || slices.ContainsFunc(ids, func(id string) bool { return id != tc.doc }) {
			t.Errorf("%s = %q selects %v, want every point of %s", tc.field, tc.value, ids, tc.doc)
		}
	}
}
