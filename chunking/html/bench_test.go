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
	"github.com/chunkstream/chunkstream/internal/testutil"
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
// them, the floor the chunker is built on (the chunker passes over the
// text of scripts and styles without it, so it can beat that floor on
// pages heavy with them). Run with GOMAXPROCS=1 for cpu-MB/s per core.
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
			loopCPU(b, total, func() {
				for _, p := range pages {
					if _, _, err := c.Chunk(chunking.Document{Content: p}); err != nil && !bytes.Contains(p, []byte("charset")) {
						b.Fatal(err)
					}
				}
			})
		})
	}
	b.Run("tokenize", func(b *testing.B) {
		c := mustNew(b, html.DefaultConfig())
		b.SetBytes(int64(total))
		loopCPU(b, total, func() {
			for _, p := range pages {
				_ = c.ParseOnly(chunking.Document{Content: p})
			}
		})
	})
}

// loopCPU runs f in b.Loop and reports the bytes read per second of the
// process's CPU time (cpu-MB/s): the speed per core, whatever else the
// machine is doing, as long as the benchmark runs on one (GOMAXPROCS=1).
func loopCPU(b *testing.B, bytes int, f func()) {
	start := testutil.ProcessCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := testutil.ProcessCPU() - start; n > 0 && cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(n)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}
