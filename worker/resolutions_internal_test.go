package worker

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
)

// chunkOutcome is all processor.chunk returns, comparable.
type chunkOutcome struct {
	chunks      []Chunk
	fingerprint string
	warnings    []chunking.Warning
	err         string
	cause       fault.Cause
	permanent   bool
}

func chunkOnce(p *processor, req messages.IngestRequest, subject string, content []byte) chunkOutcome {
	chunks, fp, warnings, err := p.chunk(context.Background(), &req, subject, content)
	o := chunkOutcome{chunks: chunks, fingerprint: fp, warnings: warnings}
	if err != nil {
		o.err = err.Error()
		o.cause, _ = fault.CauseOf(err)
		o.permanent = fault.IsPermanent(err)
	}
	return o
}

// resolutionCases are requests of many settings, some refused.
func resolutionCases() []struct {
	req     messages.IngestRequest
	subject string
	content string
} {
	md := "# Title\n\nSome text of a paragraph.\n\n## Part\n\nMore text, a second paragraph that is long enough.\n"
	type tc = struct {
		req     messages.IngestRequest
		subject string
		content string
	}
	return []tc{
		{messages.IngestRequest{ID: "a.md"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "b.md"}, "ingest.docs", md + "\n# Another\n\ntext\n"},
		{messages.IngestRequest{ID: "b.md"}, "ingest.other", md},
		{messages.IngestRequest{ID: "t/a.md", Tenant: "acme"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "c.txt"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "c.txt", Format: "markdown"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": 40}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": int64(40)}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": 60, "min_char": 10}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"min_char": 10, "max_char": 60}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": 8}}, "ingest.docs", md},        // below the bound
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": "40"}}, "ingest.docs", md},     // not an int
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"no_such": true}}, "ingest.docs", md},      // unknown option
		{messages.IngestRequest{ID: "d.md", Options: map[string]any{"max_char": []any{1}}}, "ingest.docs", md}, // not keyed
		{messages.IngestRequest{ID: "e.md", Chunker: "twostep"}, "ingest.docs", md},                            // another chunker
		{messages.IngestRequest{ID: "e.md", Chunker: "twostep", Options: map[string]any{"add_headers": true}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "e.md", Chunker: "nosuch"}, "ingest.docs", md}, // unknown chunker
		{messages.IngestRequest{ID: "f.md", Format: "nosuch"}, "ingest.docs", md},  // unknown format
		{messages.IngestRequest{ID: "g.md"}, "ingest.docs", "bad \xff byte"},       // not UTF-8
		{messages.IngestRequest{ID: "h.md", Source: "s3://x"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "h.md", Source: "s3://y"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "i.md", Collection: "c1"}, "ingest.docs", md},
		{messages.IngestRequest{ID: "j.md", Metadata: chunking.Metadata{{Key: "lang", Value: "en"}, {Key: "n", Value: 1}}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "j.md", Metadata: chunking.Metadata{{Key: "n", Value: 1}, {Key: "lang", Value: "en"}}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "j.md", Metadata: chunking.Metadata{{Key: "n", Value: "1"}}}, "ingest.docs", md},
		{messages.IngestRequest{ID: "k.md", Metadata: chunking.Metadata{{Key: "tags", Value: []any{"a", "b"}}}}, "ingest.docs", md}, // not keyed
	}
}

