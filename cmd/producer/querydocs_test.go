package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// The subset of Qdrant's REST body of POST /collections/{name}/points/query
// that docs/operations.md uses, by its REST names; a field outside it
// fails the decoding, so the page cannot use one this test does not map.
type (
	restQuery struct {
		Prefetch    []restPrefetch  `json:"prefetch"`
		Query       json.RawMessage `json:"query"`
		Using       *string         `json:"using"`
		Limit       *uint64         `json:"limit"`
		WithPayload json.RawMessage `json:"with_payload"`
	}
	restPrefetch struct {
		Prefetch []restPrefetch  `json:"prefetch"`
		Query    json.RawMessage `json:"query"`
		Using    *string         `json:"using"`
		Limit    *uint64         `json:"limit"`
	}
	// restDocument is REST's Document inference object.
	restDocument struct {
		Text    string         `json:"text"`
		Model   string         `json:"model"`
		Options map[string]any `json:"options"`
	}
)

// strictJSON decodes data into v, refusing fields v does not have and
// anything after the value.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// restToGRPC maps a REST query (a nearest dense vector, a sparse vector
// {indices, values}, a Document, or {fusion}) to the gRPC one, as Qdrant
// does; dense stands in for a dense vector of another size than size
// (the page's four numbers stand for the embedding).
func restToGRPC(raw json.RawMessage, size int, dense []float32) (*qdrant.Query, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var vec []float32
	if err := json.Unmarshal(raw, &vec); err == nil {
		if len(vec) != size {
			vec = dense
		}
		return qdrant.NewQueryDense(vec), nil
	}
	var fusion struct {
		Fusion string `json:"fusion"`
	}
	if strictJSON(raw, &fusion) == nil {
		switch fusion.Fusion {
		case "rrf":
			return qdrant.NewQueryFusion(qdrant.Fusion_RRF), nil
		case "dbsf":
			return qdrant.NewQueryFusion(qdrant.Fusion_DBSF), nil
		}
		return nil, fmt.Errorf("fusion %q is not one of Qdrant's", fusion.Fusion)
	}
	var sparse struct {
		Indices []uint32  `json:"indices"`
		Values  []float32 `json:"values"`
	}
	if strictJSON(raw, &sparse) == nil {
		return qdrant.NewQuerySparse(sparse.Indices, sparse.Values), nil
	}
	var doc restDocument
	if err := strictJSON(raw, &doc); err != nil || doc.Text == "" || doc.Model == "" {
		return nil, fmt.Errorf("query %s is none of the forms mapped: %v", raw, err)
	}
	return qdrant.NewQueryDocument(&qdrant.Document{Text: doc.Text, Model: doc.Model, Options: qdrant.NewValueMap(doc.Options)}), nil
}

// toGRPC maps a REST body to QueryPoints of collection.
func (q restQuery) toGRPC(collection string, size int, dense []float32) (*qdrant.QueryPoints, error) {
	req := &qdrant.QueryPoints{CollectionName: collection, Using: q.Using, Limit: q.Limit}
	var err error
	if req.Query, err = restToGRPC(q.Query, size, dense); err != nil {
		return nil, err
	}
	var prefetch func([]restPrefetch) ([]*qdrant.PrefetchQuery, error)
	prefetch = func(ps []restPrefetch) ([]*qdrant.PrefetchQuery, error) {
		var out []*qdrant.PrefetchQuery
		for _, p := range ps {
			pq := &qdrant.PrefetchQuery{Using: p.Using, Limit: p.Limit}
			if pq.Query, err = restToGRPC(p.Query, size, dense); err != nil {
				return nil, err
			}
			if pq.Prefetch, err = prefetch(p.Prefetch); err != nil {
				return nil, err
			}
			out = append(out, pq)
		}
		return out, nil
	}
	if req.Prefetch, err = prefetch(q.Prefetch); err != nil {
		return nil, err
	}
	var fields []string
	var all bool
	switch {
	case len(q.WithPayload) == 0:
	case json.Unmarshal(q.WithPayload, &fields) == nil:
		req.WithPayload = qdrant.NewWithPayloadInclude(fields...)
	case json.Unmarshal(q.WithPayload, &all) == nil:
		req.WithPayload = qdrant.NewWithPayload(all)
	default:
		return nil, fmt.Errorf("with_payload %s is neither a list of fields nor a boolean", q.WithPayload)
	}
	return req, nil
}

