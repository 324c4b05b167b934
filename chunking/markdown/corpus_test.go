package markdown_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tokens/tokenstest"
)

// corpusFiles returns the shared Markdown corpus's files (relative paths),
// skipping the test when the corpus is absent.
func corpusFiles(t testing.TB) (string, []string) {
	t.Helper()
	dir := testutil.SharedDir(t, "corpus", "markdown")
	files, _, err := chunking.WalkFolder(context.Background(), dir, markdown.Extensions())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("empty corpus")
	}
	return dir, files
}

// TestCorpus chunks a sample of the optional Markdown corpus (every 50th
// file; with CHUNKSTREAM_TEST_FULL=1 every file, every tenth under the race
// detector) with the default options and a small max_char, and holds the
// invariants on each; in target mode (characters and tokens), every fifth
// of those files.
func TestCorpus(t *testing.T) {
	dir, files := corpusFiles(t)
	step := 50
	if testutil.Enabled(testutil.Full) {
		step = 1
		if raceEnabled {
			step = 10
		}
	}
	chunkers := map[string]*markdown.Chunker{
		"default": mustNew(t, nil),
		"small":   mustNew(t, func(c *markdown.Config) { *c = markdown.Config{MaxChar: 300, MinChar: 100, ChunkOverlap: 60} }),
		"tokens": mustNew(t, func(c *markdown.Config) {
			*c = markdown.Config{MaxChar: 128, MinChar: 48, ChunkOverlap: 24, Tokenizer: "cl100k_base"}
		}),
		// Target mode, on every fifth file of the others.
		"target":        mustNew(t, func(c *markdown.Config) { *c = target(400, "") }),
		"target-tokens": mustNew(t, func(c *markdown.Config) { *c = target(100, "cl100k_base") }),
	}
	for name, c := range chunkers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			failures := 0
			step := step
			if strings.HasPrefix(name, "target") {
				step *= 5
			}
			for i := 0; i < len(files); i += step {
				rel := files[i]
				src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatal(err)
				}
				doc := chunking.Document{Path: rel, Content: src}
				chunks, _, err := c.Chunk(doc)
				if errors.Is(err, chunking.ErrNotUTF8) && strings.Contains(err.Error(), rel) {
					continue // the corpus holds a file that is not UTF-8: a clear error is right
				}
				if err != nil {
					t.Errorf("Chunk(%s): %v", rel, err)
					continue
				}
				if err := CheckDocument(doc, chunks, c.Config()); err != nil {
					t.Errorf("Chunk(%s): %v", rel, err)
					if failures++; failures > 10 {
						t.Fatal("too many failures")
					}
				}
			}
		})
	}
}

// TestCorpusAsOneDocument chunks the corpus concatenated into one
// document (its first 256 KB; with CHUNKSTREAM_TEST_FULL=1 all of it, about 45
// MB, or 5 MB under the race detector), which the block scanner parses in
// segments, and holds the invariants.
func TestCorpusAsOneDocument(t *testing.T) {
	dir, files := corpusFiles(t)
	limit := 256 << 10
	if testutil.Enabled(testutil.Full) {
		limit = 1 << 40
		if raceEnabled {
			limit = 5 << 20
		}
	}
	var all []byte
	for _, rel := range files {
		if len(all) >= limit {
			break
		}
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(src) {
			continue
		}
		all = append(append(all, src...), '\n', '\n')
	}
	for _, cfg := range []markdown.Config{markdown.DefaultConfig(), {MaxChar: 300, MinChar: 100, ChunkOverlap: 60},
		{MaxChar: 256, MinChar: 64, ChunkOverlap: 32, Tokenizer: "o200k_base"}} {
		c, err := markdown.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		doc := chunking.Document{Path: "all.md", Content: all}
		chunks, _, err := c.Chunk(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDocument(doc, chunks, cfg); err != nil {
			t.Errorf("Chunk(corpus as one %d MB document, %+v): %v", len(all)>>20, cfg, err)
		}
	}
}

// TestCorpusTokenBudgetByReference chunks ../shared/corpus/markdown in
// token mode (with CHUNKSTREAM_TEST_FULL=1, cl100k_base: every file;
// o200k_base with a small budget: every fifth; ten times fewer under the
// race detector; without it, 200 times fewer) and has
// OpenAI's tokenizer, run for real (js-tiktoken under Node.js; skipped
// without them), count every chunk: each one not marked oversize is
// within max_char tokens, and each count equals ours. Every chunk also
// holds the invariants, the span property included (CheckDocument).
func TestCorpusTokenBudgetByReference(t *testing.T) {
	tokenstest.Dir(t)
	dir, files := corpusFiles(t)
	scale := 200
	if testutil.Enabled(testutil.Full) {
		scale = 1
		if raceEnabled {
			scale = 10
		}
	}
	for _, tc := range []struct {
		cfg  markdown.Config
		step int
	}{
		{markdown.Config{MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: "cl100k_base"}, 1},
		{markdown.Config{MaxChar: 128, MinChar: 32, ChunkOverlap: 16, Tokenizer: "o200k_base"}, 5},
	} {
		cfg, step := tc.cfg, tc.step*scale
		c, err := markdown.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		size := sizeOf(t, c)
		var texts []string
		var ours []int
		oversize := 0
		for i := 0; i < len(files); i += step {
			src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
			if err != nil {
				t.Fatal(err)
			}
			doc := chunking.Document{Path: files[i], Content: src}
			chunks, _, err := c.Chunk(doc)
			if err != nil {
				continue // the file that is not UTF-8
			}
			if err := CheckDocument(doc, chunks, cfg); err != nil {
				t.Errorf("Chunk(%s): %v", files[i], err)
			}
			for _, ch := range chunks {
				if ch.Get("oversize", false) == true {
					oversize++
					continue
				}
				texts = append(texts, ch.Content())
				ours = append(ours, size(ch.Content()))
			}
		}
		ref := tokenstest.Counts(t, cfg.Tokenizer, texts)
		over := 0
		for i, n := range ref {
			if n != ours[i] {
				t.Errorf("%s: chunk %.80q: %d tokens by the reference, %d by ours", cfg.Tokenizer, texts[i], n, ours[i])
			}
			if n > cfg.MaxChar {
				if over++; over <= 5 {
					t.Errorf("%s: chunk %.80q has %d tokens by the reference > max_char %d and is not oversize", cfg.Tokenizer, texts[i], n, cfg.MaxChar)
				}
			}
		}
		t.Logf("%s max_char %d, every %d files: %d chunks within the budget by the reference tokenizer, %d oversize, %d over", cfg.Tokenizer, cfg.MaxChar, step, len(texts)-over, oversize, over)
	}
}
