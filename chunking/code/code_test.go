package code_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

func mustNew(t testing.TB, cfg code.Config) *code.Chunker {
	t.Helper()
	c, err := code.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  code.Config
		want string
	}{
		{code.Config{MaxChar: 0}, "max_char must be > 0"},
		{code.Config{MaxChar: 10, Language: "cobol"}, `language must be empty (from the extension) or one of go, python, javascript, typescript, tsx, got "cobol"`},
		{code.Config{MaxChar: 10, Tokenizer: "gpt2"}, "tokenizer must be empty"},
		{code.Config{MaxChar: 2048, TargetChar: -1}, "target_char must be ≥ 0 (0: off), got -1"},
		{code.Config{MaxChar: 2048, TargetTokens: -1}, "target_tokens must be ≥ 0 (0: off), got -1"},
		{code.Config{MaxChar: 2048, TargetChar: 800, TargetTokens: 200, Tokenizer: "cl100k_base"}, "target_char and target_tokens are one target in two units: set one"},
		{code.Config{MaxChar: 2048, TargetChar: 800, Tokenizer: "cl100k_base"}, "target_char counts characters, but tokenizer cl100k_base counts tokens: use target_tokens"},
		{code.Config{MaxChar: 2048, TargetTokens: 200}, "target_tokens needs tokenizer"},
		{code.Config{MaxChar: 1000, TargetChar: 800}, "target_char sets max_char itself: leave it out (got max_char 1000)"},
		{code.Config{MaxChar: 1000, TargetTokens: 200, Tokenizer: "o200k_base"}, "target_tokens sets max_char itself"},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidOptions with %q", tc.cfg, err, tc.want)
		}
	}
	if err := code.DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
	for _, cfg := range []code.Config{
		{MaxChar: 2048, TargetChar: 800},
		{MaxChar: 2048, TargetTokens: 200, Tokenizer: "cl100k_base"},
	} {
		c := mustNew(t, cfg)
		if got := c.Config(); got != cfg {
			t.Errorf("New(%+v).Config() = %+v", cfg, got)
		}
	}
}

// TestLanguage: the language comes from the option, else the extension
// (any case); a document of neither, or of another format, is refused
// in words that say what to do.
func TestLanguage(t *testing.T) {
	for name, want := range map[string]string{"a.go": "go", "x/B.PY": "python", "s.pyi": "python", "m.mjs": "javascript",
		"c.jsx": "javascript", "t.mts": "typescript", "v.tsx": "tsx", "README": "", "a.md": ""} {
		if got := code.LanguageOf(name); got != want {
			t.Errorf("LanguageOf(%q) = %q, want %q", name, got, want)
		}
	}
	c := mustNew(t, code.DefaultConfig())
	_, _, err := c.Chunk(chunking.Document{Path: "notes.txt", Content: []byte("x")})
	if !errors.Is(err, chunking.ErrUnsupportedFormat) || !strings.Contains(err.Error(), "set the option language") {
		t.Errorf("Chunk(notes.txt) = %v, want ErrUnsupportedFormat naming the option", err)
	}
	_, _, err = c.Chunk(chunking.Document{Path: "a.go", Format: "markdown", Content: []byte("x")})
	if !errors.Is(err, chunking.ErrUnsupportedFormat) {
		t.Errorf("Chunk(format markdown) = %v, want ErrUnsupportedFormat", err)
	}
	py := mustNew(t, code.Config{MaxChar: 100, Language: "python"})
	chunks, _, err := py.Chunk(chunking.Document{Path: "tool", Format: "code", Content: []byte("def f():\n    return 1\n")})
	if err != nil || len(chunks) != 1 || chunks[0].Get("language", nil) != "python" {
		t.Errorf("language python on a path without extension: %v, %v", chunks, err)
	}
	if got := chunks[0].Get("symbols", nil); fmt.Sprint(got) != "[tool.f]" {
		t.Errorf("symbols = %v, want [tool.f]", got)
	}
}

