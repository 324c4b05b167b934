package qdrantsink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// TestEndToEndCode sends source files through JetStream and the worker
// to Qdrant: a request for a .py or .go file is chunked by the code
// chunker (its format is inferred from the id), its points carry the
// language and symbol paths in their metadata, the collection has their
// payload indexes, and filters on them, sent by the real client, select
// the points of one language and of one symbol.
func TestEndToEndCode(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	e := newE2E(t, nil)
	files := map[string]string{
		"pkg/shapes.py": "import math\n\n\nclass Circle:\n    def area(self):\n        return math.pi * self.r ** 2\n\n\ndef total(shapes):\n    return sum(s.area() for s in shapes)\n",
		"srv/server.go": "package srv\n\n// Serve serves.\nfunc (s *Server) Serve() error {\n\treturn nil\n}\n",
	}
	var seqs []uint64
	for id, src := range files {
		seqs = append(seqs, e.publish(messages.IngestRequest{ID: id, Content: []byte(src), Options: map[string]any{"max_char": 60}}))
	}
	for seq, r := range e.wait(seqs...) {
		if r.Outcome != worker.OutcomeAcked {
			t.Fatalf("seq %d: %s (%s)", seq, r.Outcome, r.Err)
		}
	}
	c := e.qd.Client(t)
	ctx := context.Background()
	info, err := c.GetCollectionInfo(ctx, "chunks")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{qdrantsink.FieldLanguage, qdrantsink.FieldSymbols} {
		if got := info.GetPayloadSchema()[f].GetDataType(); got != qdrant.PayloadSchemaType_Keyword {
			t.Errorf("payload index of %s: %v, want keyword", f, got)
		}
	}
	scroll := func(f *qdrant.Filter) (ids []string, symbols [][]string) {
		t.Helper()
		pts, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "chunks", Filter: f, Limit: qdrant.PtrOf(uint32(100)),
			WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			ids = append(ids, p.GetPayload()[qdrantsink.FieldDocID].GetStringValue())
			md := p.GetPayload()[qdrantsink.FieldMetadata].GetStructValue().GetFields()
			var syms []string
			for _, v := range md["symbols"].GetListValue().GetValues() {
				syms = append(syms, v.GetStringValue())
			}
			symbols = append(symbols, syms)
		}
		return ids, symbols
	}
	ids, _ := scroll(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(qdrantsink.FieldLanguage, "python")}})
	if len(ids) < 2 || slices.ContainsFunc(ids, func(id string) bool { return id != "pkg/shapes.py" }) {
		t.Errorf("language python selects %v, want the chunks of pkg/shapes.py", ids)
	}
	ids, syms := scroll(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(qdrantsink.FieldSymbols, "pkg.shapes.Circle.area")}})
	if len(ids) == 0 {
		t.Fatal("symbol pkg.shapes.Circle.area selects no point")
	}
	for i := range ids {
		if !slices.Contains(syms[i], "pkg.shapes.Circle.area") {
			t.Errorf("symbol filter selected a point of %s with symbols %v", ids[i], syms[i])
		}
	}
	ids, _ = scroll(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(qdrantsink.FieldSymbols, "srv.Server.Serve")}})
	if len(ids) == 0 || slices.ContainsFunc(ids, func(id string) bool { return id != "srv/server.go" }) {
		t.Errorf("symbol srv.Server.Serve selects %v, want chunks of srv/server.go", ids)
	}
	all := e.qd.Points("chunks")
	if len(all) == 0 {
		t.Fatal("no points")
	}
	for _, p := range all {
		md := p.GetPayload()[qdrantsink.FieldMetadata].GetStructValue().GetFields()
		if md["language"].GetStringValue() == "" || len(md["symbols"].GetListValue().GetValues()) == 0 {
			t.Errorf("point of %s lacks language or symbols: %v", p.GetPayload()[qdrantsink.FieldDocID].GetStringValue(), md)
		}
	}
}