// TestOperationsQueryExamples reads the query examples of
// docs/operations.md ("Querying the points with Qdrant's clients"),
// decodes their REST bodies by Qdrant's REST schema, sends them through
// the real go-client to the Qdrant double holding points the sink wrote,
// and checks that they find what producer search finds; the JavaScript
// example must send the same objects.
func TestOperationsQueryExamples(t *testing.T) {
	sec, ok := testutil.DocSection(t, "docs/operations.md", "Qdrant and the embedder")
	if !ok {
		t.Fatal("docs/operations.md has no section Qdrant and the embedder")
	}
	page, ok := testutil.Subsection(sec, "Querying the points with Qdrant's clients")
	if !ok {
		t.Fatal(`docs/operations.md has no "### Querying the points with Qdrant's clients"`)
	}
	curl := regexp.MustCompile("(?s)```sh\ncurl -sS -X POST \"http://localhost:6333/collections/chunks/points/query\" \\\\\n  -H 'Content-Type: application/json' -d '\n(.*?)'\n```")
	var bodies []restQuery
	for _, m := range curl.FindAllStringSubmatch(page, -1) {
		var q restQuery
		if err := strictJSON([]byte(m[1]), &q); err != nil {
			t.Fatalf("a curl body of the page is not a query body Qdrant's REST API takes: %v\n%s", err, m[1])
		}
		bodies = append(bodies, q)
	}
	if len(bodies) != 2 {
		t.Fatalf("the page shows %d curl queries, want 2 (BM25, then hybrid)", len(bodies))
	}
	// The limits the JavaScript example shows (below), and the prefetches
	// of producer search: 5 candidates per hit from each vector.
	limit := func(l *uint64) uint64 {
		if l == nil {
			return 10 // Qdrant's default
		}
		return *l
	}
	if limit(bodies[0].Limit) != 5 || limit(bodies[1].Limit) != 10 || len(bodies[1].Prefetch) != 2 ||
		limit(bodies[1].Prefetch[0].Limit) != 50 || limit(bodies[1].Prefetch[1].Limit) != 50 {
		t.Errorf("the curl bodies' limits are not 5, then 10 with prefetches of 50: %+v", bodies)
	}

	st := newSearchTarget(t, false)
	emb := embedtest.Start(t, embedtest.Config{Dims: 8})
	embedder := embedClient(t, emb.URL())
	st.write(t, searchDocs, embedder)
	client, err := qdrantsink.Dial(st.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()

	var text string
	{
		var d restDocument
		if err := strictJSON(bodies[0].Query, &d); err != nil {
			t.Fatalf("the BM25 example's query is not a Document: %v", err)
		}
		text = d.Text
	}
	vecs, err := embedder.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	run := func(q restQuery) []string {
		t.Helper()
		req, err := q.toGRPC(st.cfg.Collection, 8, vecs[0])
		if err != nil {
			t.Fatal(err)
		}
		pts, err := client.Query(ctx, req)
		if err != nil {
			t.Fatalf("the double refused the page's query: %v", err)
		}
		var ids []string
		for _, p := range pts {
			if p.GetPayload()["content"].GetStringValue() == "" || p.GetPayload()["doc_id"].GetStringValue() == "" {
				t.Errorf("hit %v lacks the payload the page asks for", p.GetId())
			}
			ids = append(ids, p.GetId().GetUuid())
		}
		return ids
	}
	search := func(limit int, e qdrantsink.Embedder) []string {
		t.Helper()
		hits, _, err := qdrantsink.Search(ctx, client, text, qdrantsink.SearchOptions{Collection: st.cfg.Collection, Limit: limit, Embedder: e})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	byBM25, want := run(bodies[0]), search(5, nil)
	if len(want) == 0 || !slices.Equal(byBM25, want) {
		t.Errorf("the page's BM25 query found %v, producer search %v", byBM25, want)
	}
	hybrid, want := run(bodies[1]), search(10, embedder)
	if len(want) == 0 || !slices.Equal(hybrid, want) {
		t.Errorf("the page's hybrid query found %v, producer search %v", hybrid, want)
	}

	// The JavaScript example sends the same objects.
	js, ok := regexp.MustCompile("(?s)```js\n(.*?)```").FindStringSubmatch(page), true
	if js == nil || !ok {
		t.Fatal("the page has no JavaScript example")
	}
	code := strings.Join(strings.Fields(js[1]), " ")
	docLit := regexp.MustCompile(`const bm25 = (\{.*?\}) \};`).FindStringSubmatch(code)
	if docLit == nil {
		t.Fatalf("the JavaScript example defines no bm25 Document:\n%s", js[1])
	}
	quoted := regexp.MustCompile(`([{,] )([a-z_]+):`).ReplaceAllString(docLit[1]+" }", `$1"$2":`)
	quoted = strings.ReplaceAll(quoted, `"text": text`, fmt.Sprintf(`"text": %q`, text))
	var jsDoc, curlDoc restDocument
	if err := strictJSON([]byte(quoted), &jsDoc); err != nil {
		t.Fatalf("the JavaScript Document %s: %v", quoted, err)
	}
	_ = strictJSON(bodies[0].Query, &curlDoc)
	if fmt.Sprint(jsDoc) != fmt.Sprint(curlDoc) || !strings.Contains(code, fmt.Sprintf(`const text = %q;`, text)) {
		t.Errorf("the JavaScript Document %+v, the curl one %+v", jsDoc, curlDoc)
	}
	for _, want := range []string{
		`client.query("chunks", { query: bm25, using: "bm25", limit: 5, with_payload: withPayload })`,
		`{ query: bm25, using: "bm25", limit: 50 }, { query: dense, using: "dense", limit: 50 },`,
		`query: { fusion: "rrf" }, limit: 10, with_payload: withPayload,`,
		`const withPayload = ["doc_id", "position", "content"];`,
	} {
		if !strings.Contains(code, want) {
			t.Errorf("the JavaScript example lacks %s", want)
		}
	}
	if !bytes.Equal(bytes.Join(bytes.Fields(bodies[0].WithPayload), nil), []byte(`["doc_id","position","content"]`)) {
		t.Errorf("the curl BM25 body's with_payload %s is not the JavaScript one", bodies[0].WithPayload)
	}
}