// TestNotUTF8 refuses text that is not UTF-8 with the offset of its first
// bad byte, as every chunker does.
func TestNotUTF8(t *testing.T) {
	c := mustNew(t, code.DefaultConfig())
	_, _, err := c.Chunk(chunking.Document{Path: "a.py", Content: []byte("x = 1\ny = '\xff'\n")})
	if !errors.Is(err, chunking.ErrNotUTF8) || !strings.Contains(err.Error(), "a.py") || !strings.Contains(err.Error(), "11") {
		t.Errorf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8 naming a.py and byte 11", err)
	}
}

// TestEmptyAndBOM: an empty file has no chunk; a leading byte-order mark
// is dropped from the chunks, and spans still count it.
func TestEmptyAndBOM(t *testing.T) {
	c := mustNew(t, code.DefaultConfig())
	if chunks, _, err := c.Chunk(chunking.Document{Path: "a.go"}); err != nil || len(chunks) != 0 {
		t.Errorf("Chunk(empty) = %v, %v", chunks, err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: "a.py", Content: []byte("\uFEFFx = 1\n")})
	if err != nil || len(chunks) != 1 || chunks[0].Content() != "x = 1\n" || chunks[0].Span().Start != 3 {
		t.Errorf("Chunk(BOM) = %v, %v; want one chunk without the mark, starting at byte 3", chunks, err)
	}
}

// TestSymbols: the symbol paths of each language's declarations.
func TestSymbols(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"srv/a.go", "package srv\n\nfunc F() {}\n\nfunc (s *Server[K]) Serve() {}\n\ntype T struct{}\n\nvar V = 1\n",
			[]string{"srv", "srv.F", "srv.Server.Serve", "srv.T", "srv.V"}},
		{"pkg/mod.py", "import os\n\n@dec\nclass C:\n    def m(self):\n        pass\n\nasync def run():\n    pass\n",
			[]string{"pkg.mod", "pkg.mod.C", "pkg.mod.run"}},
		{"lib/python3.11/json/__init__.py", "def dumps():\n    pass\n", []string{"json.dumps"}},
		{"w.ts", "import x from 'x';\nexport class W {\n  m(): void {}\n}\nexport const f = () => 1;\ninterface I {}\n",
			[]string{"w", "W", "f", "I"}},
	}
	c := mustNew(t, code.Config{MaxChar: 10000})
	for _, tc := range tests {
		chunks, _, err := c.Chunk(chunking.Document{Path: tc.name, Content: []byte(tc.src)})
		if err != nil || len(chunks) != 1 {
			t.Fatalf("%s: %v, %v", tc.name, chunks, err)
		}
		var got []string
		for _, s := range chunks[0].Get("symbols", nil).([]any) {
			got = append(got, s.(string))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: symbols %q, want %q", tc.name, got, tc.want)
		}
	}
	// A method split into pieces: every piece has the method's path.
	c = mustNew(t, code.Config{MaxChar: 40})
	src := "class C:\n    def m(self):\n        a = 1\n        b = 2\n        c = 3\n        return a + b + c\n"
	chunks, _, err := c.Chunk(chunking.Document{Path: "k.py", Content: []byte(src)})
	if err != nil || len(chunks) < 3 {
		t.Fatalf("k.py: %v, %v", chunks, err)
	}
	for _, ch := range chunks[1:] {
		if s := ch.Get("symbols", nil).([]any); s[len(s)-1] != "k.C.m" {
			t.Errorf("chunk %q: symbols %v, want k.C.m last", ch.Content(), s)
		}
	}
}

