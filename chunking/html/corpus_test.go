package html

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// pagesEnv names a folder of real HTML pages (any public site's built
// pages, say) that TestRealPages chunks besides the Go distribution's own.
const pagesEnv = "CHUNKSTREAM_HTML_PAGES"

// realPages returns the HTML pages of the Go distribution (the language
// specification and the memory model) and, when pagesEnv names a folder,
// every .html and .htm file under it.
func realPages(t testing.TB) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	for _, name := range []string{"go_spec.html", "go_mem.html"} {
		if data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", name)); err == nil {
			pages["goroot/"+name] = data
		}
	}
	if dir := os.Getenv(pagesEnv); dir != "" {
		files, _, err := chunking.WalkFolder(context.Background(), dir, Extensions())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil {
				t.Fatal(err)
			}
			pages[f] = data
		}
	} else {
		t.Logf("%s not set: only the Go distribution's pages", pagesEnv)
	}
	if len(pages) == 0 {
		t.Skip("no real HTML pages: the Go distribution has no doc/ folder and " + pagesEnv + " is not set")
	}
	return pages
}

// TestRealPages chunks real pages with the default options, with small
// chunks, no fusing and no overlap, and in tokens, and holds checkPage's properties
// on every page that decodes. A page that does not decode must fail with
// ErrCharset.
func TestRealPages(t *testing.T) {
	pages := realPages(t)
	configs := map[string]Config{
		"default": DefaultConfig(),
		"small":   {MaxChar: 300, MinChar: 0, ChunkOverlap: 0},
		"tokens":  {MaxChar: 128, MinChar: 48, ChunkOverlap: 0, Tokenizer: "cl100k_base"},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			undecodable := 0
			for path, data := range pages {
				chunks, _, err := c.Chunk(chunking.Document{Path: path, Content: data})
				if errors.Is(err, ErrCharset) {
					undecodable++
					t.Logf("%s: %v", path, err)
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", path, err)
					continue
				}
				if err := checkPage(data, chunks, cfg); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
			t.Logf("%d pages, %d undecodable", len(pages), undecodable)
		})
	}
}