// TestResolutionsNeverChangeOutcome: every request chunks the same on a
// processor that remembers resolutions, in any order and more than once,
// as on a fresh one, and the same again once the fleet's defaults change;
// the cache is used (it holds the requests that resolved in full).
func TestResolutionsNeverChangeOutcome(t *testing.T) {
	cases := resolutionCases()
	fresh := func(defaults registry.Defaults) *processor {
		w := testWorker()
		rs, err := registry.Default().Resolver(defaults)
		if err != nil {
			t.Fatal(err)
		}
		w.fleet.chunkers.Store(rs)
		return w.proc
	}
	want := make([]chunkOutcome, len(cases))
	for i, c := range cases {
		want[i] = chunkOnce(fresh(registry.Defaults{}), c.req, c.subject, []byte(c.content))
	}
	shared := testWorker().proc
	for round := range 3 {
		for k := range cases {
			i := k
			if round == 1 {
				i = len(cases) - 1 - k // another order
			}
			c := cases[i]
			if got := chunkOnce(shared, c.req, c.subject, []byte(c.content)); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("round %d, %+v: got %+v, want %+v", round, c.req, got, want[i])
			}
		}
	}
	if n := len(shared.resolutions.m); n < 10 {
		t.Errorf("the cache holds %d resolutions after %d requests, want at least 10", n, len(cases))
	}
	// New fleet defaults: the cache starts afresh and follows them.
	defaults := registry.Defaults{Chunker: "markdown", Options: map[string]any{"max_char": 60, "chunk_overlap": 0}}
	rs, err := registry.Default().Resolver(defaults)
	if err != nil {
		t.Fatal(err)
	}
	shared.fleet.chunkers.Store(rs)
	changed := 0
	for i, c := range cases {
		w := chunkOnce(fresh(defaults), c.req, c.subject, []byte(c.content))
		if got := chunkOnce(shared, c.req, c.subject, []byte(c.content)); !reflect.DeepEqual(got, w) {
			t.Errorf("new defaults, %+v: got %+v, want %+v", c.req, got, w)
		}
		if !reflect.DeepEqual(w, want[i]) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("the new defaults changed no request's outcome: the check above cannot fail")
	}
}

// TestSettingsKey: two requests share a key exactly when their settings
// are equal; options in any order are equal, metadata in another order is
// not.
func TestSettingsKey(t *testing.T) {
	key := func(format string, req messages.IngestRequest, subject string) string {
		k, ok := settingsKey(nil, format, &req, subject)
		if !ok {
			return "(none)"
		}
		return string(k)
	}
	base := messages.IngestRequest{ID: "a.md", Options: map[string]any{"max_char": 40, "min_char": 10}, Source: "src",
		Metadata: chunking.Metadata{{Key: "k", Value: "v"}, {Key: "n", Value: 1.5}}}
	same := base
	same.ID, same.Options = "other.md", map[string]any{"min_char": 10, "max_char": 40}
	if key("markdown", base, "s") != key("markdown", same, "s") {
		t.Error("equal settings (another id, options in another order) have two keys")
	}
	variants := map[string]func(r *messages.IngestRequest) (format, subject string){
		"format implied": func(r *messages.IngestRequest) (string, string) { return "text", "s" },
		"format sent":    func(r *messages.IngestRequest) (string, string) { r.Format = "markdown"; return "markdown", "s" },
		"chunker":        func(r *messages.IngestRequest) (string, string) { r.Chunker = "markdown"; return "markdown", "s" },
		"subject":        func(r *messages.IngestRequest) (string, string) { return "markdown", "s2" },
		"source+subject": func(r *messages.IngestRequest) (string, string) { r.Source = "srcs"; return "markdown", "" },
		"collection":     func(r *messages.IngestRequest) (string, string) { r.Collection = "c"; return "markdown", "s" },
		"option type": func(r *messages.IngestRequest) (string, string) {
			r.Options = map[string]any{"max_char": int64(40), "min_char": 10}
			return "markdown", "s"
		},
		"option string": func(r *messages.IngestRequest) (string, string) {
			r.Options = map[string]any{"max_char": "40", "min_char": 10}
			return "markdown", "s"
		},
		"option value": func(r *messages.IngestRequest) (string, string) {
			r.Options = map[string]any{"max_char": 41, "min_char": 10}
			return "markdown", "s"
		},
		"option missing": func(r *messages.IngestRequest) (string, string) {
			r.Options = map[string]any{"max_char": 40}
			return "markdown", "s"
		},
		"metadata order": func(r *messages.IngestRequest) (string, string) {
			r.Metadata = chunking.Metadata{r.Metadata[1], r.Metadata[0]}
			return "markdown", "s"
		},
		"metadata value": func(r *messages.IngestRequest) (string, string) {
			r.Metadata = chunking.Metadata{r.Metadata[0], {Key: "n", Value: 2.5}}
			return "markdown", "s"
		},
		"metadata nil": func(r *messages.IngestRequest) (string, string) {
			r.Metadata = chunking.Metadata{r.Metadata[0], {Key: "n"}}
			return "markdown", "s"
		},
		"metadata bool": func(r *messages.IngestRequest) (string, string) {
			r.Metadata = chunking.Metadata{r.Metadata[0], {Key: "n", Value: true}}
			return "markdown", "s"
		},
		"metadata gone": func(r *messages.IngestRequest) (string, string) { r.Metadata = r.Metadata[:1]; return "markdown", "s" },
		"key in value": func(r *messages.IngestRequest) (string, string) {
			r.Metadata = chunking.Metadata{{Key: "kv", Value: ""}, r.Metadata[1]}
			return "markdown", "s"
		},
	}
	seen := map[string]string{key("markdown", base, "s"): "base"}
	for name, change := range variants {
		r := base
		format, subject := change(&r)
		k := key(format, r, subject)
		if other, dup := seen[k]; dup {
			t.Errorf("%s has the key of %s: %q", name, other, k)
		}
		seen[k] = name
	}
	// A count followed by a key's length reads as another count and
	// length unless the count ends: one field under a key of 250 bytes
	// against twelve whose first key has 50 ("m1" "250:" and "m12"
	// "50:"), the rest made byte for byte alike.
	k50, k155 := strings.Repeat("a", 50), strings.Repeat("z", 155)
	twelve := chunking.Metadata{{Key: k50, Value: true}}
	for range 10 {
		twelve = append(twelve, chunking.Field{Key: "a", Value: true})
	}
	twelve = append(twelve, chunking.Field{Key: k155, Value: "x"})
	one := chunking.Metadata{{Key: k50 + "t" + strings.Repeat("1:at", 10) + "155:" + k155, Value: "x"}}
	if a, b := key("markdown", messages.IngestRequest{ID: "a.md", Metadata: one}, "s"),
		key("markdown", messages.IngestRequest{ID: "a.md", Metadata: twelve}, "s"); a == b {
		t.Errorf("one metadata field and twelve share the key %.40q…", a)
	}
	nested := base
	nested.Metadata = chunking.Metadata{{Key: "m", Value: map[string]any{"a": 1}}}
	if k := key("markdown", nested, "s"); k != "(none)" {
		t.Errorf("nested metadata has a key: %q", k)
	}
}

