package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func TestInferFormat(t *testing.T) {
	r := registry.Default()
	tests := map[string]string{
		"a.md": "markdown", "A.MD": "markdown", "x/y.markdown": "markdown", "p.mdx": "mdx",
		"n.txt": "text", "box.mbox": "mbox", "m.eml": "eml", "rows.jsonl": "email-json", "rows.json": "email-json",
		"https://x/y.mdx?rev=2": "mdx", "inbox#thread1": "markdown", "README": "markdown", "a.pdf": "markdown",
		"a.go": "code", "lib/x.PY": "code", "app.tsx": "code", "m.mjs": "code",
		"lists/dev.mboxrd": "mbox", "old.MBX": "mbox", "https://git.example/r/main.go?ref=v2": "code",
		"https://site.example/page.html?v=1.2": "html", "https://site.example/page.html?next=/home": "html",
		"https://docs.example/guide.mdx#step-1.2": "mdx", "https://git.example/x.py?ref=v1.2": "code", "h#x.md": "markdown",
	}
	for id, want := range tests {
		if got := r.InferFormat(id).Name; got != want {
			t.Errorf("InferFormat(%q) = %q, want %q", id, got, want)
		}
	}
	if _, err := r.Format("pdf"); !errors.Is(err, registry.ErrUnknownFormat) {
		t.Errorf("Format(pdf) = %v, want ErrUnknownFormat", err)
	}
}

