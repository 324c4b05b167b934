package qdrantsink

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// sampleBytes bounds the samples the benchmarks read from the shared
// corpus, to keep them short on shared machines.
const sampleBytes = 4 << 20

// markdownSample returns the first Markdown files of the shared corpus, in
// path order, up to sampleBytes.
func markdownSample(b *testing.B) []chunking.Document {
	return corpusSample(b, "markdown", ".md")
}

// corpusSample returns the first files of the shared corpus folder dir
// whose names end in ext, in path order, up to sampleBytes.
func corpusSample(b *testing.B, dir, ext string) []chunking.Document {
	root := testutil.SharedDir(b, "corpus", dir)
	var paths []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ext) {
			paths = append(paths, p)
		}
		return nil
	})
	slices.Sort(paths)
	var docs []chunking.Document
	total := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, chunking.Document{Path: p, Content: data})
		if total += len(data); total >= sampleBytes {
			break
		}
	}
	return docs
}

func chunkAll(b *testing.B, c *markdown.Chunker, docs []chunking.Document) []chunking.Chunk {
	return chunkWith(b, c.Chunk, docs)
}

// chunkWith chunks docs one by one with chunk, skipping the documents it
// refuses (not every corpus file need be valid UTF-8).
func chunkWith(b *testing.B, chunk func(chunking.Document) ([]chunking.Chunk, []chunking.Warning, error), docs []chunking.Document) []chunking.Chunk {
	var out []chunking.Chunk
	for _, d := range docs {
		chunks, _, err := chunk(d)
		if err != nil {
			continue
		}
		out = append(out, chunks...)
	}
	return out
}

// BenchmarkBM25VsChunking measures, for each chunker over a sample of its
// corpus, the chunker and the BM25 encoding of its chunks (as the sink
// encodes them, with one bm25.Encoder), each as the CPU time of a locked
// thread (so a loaded machine does not distort the comparison), in
// separate phases with a GC before each; it reports the BM25 time as a
// percentage of the chunking time (bm25-%). The chunkers' own garbage
// collection runs on other threads and is not counted, which favours the
// chunkers. The email chunker reads its sample as one mailbox, as it
// reads a folder.
func BenchmarkBM25VsChunking(b *testing.B) {
	for _, tc := range []struct{ chunker, corpus, ext string }{
		{"markdown", "markdown", ".md"},
		{"twostep", "markdown", ".md"},
		{"email", "email/linux-man", ".eml"},
	} {
		b.Run(tc.chunker, func(b *testing.B) {
			entry, err := registry.Default().Lookup(tc.chunker)
			if err != nil {
				b.Fatal(err)
			}
			docs := corpusSample(b, tc.corpus, tc.ext)
			chunkDocs := func() []chunking.Chunk {
				c, err := entry.New()
				if err != nil {
					b.Fatal(err)
				}
				if mb, ok := c.(interface {
					ChunkMailbox([]chunking.Document) ([]chunking.Chunk, []chunking.Warning, error)
				}); ok {
					chunks, _, err := mb.ChunkMailbox(docs)
					if err != nil {
						b.Fatal(err)
					}
					return chunks
				}
				return chunkWith(b, c.Chunk, docs)
			}
			benchmarkBM25VsChunking(b, docs, chunkDocs)
		})
	}
}

func benchmarkBM25VsChunking(b *testing.B, docs []chunking.Document, chunkDocs func() []chunking.Chunk) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if testutil.ThreadCPU() == 0 {
		b.Skip("thread CPU time is measured on Linux only")
	}
	size := 0
	for _, d := range docs {
		size += len(d.Content)
	}
	var texts []string
	for _, ch := range chunkDocs() {
		texts = append(texts, ch.Content())
	}
	enc, err := bm25.NewEncoder(bm25.English, bm25.DefaultAvgDL)
	if err != nil {
		b.Fatal(err)
	}
	var chunkTime, bm25Time time.Duration
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		t0 := testutil.ThreadCPU()
		chunkDocs()
		chunkTime += testutil.ThreadCPU() - t0
		runtime.GC()
		t0 = testutil.ThreadCPU()
		for _, text := range texts {
			enc.Document(text)
		}
		bm25Time += testutil.ThreadCPU() - t0
	}
	b.ReportMetric(100*float64(bm25Time)/float64(chunkTime), "bm25-%")
	b.ReportMetric(float64(size)*float64(b.N)/chunkTime.Seconds()/1e6, "chunk-cpu-MB/s")
	b.ReportMetric(float64(size)*float64(b.N)/bm25Time.Seconds()/1e6, "bm25-cpu-MB/s")
}

// BenchmarkUpsert measures points/s written through the sink into the
// in-process Qdrant (bm25 vectors, no embedder) at each batch size: each
// op re-ingests one 512-chunk document as a new version (upsert, delete
// older, re-check).
func BenchmarkUpsert(b *testing.B) {
	var texts []string
	if docs := tryMarkdownSample(b); len(docs) > 0 {
		c, _ := markdown.New(markdown.DefaultConfig())
		for _, ch := range chunkAll(b, c, docs) {
			if len(texts) == 512 {
				break
			}
			texts = append(texts, ch.Content())
		}
	}
	for len(texts) < 512 {
		texts = append(texts, strings.Repeat(fmt.Sprintf("synthetic chunk %d with some words ", len(texts)), 20))
	}
	for _, batch := range []int{64, 128, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			srv := qdranttest.Start(b)
			records := sinktest.NewRecords()
			cfg := testConfig(srv)
			cfg.Batch = batch
			s, err := New(context.Background(), cfg, records, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			seq := uint64(0)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				seq++
				doc, chunks := sinktest.Version("bench.md", seq, texts...)
				records.Begin(doc.ID, doc.Seq)
				if err := s.Write(ctx, doc, chunks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/time.Since(start).Seconds(), "points/s")
		})
	}
}

// tryMarkdownSample is markdownSample without skipping when the corpus is
// absent.
func tryMarkdownSample(b *testing.B) []chunking.Document {
	root := filepath.Join(testutil.RepoRoot(b), "..", "shared", "corpus", "markdown")
	if _, err := os.Stat(root); err != nil {
		return nil
	}
	return markdownSample(b)
}

var _ worker.Sink = (*Sink)(nil)

var _ worker.SupersededSink = (*Sink)(nil)