// TestTokens: with a tokenizer, every chunk not marked oversize has at
// most max_char tokens (target_tokens: its ceiling).
func TestTokens(t *testing.T) {
	enc, err := tokens.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	ctr := enc.Counter()
	defer ctr.Release()
	for _, tc := range loadCases(t) {
		lang := code.LanguageOf(tc.Name)
		if lang == "" {
			continue
		}
		for _, cfg := range []code.Config{
			{MaxChar: 20, Tokenizer: "cl100k_base"},
			{MaxChar: 64, Tokenizer: "cl100k_base"},
			{MaxChar: 2048, TargetTokens: 40, Tokenizer: "cl100k_base"}, // the ceiling: 60
		} {
			c := mustNew(t, cfg)
			max := cfg.MaxChar
			if cfg.TargetTokens > 0 {
				max = cfg.TargetTokens + (cfg.TargetTokens+1)/2
			}
			chunks, _, err := c.Chunk(chunking.Document{Path: tc.Name, Content: tc.Input})
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for _, ch := range chunks {
				all.WriteString(ch.Content())
				n := ctr.CountString(strings.TrimRight(ch.Content(), " \t\r\n"))
				if _, over := ch.Metadata().Get("oversize"); n > max && !over {
					t.Errorf("%s at %d tokens (%+v): chunk of %d tokens, not marked oversize: %q", tc.Name, max, cfg, n, ch.Content())
				}
			}
			if all.String() != string(tc.Input) {
				t.Errorf("%s at %d tokens: the chunks do not concatenate to the file", tc.Name, max)
			}
		}
	}
}

// TestCancel: a context that has ended stops the chunker with its error.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := mustNew(t, code.DefaultConfig())
	_, err := c.ChunkFunc(ctx, chunking.Document{Path: "a.go", Content: []byte("package a\n")}, func(chunking.Chunk) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ChunkFunc(cancelled) = %v, want context.Canceled", err)
	}
}

// TestConcurrent chunks every golden input from many goroutines with one
// Chunker (run with -race) and compares with one goroutine's chunks.
func TestConcurrent(t *testing.T) {
	c := mustNew(t, code.Config{MaxChar: 100})
	cases := loadCases(t)
	var docs []chunking.Document
	for _, tc := range cases {
		if code.LanguageOf(tc.Name) != "" {
			docs = append(docs, chunking.Document{Path: tc.Name, Content: tc.Input})
		}
	}
	want := make([][]string, len(docs))
	for i, d := range docs {
		chunks, _, err := c.Chunk(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			want[i] = append(want[i], ch.Hash())
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(docs))
	for g := range 8 {
		wg.Go(func() {
			for k := range docs {
				i := (k + g) % len(docs)
				chunks, _, err := c.Chunk(docs[i])
				if err != nil {
					errs <- err
					return
				}
				var got []string
				for _, ch := range chunks {
					got = append(got, ch.Hash())
				}
				if !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("%s: other chunks when chunked concurrently", docs[i].Path)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTargetOptions: through the registry, as a request's options are
// read, target_char replaces max_char: the resolved options of target
// mode are the target alone, a later layer's max_char turns a target
// default off, and one layer may not set both.
func TestTargetOptions(t *testing.T) {
	entry, err := registry.Default().Lookup("code")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		layers []map[string]any
		want   map[string]any
	}{
		{[]map[string]any{{"target_char": 800}}, map[string]any{"target_char": 800}},
		{[]map[string]any{{"max_char": 900}, {"target_char": 800}}, map[string]any{"target_char": 800}},
		{[]map[string]any{{"target_char": 800}, {"max_char": 900}}, map[string]any{"max_char": 900}},
		{[]map[string]any{{"tokenizer": "cl100k_base", "target_tokens": 200}}, map[string]any{"tokenizer": "cl100k_base", "target_tokens": 200}},
	} {
		got, err := entry.Resolve(tc.layers...)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Resolve(%v) = %v, %v; want %v", tc.layers, got, err, tc.want)
		}
	}
	_, err = entry.Resolve(map[string]any{"target_char": 800, "max_char": 2048})
	if !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), "set target_char or max_char, not both") {
		t.Errorf("Resolve(target_char and max_char) = %v, want ErrInvalidOptions", err)
	}
}