// resolved returns the default options of chunker with extra on top.
func resolved(t *testing.T, chunker string, extra map[string]any) map[string]any {
	t.Helper()
	m, err := registry.Default().Resolve(chunker, extra)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestChoose(t *testing.T) {
	ts := registry.Defaults{Chunker: "twostep", Options: map[string]any{"max_chunk_size": 300, "add_headers": true}}
	em := registry.Defaults{Chunker: "email", Options: map[string]any{"max_chars": 4000}}
	tests := []struct {
		name     string
		d        registry.Defaults
		req      registry.Request
		chunker  string
		format   string
		resolved map[string]any
	}{
		{"no defaults, text", registry.Defaults{}, registry.Request{ID: "a.md"}, "markdown", "markdown", resolved(t, "markdown", nil)},
		{"no defaults, mail", registry.Defaults{}, registry.Request{ID: "a.mbox"}, "email", "mbox", resolved(t, "email", nil)},
		{"no defaults, code", registry.Defaults{}, registry.Request{ID: "pkg/a.py"}, "code", "code", resolved(t, "code", nil)},
		{"text default does not read code", ts, registry.Request{ID: "a.go", Options: map[string]any{"language": "go"}}, "code", "code",
			resolved(t, "code", map[string]any{"language": "go"})},
		{"text default replaces markdown", ts, registry.Request{ID: "a.md"}, "twostep", "markdown",
			resolved(t, "twostep", ts.Options)},
		{"text default does not read mail", ts, registry.Request{ID: "a.eml"}, "email", "eml", resolved(t, "email", nil)},
		{"explicit format decides", ts, registry.Request{ID: "a.md", Format: "mbox"}, "email", "mbox", resolved(t, "email", nil)},
		{"mail default replaces email", em, registry.Request{ID: "x#t1", Format: "mbox"}, "email", "mbox", resolved(t, "email", em.Options)},
		{"mail default does not read text", em, registry.Request{ID: "a.txt"}, "markdown", "text", resolved(t, "markdown", nil)},
		{"a named chunker reads its own format", registry.Defaults{}, registry.Request{ID: "site/index.php", Chunker: "html"}, "html", "html",
			resolved(t, "html", nil)},
		{"a named chunker reads its own format, URI without extension", registry.Defaults{}, registry.Request{ID: "https://example.org/menu", Chunker: "html"},
			"html", "html", resolved(t, "html", nil)},
		{"a named chunker reads its own format, not the page's", ts, registry.Request{ID: "page.html", Chunker: "twostep"}, "twostep", "markdown",
			resolved(t, "twostep", ts.Options)},
		{"a named chunker keeps a format it reads", registry.Defaults{}, registry.Request{ID: "notes.txt", Chunker: "twostep"}, "twostep", "text",
			resolved(t, "twostep", nil)},
		{"an explicit format stays", registry.Defaults{}, registry.Request{ID: "page.php", Format: "text", Chunker: "html"}, "html", "text",
			resolved(t, "html", nil)},
		{"request's chunker wins", ts, registry.Request{ID: "a.md", Chunker: "markdown"}, "markdown", "markdown", resolved(t, "markdown", nil)},
		{"request's options win over the defaults'", ts,
			registry.Request{ID: "a.md", Options: map[string]any{"max_chunk_size": 50}}, "twostep", "markdown",
			resolved(t, "twostep", map[string]any{"max_chunk_size": 50, "add_headers": true})},
		{"the defaults' options apply to the chunker named too", ts,
			registry.Request{ID: "a.md", Chunker: "twostep", Options: map[string]any{"word_overlap": 2}}, "twostep", "markdown",
			resolved(t, "twostep", map[string]any{"max_chunk_size": 300, "add_headers": true, "word_overlap": 2})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := registry.Default().Resolver(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			c, err := rs.Choose(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if c.Entry.Name != tt.chunker || c.Format.Name != tt.format || fmt.Sprint(c.Options) != fmt.Sprint(tt.resolved) {
				t.Errorf("Choose(%+v) with %+v = %s %s %v, want %s %s %v", tt.req, tt.d, c.Entry.Name, c.Format.Name, c.Options,
					tt.chunker, tt.format, tt.resolved)
			}
		})
	}
	rs, _ := registry.Default().Resolver(ts)
	for _, tc := range []struct {
		req  registry.Request
		want error
	}{
		{registry.Request{ID: "a", Format: "pdf"}, registry.ErrUnknownFormat},
		{registry.Request{ID: "a", Chunker: "bad"}, registry.ErrUnknownChunker},
		{registry.Request{ID: "a", Options: map[string]any{"max_char": 10}}, chunking.ErrUnknownOption},
		{registry.Request{ID: "a", Options: map[string]any{"max_chunk_size": "x"}}, chunking.ErrInvalidOptions},
	} {
		if _, err := rs.Choose(tc.req); !errors.Is(err, tc.want) {
			t.Errorf("Choose(%+v) = %v, want %v", tc.req, err, tc.want)
		}
	}
	if _, err := registry.Default().Resolver(registry.Defaults{Chunker: "markdown", Options: map[string]any{"bogus": 1}}); !errors.Is(err, chunking.ErrUnknownOption) {
		t.Errorf("Resolver with an unknown default option = %v", err)
	}
}

// TestChooseSize: the size a request sets, in its unit: tokens with a
// tokenizer.
func TestChooseSize(t *testing.T) {
	rs, _ := registry.Default().Resolver(registry.Defaults{})
	for _, tc := range []struct {
		req  registry.Request
		size int
		unit registry.Unit
		set  bool
	}{
		{registry.Request{ID: "a.md"}, 2048, registry.Characters, false},
		{registry.Request{ID: "a.md", Options: map[string]any{"max_char": 500}}, 500, registry.Characters, true},
		{registry.Request{ID: "a.md", Options: map[string]any{"max_char": 500, "tokenizer": "cl100k_base"}}, 500, registry.Tokens, true},
		{registry.Request{ID: "a.md", Chunker: "twostep"}, 512, registry.Words, false},
		{registry.Request{ID: "a.mbox"}, 2048, registry.Characters, false},
		{registry.Request{ID: "a.md", Options: map[string]any{"target_char": 300}}, 300, registry.Characters, true},
		{registry.Request{ID: "a.md", Options: map[string]any{"target_tokens": 90, "tokenizer": "cl100k_base"}}, 90, registry.Tokens, true},
		{registry.Request{ID: "a.md", Chunker: "twostep", Options: map[string]any{"target_char": 700}}, 700, registry.Characters, true},
	} {
		c, err := rs.Choose(tc.req)
		want := c.Entry.Size
		for k := range tc.req.Options {
			if strings.HasPrefix(k, "target_") {
				want = k
			}
		}
		if c.SizeOption != want {
			t.Errorf("Choose(%+v).SizeOption = %q, want %q", tc.req, c.SizeOption, want)
		}
		if err != nil || c.Size != tc.size || c.Unit != tc.unit || c.SizeSet != tc.set {
			t.Errorf("Choose(%+v) = size %d %s set %v, %v; want %d %s %v", tc.req, c.Size, c.Unit, c.SizeSet, err, tc.size, tc.unit, tc.set)
		}
	}
}

// TestSizeOptions: every chunker's size option is one of its integer
// options.
func TestSizeOptions(t *testing.T) {
	for _, e := range registry.Default().Entries() {
		found := false
		for _, o := range e.Options() {
			found = found || o.Name == e.Size && o.Kind == registry.Int
		}
		if !found || e.Unit == "" {
			t.Errorf("chunker %s: size option %q (%s) is not one of its integer options", e.Name, e.Size, e.Unit)
		}
	}
}

// TestResolverCachesChunkers: one chunker per configuration, however the
// request spells it.
func TestResolverCachesChunkers(t *testing.T) {
	built := 0
	md, _ := registry.Default().Lookup("markdown")
	md = md.Wrap(func(_ map[string]any, c chunking.Chunker) chunking.Chunker { built++; return c })
	r, err := registry.New(md)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := r.Resolver(registry.Defaults{})
	for _, opts := range []map[string]any{nil, {"max_char": 2048}, {"max_char": 2048.0, "min_char": 1024}, {"max_char": 300}} {
		c, err := rs.Choose(registry.Request{ID: "a.md", Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.Chunker(c); err != nil {
			t.Fatal(err)
		}
	}
	if built != 2 {
		t.Errorf("built %d chunkers, want 2 (the default configuration and max_char 300)", built)
	}
}

// TestResolverBuildsOnceTogether: requests of one configuration arriving
// together share one chunker; none waits on another configuration's build.
func TestResolverBuildsOnceTogether(t *testing.T) {
	var built atomic.Int64
	gate := make(chan struct{})
	md, _ := registry.Default().Lookup("markdown")
	md = md.Wrap(func(_ map[string]any, c chunking.Chunker) chunking.Chunker { built.Add(1); <-gate; return c })
	r, err := registry.New(md)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := r.Resolver(registry.Defaults{})
	c, err := rs.Choose(registry.Request{ID: "a.md"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := rs.Chunker(c); err != nil {
				t.Error(err)
			}
		})
	}
	// The first build holds the gate; every other caller waits on it.
	testutil.WaitFor(t, 10*time.Second, "the first build", func() bool { return built.Load() == 1 })
	close(gate)
	wg.Wait()
	if n := built.Load(); n != 1 {
		t.Errorf("built %d chunkers for one configuration, want 1", n)
	}
}

func TestNewRefuses(t *testing.T) {
	md, _ := registry.Default().Lookup("markdown")
	if _, err := registry.New(md, md); err == nil {
		t.Error("New with a name twice = nil error")
	}
	md.Formats = nil
	if _, err := registry.New(md); err == nil {
		t.Error("New with an entry that reads no format = nil error")
	}
}

// TestChunkersReadTheInferredFormat: a request without a format is
// chunked, as the worker chunks it (the chunker given only an explicit
// format, reading the id's extension itself), exactly as when the format
// the registry infers is named: one reading of the extension, a URI's
// query or fragment and the extension's case included.
func TestChunkersReadTheInferredFormat(t *testing.T) {
	rs, err := registry.Default().Resolver(registry.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	mbox := "From a@example.com Mon Jan  1 00:00:00 2024\nFrom: a@example.com\nSubject: hello\nMessage-ID: <1@x>\n\nbonjour\n"
	for _, tc := range []struct{ id, format, content string }{
		{"https://docs.example/guide.mdx?v=2", "mdx", "import X from './x'\n\n# Guide\n\nSome text.\n"},
		{"https://git.example/repo/main.go?ref=v2", "code", "package main\n\n// Main runs.\nfunc main() {}\n"},
		{"notes/A.TXT#top", "text", "Plain text. Two sentences.\n"},
		{"lists/dev.mboxrd", "mbox", mbox},
		{"lists/dev.mbx", "mbox", mbox},
	} {
		c, err := rs.Choose(registry.Request{ID: tc.id})
		if err != nil || c.Format.Name != tc.format {
			t.Fatalf("%s: Choose = %s, %v; want format %s", tc.id, c.Format.Name, err, tc.format)
		}
		ch, err := rs.Chunker(c)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ch.Chunk(chunking.Document{Path: tc.id, Content: []byte(tc.content)})
		if err != nil {
			t.Errorf("%s without a format: %v", tc.id, err)
			continue
		}
		want, _, err := ch.Chunk(chunking.Document{Path: tc.id, Format: tc.format, Content: []byte(tc.content)})
		if err != nil {
			t.Fatalf("%s as %s: %v", tc.id, tc.format, err)
		}
		hashes := func(cs []chunking.Chunk) (out []string) {
			for _, c := range cs {
				out = append(out, c.Hash())
			}
			return out
		}
		if fmt.Sprint(hashes(got)) != fmt.Sprint(hashes(want)) || len(got) == 0 {
			t.Errorf("%s: %d chunks without a format, %d as %s; want the same", tc.id, len(got), len(want), tc.format)
		}
	}
}
