package worker_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// TestHTMLRequests sends HTML pages through the worker to the subject
// sink: one naming format html, one implied by its id's extension, one
// in a declared legacy charset; their chunks carry header paths, title,
// lang and spans into the page, also two naming the html chunker for ids
// without an .html extension. A page whose bytes do not decode is
// dead-lettered as not_utf8, naming the charset and the byte.
func TestHTMLRequests(t *testing.T) {
	e := newEnv(t, testConfig())
	_, res, _ := e.startWorker(worker.Options{Chunkers: registry.Default()})
	page := `<html lang="en"><head><title>Guide</title></head><body><nav>menu</nav><h1>Guide</h1><p>Intro.</p><h2>Install</h2><p>Run it.</p></body></html>`
	latin1 := "<meta charset=\"latin1\"><title>Caf\xe9</title><h1>R\xe9sum\xe9</h1><p>Na\xefve.</p>"
	bad := "<meta charset=\"shift_jis\"><p>\x82\xa0\xff</p>"
	good := []uint64{
		e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "https://example.org/guide", Format: "html", Content: []byte(page)}, messages.ContentTypeJSON),
		e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "site/guide.htm", Content: []byte(page)}, ""),
		e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "site/latin1.html", Content: []byte(latin1)}, ""),
		// The html chunker named: its page format, whatever the id's
		// extension implies, so no UTF-8 check of markdown.
		e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "site/menu.php", Chunker: "html", Content: []byte(latin1)}, ""),
		e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "https://example.org/menu", Chunker: "html", Content: []byte(latin1)}, ""),
	}
	badSeq := e.publish("ingest.web", messages.IngestRequest{V: 1, ID: "site/bad.html", Content: []byte(bad)}, "")
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == 6 })
	finals := res.finals()
	for _, s := range good {
		if finals[s].Outcome != worker.OutcomeAcked {
			t.Errorf("request %d: %s (%v)", s, finals[s].Outcome, finals[s].Err)
		}
	}
	if r := finals[badSeq]; r.Cause != fault.CauseNotUTF8 || !strings.Contains(r.Err.Error(), "invalid shift_jis at byte 31") {
		t.Errorf("undecodable page: cause %q, %v; want not_utf8 naming the byte", r.Cause, r.Err)
	}
	byDoc := map[string][]messages.ChunkRecord{}
	for _, m := range e.streamMsgs("CHUNKS") {
		rec, err := messages.DecodeChunkRecord(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Op == messages.OpUpsert {
			byDoc[rec.DocID] = append(byDoc[rec.DocID], rec)
		}
	}
	for _, id := range []string{"https://example.org/guide", "site/guide.htm"} {
		recs := byDoc[id]
		if len(recs) != 1 {
			t.Fatalf("%s: %d chunks, want 1", id, len(recs))
		}
		r := recs[0]
		if r.Content != "# Guide\n\nIntro.\n\n## Install\n\nRun it." || !r.Span.HasRange() || r.Span.Verbatim ||
			page[r.Span.Start:r.Span.End] != "Guide</h1><p>Intro.</p><h2>Install</h2><p>Run it." {
			t.Errorf("%s: chunk %q span %+v", id, r.Content, r.Span)
		}
		keys := r.Metadata.Keys()
		if !slices.Equal(keys, []string{"h1", "h2", "index", "file", "title", "lang"}) || r.Metadata.Map()["title"] != "Guide" || r.Metadata.Map()["lang"] != "en" {
			t.Errorf("%s: metadata %v", id, r.Metadata)
		}
	}
	if recs := byDoc["site/latin1.html"]; len(recs) != 1 || recs[0].Content != "# Résumé\n\nNaïve." || recs[0].Metadata.Map()["title"] != "Café" {
		t.Errorf("latin-1 page: %+v", recs)
	}
}
