package html_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
)

// benchPages returns the Go distribution's HTML pages and, when
// CHUNKSTREAM_HTML_PAGES names a folder, its .html and .htm files.
func benchPages(b *testing.B) [][]byte {
	var pages [][]byte
	for _, name := range []string{"go_spec.html", "go_mem.html"} {
		if data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", name)); err == nil {
			pages = append(pages, data)
		}
	}
	if dir := os.Getenv("CHUNKSTREAM_HTML_PAGES"); dir != "" {
		files, _, err := chunking.WalkFolder(context.Background(), dir, html.Extensions())
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil {
				b.Fatal(err)
			}
			pages = append(pages, data)
		}
	}
	if len(pages) == 0 {
		b.Skip("no real HTML pages")
	}
	return pages
}

// BenchmarkChunk chunks real pages with the default options (and in
// tokens); BenchmarkChunk/tokenize runs the HTML tokenizer alone over
// them, the floor the chunker is built on.
func BenchmarkChunk(b *testing.B) {
	pages := benchPages(b)
	total := 0
	for _, p := range pages {
		total += len(p)
	}
	for _, bc := range []struct {
		name string
		cfg  html.Config
	}{
		{"default", html.DefaultConfig()},
		{"tokens", html.Config{MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: "cl100k_base"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := mustNew(b, bc.cfg)
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					if _, _, err := c.Chunk(chunking.Document{Content: p}); err != nil && !bytes.Contains(p, []byte("charset")) {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("tokenize", func(b *testing.B) {
		c := mustNew(b, html.DefaultConfig())
		b.SetBytes(int64(total))
		for b.Loop() {
			for _, p := range pages {
				_ = c.ParseOnly(chunking.Document{Content: p})
			}
		}
	})
}
