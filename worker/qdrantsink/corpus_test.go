package qdrantsink

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
	"github.com/chunkstream/chunkstream/worker/sinktest"
)

// TestCorpusVectors writes every chunk of the Markdown corpus (every 64th
// document; all of them with CHUNKSTREAM_TEST_FULL=1) through the sink, computing the bm25 vectors locally and letting Qdrant (the
// double) compute them, and checks that every stored vector is, bit for
// bit, package bm25's document vector of the chunk's text, the vector
// bm25's TestOracleCorpus finds equal to the independent JavaScript
// implementation's for every chunk of the same corpus (indices exact,
// values within one binary32 ulp); so the points carry those vectors.
func TestCorpusVectors(t *testing.T) {
	root := testutil.SharedDir(t, "corpus", "markdown")
	paths, _, err := chunking.WalkFolder(context.Background(), root, []string{".md"})
	if err != nil {
		t.Fatal(err)
	}
	every := 64 // a sample; with CHUNKSTREAM_TEST_FULL=1 every document
	if testutil.Enabled(testutil.Full) {
		every = 1
		if raceDetector {
			every = 8 // the race detector makes the whole corpus slow
		}
	}
	for i := range paths {
		if i%every == 0 {
			paths[i/every] = paths[i]
		}
	}
	paths = paths[:(len(paths)+every-1)/every]
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([][]worker.Chunk, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := md.Chunk(chunking.Document{Path: p, Content: data})
		if err != nil {
			continue // the worker dead-letters it (invalid UTF-8)
		}
		for pos, c := range chunks {
			docs[i] = append(docs[i], worker.Chunk{ID: messages.ChunkID(p, pos), Position: pos, Chunk: c})
		}
	}
	enc, err := bm25.NewEncoder(bm25.English, bm25.DefaultAvgDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{BM25Local, BM25Qdrant} {
		t.Run(mode, func(t *testing.T) {
			srv := qdranttest.Start(t)
			records := sinktest.NewRecords()
			cfg := testConfig(srv)
			cfg.BM25 = mode
			s := newSinkWith(t, srv, cfg, records)
			work := make(chan int)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for i := range work {
						doc := worker.Doc{ID: paths[i], Seq: uint64(i + 1), Op: worker.OpUpsert, First: true}
						records.Begin(doc.ID, doc.Seq)
						if err := s.Write(context.Background(), doc, docs[i]); err != nil {
							t.Errorf("Write(%s): %v", doc.ID, err)
						}
					}
				})
			}
			for i := range paths {
				work <- i
			}
			close(work)
			wg.Wait()
			chunks, written, withVector := 0, 0, 0
			for _, d := range docs {
				chunks += len(d)
				if len(d) > 0 {
					written++
				}
			}
			pts := srv.Points(cfg.Collection)
			if len(pts) != chunks {
				t.Fatalf("%d points for %d chunks", len(pts), chunks)
			}
			for _, p := range pts {
				text := p.GetPayload()[FieldContent].GetStringValue()
				want := enc.Document(text)
				got := p.GetVectors().GetVectors().GetVectors()[VectorBM25].GetSparse()
				same := len(got.GetIndices()) == len(want.Indices) && len(got.GetValues()) == len(want.Values)
				for j := 0; same && j < len(want.Indices); j++ {
					same = got.GetIndices()[j] == want.Indices[j] && math.Float32bits(got.GetValues()[j]) == math.Float32bits(want.Values[j])
				}
				if !same {
					t.Fatalf("point %s: bm25 = %v, want bm25.Document of its text %v", p.GetId().GetUuid(), got, want)
				}
				if len(want.Indices) > 0 {
					withVector++
				}
			}
			t.Logf("%s: %d documents, %d points, %d with a bm25 vector, each bm25's vector of its text", mode, written, len(pts), withVector)
		})
	}
}
