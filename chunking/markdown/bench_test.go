package markdown_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// loadCorpus reads the shared Markdown corpus into memory (skipping the
// benchmark when it is absent).
func loadCorpus(b testing.TB) ([]chunking.Document, int64) {
	b.Helper()
	dir, files := corpusFiles(b)
	docs := make([]chunking.Document, 0, len(files))
	var total int64
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, chunking.Document{Path: rel, Content: src})
		total += int64(len(src))
	}
	return docs, total
}

// loopCPU runs f in b.Loop and reports CPU milliseconds per iteration.
func loopCPU(b *testing.B, f func()) {
	start := testutil.ProcessCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64((testutil.ProcessCPU()-start).Milliseconds())/float64(n), "cpu-ms/op")
	}
}

// BenchmarkCorpus chunks the whole corpus per iteration; ParseOnly is
// goldmark's block parse of the same bytes, the baseline of the speed
// target (chunking ≤ 1.4× its time). chunk-tokens chunks it in token mode
// (cl100k_base, max_char 512 tokens, about the byte size of the default
// 2048 characters: the target is ≤ 1.6× chunk's time), chunk-tokens-o200k
// the same in o200k_base; chunk-target in target mode.
func BenchmarkCorpus(b *testing.B) {
	docs, total := loadCorpus(b)
	c := mustNew(b, nil)
	b.Run("chunk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		loopCPU(b, func() {
			for _, d := range docs {
				_, _, _ = c.Chunk(d)
			}
		})
	})
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		ct := mustNew(b, func(c *markdown.Config) {
			*c = markdown.Config{MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: enc}
		})
		name := "chunk-tokens"
		if enc != "cl100k_base" {
			name += "-" + strings.TrimSuffix(enc, "_base")
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(total)
			loopCPU(b, func() {
				for _, d := range docs {
					_, _, _ = ct.Chunk(d)
				}
			})
		})
	}
	// chunk-target chunks it in target mode (target_char 800): the cut
	// choice weighs every end of each chunk.
	cg := mustNew(b, func(c *markdown.Config) { *c = target(800, "") })
	b.Run("chunk-target", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		loopCPU(b, func() {
			for _, d := range docs {
				_, _, _ = cg.Chunk(d)
			}
		})
	})
	b.Run("parse-only", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		loopCPU(b, func() {
			for _, d := range docs {
				mdblocks.ParseOnly(d.Content)
			}
		})
	})
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		loopCPU(b, func() {
			for _, d := range docs {
				mdblocks.Scan(d.Content)
			}
		})
	})
}

// synthetic100MB returns a 100 MB Markdown document: the corpus files
// concatenated (valid UTF-8 ones), or generated text when it is absent.
func synthetic100MB(b *testing.B) []byte {
	const size = 100 << 20
	var buf bytes.Buffer
	buf.Grow(size + 1<<20)
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "markdown")
	if _, err := os.Stat(dir); err == nil {
		docs, _ := loadCorpus(b)
		for buf.Len() < size {
			for _, d := range docs {
				buf.Write(d.Content)
				buf.WriteString("\n\n")
				if buf.Len() >= size {
					break
				}
			}
		}
		return bytes.ToValidUTF8(buf.Bytes(), []byte("\uFFFD"))
	}
	para := strings.Repeat("Some text with `code` and *emphasis*. ", 20) + "\n\n"
	for i := 0; buf.Len() < size; i++ {
		buf.WriteString("## Section\n\n" + para + "```go\nfunc f() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n")
	}
	return buf.Bytes()
}

// Benchmark100MB chunks one 100 MB document (target: per-MB time no
// worse than 1.1× the corpus's).
func Benchmark100MB(b *testing.B) {
	src := synthetic100MB(b)
	c := mustNew(b, nil)
	b.Run("chunk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		loopCPU(b, func() { _, _, _ = c.Chunk(chunking.Document{Content: src}) })
	})
	b.Run("chunk-func", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		loopCPU(b, func() {
			_, _ = c.ChunkFunc(context.Background(), chunking.Document{Content: src}, func(chunking.Chunk) bool { return true })
		})
	})
	b.Run("parse-only", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		loopCPU(b, func() { mdblocks.ParseOnly(src) })
	})
}

// BenchmarkAdversarial chunks the adversarial inputs of
// TestBadInputLinear at two sizes, 8× apart: linear paths show the same
// MB/s at both, so super-linear behaviour shows as a number.
func BenchmarkAdversarial(b *testing.B) {
	c := mustNew(b, nil)
	for name, gen := range adversarial {
		for _, n := range []int{12500, 100000} {
			src := gen(n)
			b.Run(fmt.Sprintf("%s/n=%d", strings.ReplaceAll(name, " ", "-"), n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					_, _, _ = c.Chunk(chunking.Document{Content: src})
				}
			})
		}
	}
}

// BenchmarkSpanCost chunks the corpus with and without spans (the
// chunker's benchmark-only switch) in one run: every document with both,
// in alternating order, so that both see the same machine, load and
// garbage; it reports the ratio of their CPU times on the benchmark's
// thread, which other processes do not inflate (target: spans/no-spans ≤
// 1.05). Bytes count both runs.
func BenchmarkSpanCost(b *testing.B) {
	docs, total := loadCorpus(b)
	for _, tc := range []struct {
		name string
		set  func(*markdown.Config)
	}{
		{"default", nil},
		{"small", func(c *markdown.Config) { *c = markdown.Config{MaxChar: 300, MinChar: 100, ChunkOverlap: 60} }},
		{"tokens", func(c *markdown.Config) {
			*c = markdown.Config{MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: "cl100k_base"}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			with := mustNew(b, tc.set)
			without := markdown.WithoutSpans(with)
			run := func(c *markdown.Chunker, d chunking.Document) time.Duration {
				start := testutil.ThreadCPU()
				_, _, _ = c.Chunk(d)
				return testutil.ThreadCPU() - start
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.SetBytes(2 * total)
			var tw, to time.Duration
			i := 0
			for b.Loop() {
				for k, d := range docs {
					if (i+k)%2 == 0 {
						tw += run(with, d)
						to += run(without, d)
					} else {
						to += run(without, d)
						tw += run(with, d)
					}
				}
				i++
			}
			if to > 0 {
				b.ReportMetric(tw.Seconds()/to.Seconds(), "spans/no-spans")
			}
		})
	}
}
