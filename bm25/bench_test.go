package bm25

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// corpusChunks returns the chunks of the Markdown corpus, as the default
// Markdown chunker cuts them (about 2 KiB each), in path order.
func corpusChunks(b *testing.B) []string {
	ch, err := markdown.New(markdown.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	chunks, _, err := ch.ChunkFolder(context.Background(), testutil.SharedDir(b, "corpus", "markdown"))
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Content()
	}
	return texts
}

// firstBytes returns the first texts up to size bytes in all.
func firstBytes(texts []string, size int) []string {
	n := 0
	for i, t := range texts {
		if n += len(t); n >= size {
			return texts[:i+1]
		}
	}
	return texts
}

// benchmarkTexts runs encode over texts per iteration, reporting MB/s
// (SetBytes), the same from the thread's CPU time (cpu-MB/s, which a
// loaded machine disturbs less) and the CPU time per text.
func benchmarkTexts(b *testing.B, texts []string, encode func(string)) {
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		t0 := testutil.ThreadCPU()
		for _, t := range texts {
			encode(t)
		}
		cpu += testutil.ThreadCPU() - t0
	}
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(texts))/1e3, "cpu-µs/text")
	}
}

// BenchmarkDocument compares, on the first 4 MiB of the Markdown corpus's
// chunks, in one run: the simple implementation (strings.FieldsFunc, every
// token lowercased, looked up in the stop words, stemmed and hashed, a map
// by term); the encoder's byte loop and counting without its cache (the
// one-shot Document function); and the Encoder, with its cache:
//
//	go test -run '^$' -bench Document -benchtime 3x ./bm25
func BenchmarkDocument(b *testing.B) {
	texts := firstBytes(corpusChunks(b), 4<<20)
	enc, err := NewEncoder(English, DefaultAvgDL)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("simple", func(b *testing.B) {
		benchmarkTexts(b, texts, func(t string) { simple(English, t, DefaultAvgDL, false) })
	})
	b.Run("no-cache", func(b *testing.B) {
		benchmarkTexts(b, texts, func(t string) { Document(t) })
	})
	b.Run("encoder", func(b *testing.B) {
		benchmarkTexts(b, texts, func(t string) { enc.Document(t) })
	})
}

// BenchmarkCorpusChunks encodes every chunk of the Markdown corpus once
// per iteration with one Encoder, as the worker's Qdrant sink does:
// cpu-µs/text is the CPU time of one chunk's vector.
//
//	go test -run '^$' -bench CorpusChunks -benchtime 1x ./bm25
func BenchmarkCorpusChunks(b *testing.B) {
	texts := corpusChunks(b)
	enc, err := NewEncoder(English, DefaultAvgDL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(texts)), "chunks")
	benchmarkTexts(b, texts, func(t string) { enc.Document(t) })
}

// BenchmarkAdversarial runs the encoder over texts that defeat its cache
// (every word new, more distinct words than the cache holds) or its ASCII
// path (Greek), and one huge token. A super-linear cost would show as a
// rate far below the others.
func BenchmarkAdversarial(b *testing.B) {
	const size = 1 << 20
	rng := rand.New(rand.NewPCG(17, 18))
	var distinct, greek strings.Builder
	for i := 0; distinct.Len() < size; i++ {
		fmt.Fprintf(&distinct, "w%dx%d ", i, rng.Uint32())
	}
	for greek.Len() < size {
		greek.WriteString("Ο Σίσυφος κυλά τον βράχο ξανά και ξανά, ΣΊΣΥΦΟΣ. ")
	}
	for _, tc := range []struct{ name, text string }{
		{"distinct", distinct.String()},
		{"greek", greek.String()},
		{"one-token", strings.Repeat("a", size)},
		{"one-word", strings.Repeat("running ", size/8)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			enc, _ := NewEncoder(English, DefaultAvgDL)
			benchmarkTexts(b, []string{tc.text}, func(t string) { enc.Document(t) })
		})
	}
}

// BenchmarkQuery encodes short queries, with the one-shot function and
// with an Encoder.
func BenchmarkQuery(b *testing.B) {
	queries := []string{"how to rotate nats credentials", "JetStream consumer ack wait", "Kubernetes pod disruption budget", "σίσυφος"}
	enc, _ := NewEncoder(English, DefaultAvgDL)
	b.Run("Query", func(b *testing.B) { benchmarkTexts(b, queries, func(t string) { Query(t) }) })
	b.Run("Encoder.Query", func(b *testing.B) { benchmarkTexts(b, queries, func(t string) { enc.Query(t) }) })
}

// BenchmarkFastPaths times, over the tokens of the first 4 MiB of the
// Markdown corpus's chunks, each hand-written fast path against the
// simple version it stands for, the two in one loop (simple/fast is its
// gain; fast-ms is its time over the texts, to compare with
// BenchmarkDocument's no-cache and encoder):
//   - tokens: tokenEnd's ASCII table against decoding every character
//     and calling isAlnum;
//   - lower: lower's ASCII path against lowerUnicode for every token.
//
// go test -run '^$' -bench 'FastPaths|Document' -benchtime 3x ./bm25
func BenchmarkFastPaths(b *testing.B) {
	texts := firstBytes(corpusChunks(b), 4<<20)
	tokenEndSimple := func(text string, i int) int {
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isAlnum(r) {
				break
			}
			i += size
		}
		return i
	}
	walk := func(end func(string, int) int) {
		for _, t := range texts {
			for i := 0; i < len(t); {
				j := end(t, i)
				if j == i {
					_, size := utf8.DecodeRuneInString(t[i:])
					j = i + size
				}
				i = j
			}
		}
	}
	var toks []string
	for _, t := range texts {
		for i := 0; i < len(t); {
			j := tokenEnd(t, i)
			if j == i {
				_, size := utf8.DecodeRuneInString(t[i:])
				i += size
				continue
			}
			toks = append(toks, t[i:j])
			i = j
		}
	}
	for _, tok := range toks {
		if lower(tok) != lowerUnicode(tok) || tokenEnd(tok, 0) != tokenEndSimple(tok, 0) {
			b.Fatalf("fast and simple paths differ on %q", tok)
		}
	}
	cases := []struct {
		name         string
		fast, simple func()
	}{
		{"tokens", func() { walk(tokenEnd) }, func() { walk(tokenEndSimple) }},
		{"lower", func() {
			for _, t := range toks {
				lower(t)
			}
		}, func() {
			for _, t := range toks {
				lowerUnicode(t)
			}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var fast, simple time.Duration
			for b.Loop() {
				t := time.Now()
				tc.fast()
				fast += time.Since(t)
				t = time.Now()
				tc.simple()
				simple += time.Since(t)
			}
			b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
			b.ReportMetric(float64(fast.Microseconds())/1e3/float64(b.N), "fast-ms")
		})
	}
}
