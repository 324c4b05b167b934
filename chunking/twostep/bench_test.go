package twostep

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// loadCorpus reads the shared Markdown corpus into memory.
func loadCorpus(b *testing.B) ([]chunking.Document, int64) {
	b.Helper()
	dir := testutil.SharedDir(b, "corpus", "markdown")
	var docs []chunking.Document
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(src) {
			return nil // the chunker refuses it: not part of a speed test
		}
		docs = append(docs, chunking.Document{Path: p, Content: src})
		total += int64(len(src))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return docs, total
}

// BenchmarkCorpus chunks the shared Markdown corpus on one goroutine.
func BenchmarkCorpus(b *testing.B) {
	docs, total := loadCorpus(b)
	c := mustNew(b, nil)
	b.ReportAllocs()
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range docs {
			c.Chunk(d)
		}
	}
}

// BenchmarkCorpusTokens is BenchmarkCorpus in token mode: max_chunk_size
// 512 cl100k_base tokens.
func BenchmarkCorpusTokens(b *testing.B) {
	docs, total := loadCorpus(b)
	c := mustNew(b, func(c *Config) { c.Tokenizer = "cl100k_base" })
	b.ReportAllocs()
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range docs {
			c.Chunk(d)
		}
	}
}

// BenchmarkCorpusSmallChunks forces the sentence split on most sections.
func BenchmarkCorpusSmallChunks(b *testing.B) {
	docs, total := loadCorpus(b)
	c := mustNew(b, func(c *Config) { c.MaxChunkSize = 64; c.WordOverlap = 8; c.AddHeaders = true })
	b.ReportAllocs()
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range docs {
			c.Chunk(d)
		}
	}
}

// BenchmarkCorpusParseOnly is the goldmark block parse alone, the
// baseline of the corpus benchmarks.
func BenchmarkCorpusParseOnly(b *testing.B) {
	docs, total := loadCorpus(b)
	b.ReportAllocs()
	b.SetBytes(total)
	for b.Loop() {
		for _, d := range docs {
			mdblocks.ParseOnly(d.Content)
		}
	}
}

// BenchmarkLargeDocument chunks one document of about 100 MB built from
// the corpus: its MB/s must match the corpus's (no super-linear cliff).
func BenchmarkLargeDocument(b *testing.B) {
	docs, _ := loadCorpus(b)
	var sb strings.Builder
	for sb.Len() < 100<<20 {
		for _, d := range docs {
			sb.Write(d.Content)
			sb.WriteString("\n\n")
			if sb.Len() >= 100<<20 {
				break
			}
		}
	}
	doc := chunking.Document{Path: "large.md", Content: []byte(sb.String())}
	c := mustNew(b, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc.Content)))
	for b.Loop() {
		if _, _, err := c.Chunk(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdversarial chunks the inputs of TestBadInput at two sizes, 8×
// apart, and the large inputs below: linear paths show the same MB/s at
// both sizes, so super-linear behaviour shows as a number.
func BenchmarkAdversarial(b *testing.B) {
	c := mustNew(b, nil)
	run := func(name, src string) {
		doc := chunking.Document{Path: "adv.md", Content: []byte(src)}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				c.Chunk(doc)
			}
		})
	}
	for name, gen := range badInputs {
		for _, n := range []int{20000, 160000} {
			run(fmt.Sprintf("%s/n=%d", strings.ReplaceAll(name, " ", "-"), n), gen(n))
		}
	}
	for name, src := range map[string]string{
		"dollars-large":         strings.Repeat("$a $5 ", 1<<20),
		"no-sentence-end-large": strings.Repeat("word ", 2<<20),
		"unclosed-begins-large": strings.Repeat(`\begin{equation} x. `, 1<<18),
		"abbreviations-large":   strings.Repeat("Dr. e.g. Fig. 3. et al. J. R. ", 1<<17),
	} {
		run(name, src)
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
		set  func(*Config)
	}{
		{"default", nil},
		{"small", func(c *Config) { c.MaxChunkSize = 64; c.WordOverlap = 8; c.AddHeaders = true }},
		{"tokens", func(c *Config) { c.Tokenizer = "cl100k_base"; c.WordOverlap = 32 }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			with := mustNew(b, tc.set)
			without := WithoutSpans(with)
			run := func(c *Chunker, d chunking.Document) time.Duration {
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

// referenceEndSimple is referenceEnd without its quick reject on the
// keyword's second letter: the baseline BenchmarkReferenceEnd measures the
// reject against.
func referenceEndSimple(s string, i, b int) int {
	if first := s[i] | 0x20; first != 'f' && first != 't' && first != 'e' {
		return i
	}
	for _, w := range refWords {
		if strings.HasPrefix(s[i+1:b], w) {
			return referenceEnd(s, i, b)
		}
	}
	return i
}

// BenchmarkReferenceEnd calls referenceEnd, and the version without the
// quick reject, at every word start of the corpus, the two in one loop:
// simple/fast is the quick reject's gain, ms/corpus the fast version's
// time over the corpus (compare BenchmarkCorpus).
func BenchmarkReferenceEnd(b *testing.B) {
	docs, _ := loadCorpus(b)
	type call struct {
		s string
		i int
	}
	var calls []call
	for _, d := range docs {
		s := string(d.Content)
		for i := 1; i < len(s); i++ {
			if !isAlnum(s[i-1]) && isAlnum(s[i]) {
				calls = append(calls, call{s, i})
			}
		}
	}
	for _, c := range calls {
		if got, want := referenceEnd(c.s, c.i, len(c.s)), referenceEndSimple(c.s, c.i, len(c.s)); got != want {
			b.Fatalf("referenceEnd(%q) = %d, want %d", c.s[c.i:min(c.i+20, len(c.s))], got, want)
		}
	}
	var fast, simple time.Duration
	for b.Loop() {
		t := time.Now()
		for _, c := range calls {
			referenceEnd(c.s, c.i, len(c.s))
		}
		fast += time.Since(t)
		t = time.Now()
		for _, c := range calls {
			referenceEndSimple(c.s, c.i, len(c.s))
		}
		simple += time.Since(t)
	}
	b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
	b.ReportMetric(float64(fast.Milliseconds())/float64(b.N), "ms/corpus")
}