// TestResolutionLookupAllocs: finding a remembered resolution (its key
// and the lookup) allocates nothing, so the cache takes the per-document
// allocations of resolving away rather than trading them for others.
func TestResolutionLookupAllocs(t *testing.T) {
	p := testWorker().proc
	req := messages.IngestRequest{ID: "a.md", Options: map[string]any{"max_char": 400, "min_char": 10, "chunk_overlap": 0},
		Metadata: chunking.Metadata{{Key: "lang", Value: "en"}}}
	if got := chunkOnce(p, req, "ingest.docs", []byte("# T\n\ntext\n")); got.err != "" {
		t.Fatal(got.err)
	}
	rs := p.fleet.resolver()
	var found *resolution
	allocs := testing.AllocsPerRun(100, func() {
		var buf [256]byte
		f, err := rs.Registry().RequestFormat(registry.Request{ID: req.ID, Format: req.Format, Chunker: req.Chunker, Options: req.Options})
		if err != nil {
			panic(err)
		}
		key, ok := settingsKey(buf[:0], f.Name, &req, "ingest.docs")
		if !ok {
			panic("no key")
		}
		found = p.resolutions.get(rs, key)
	})
	if found == nil {
		t.Fatal("the resolution was not remembered")
	}
	if allocs != 0 {
		t.Errorf("finding a resolution allocates %v times, want 0", allocs)
	}
}

// TestResolutionsBounded: requests of ever-new settings fill the cache to
// maxResolutions and no further, and are still chunked.
func TestResolutionsBounded(t *testing.T) {
	p := testWorker().proc
	for i := range maxResolutions + 10 {
		req := messages.IngestRequest{ID: "a.md", Source: fmt.Sprint("source ", i)}
		if got := chunkOnce(p, req, "ingest.docs", []byte("text\n")); got.err != "" || len(got.chunks) != 1 {
			t.Fatalf("request %d: %+v", i, got)
		}
	}
	if n := len(p.resolutions.m); n != maxResolutions {
		t.Errorf("the cache holds %d resolutions, want %d", n, maxResolutions)
	}
}
