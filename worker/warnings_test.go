package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// logLines returns the JSON log lines in logs whose msg is msg.
func logLines(t testing.TB, logs *testutil.SyncBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestChunkerWarnings: an email-json row with a string address and no id
// is chunked with two warnings; the worker counts them by kind, logs them
// in one line and keeps them in the document record. A clean document
// next to it has none of the three.
func TestChunkerWarnings(t *testing.T) {
	e := newEnv(t, testConfig())
	logs := &testutil.SyncBuffer{}
	w, res, _ := e.startWorker(worker.Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	const rowsID, cleanID = "mail/rows.jsonl", "docs/clean.md"
	row := `{"thread_id":"t1","date":"2024-02-07","subject":"Hello","body":"Hi there.","from":"ann@example.org","to":[],"cc":[],"reply_to":""}` + "\n"
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: rowsID, Content: []byte(row)}, "")
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: cleanID, Content: []byte("# Clean\n\nNothing odd here.\n")}, messages.ContentTypeJSON)
	testutil.WaitFor(t, time.Minute, "both documents acked", func() bool { return len(res.finals()) == 2 })
	for _, r := range res.finals() {
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("%s: outcome %s (%v), want acked", r.DocID, r.Outcome, r.Err)
		}
	}

	want := map[chunking.WarningKind]float64{chunking.WarnMissingField: 1, chunking.WarnMalformed: 1}
	for _, k := range chunking.WarningKinds() {
		if got := metricValue(t, w.Metrics().ChunkerWarnings.WithLabelValues(string(k))); got != want[k] {
			t.Errorf("chunker warnings{kind=%q} = %v, want %v", k, got, want[k])
		}
	}
	// Every kind is exported before it is first counted.
	mfs, err := w.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		if mf.GetName() == "chunkstream_worker_chunker_warnings_total" {
			series = len(mf.GetMetric())
		}
	}
	if series != len(chunking.WarningKinds()) {
		t.Errorf("chunkstream_worker_chunker_warnings_total has %d series, want %d (one per kind)", series, len(chunking.WarningKinds()))
	}

	lines := logLines(t, logs, "chunker warnings")
	if len(lines) != 1 {
		t.Fatalf("%d \"chunker warnings\" log lines, want 1: %v", len(lines), lines)
	}
	l := lines[0]
	if l["level"] != "WARN" || l["doc_id"] != rowsID || l["warnings"] != float64(2) || l["kinds"] != "malformed=1 missing_field=1" ||
		!strings.Contains(l["first"].(string), "row misses id") {
		t.Errorf("log line = %v, want WARN, doc_id %s, warnings 2, kinds malformed=1 missing_field=1, first \"row misses id…\"", l, rowsID)
	}

	rec := e.docRecord(rowsID)
	if got := rec.Warnings; got.Total != 2 || len(got.First) != 2 ||
		got.First[0].Kind != chunking.WarnMissingField || got.First[0].Message != "line 1: row misses id" ||
		got.First[1].Kind != chunking.WarnMalformed || !strings.Contains(got.First[1].Message, "from address is not an object") {
		t.Errorf("record warnings of %s = %+v, want 2: missing_field \"line 1: row misses id\", then malformed", rowsID, got)
	}
	if got := e.docRecord(cleanID).Warnings; got.Total != 0 || got.First != nil {
		t.Errorf("record warnings of %s = %+v, want none", cleanID, got)
	}
}

// docRecord returns the document record of id.
func (e *env) docRecord(id string) messages.DocRecord {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	en, err := e.top.Docs.Get(ctx, messages.DocRecordKey(id))
	if err != nil {
		e.t.Fatalf("record of %s: %v", id, err)
	}
	rec, err := messages.DecodeDocRecord(en.Value())
	if err != nil {
		e.t.Fatalf("record of %s: %v", id, err)
	}
	return rec
}
