package qdrantsink

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// pipeline is the whole ingest path in one process: a JetStream server,
// the worker's topology, a worker chunking with the registry's chunkers
// and writing through the Qdrant sink into the in-process Qdrant.
type pipeline struct {
	js   jetstream.JetStream
	qd   *qdranttest.Server
	mu   sync.Mutex
	cond *sync.Cond
	done map[uint64]worker.Outcome // stream sequence → final outcome
	sent int
}

// newPipeline starts a pipeline whose worker processes concurrency
// documents at once and whose sink lets points wait linger for others.
func newPipeline(b *testing.B, concurrency int, linger time.Duration) *pipeline {
	b.Helper()
	ns := jstest.Start(b, b.TempDir(), -1)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	cfg.Concurrency = concurrency
	ctx := context.Background()
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		b.Fatal(err)
	}
	qd := qdranttest.Start(b)
	qcfg := DefaultConfig()
	qcfg.Addr, qcfg.Linger = qd.Addr(), linger
	sink, err := New(ctx, qcfg, worker.NewKVRecords(top.Docs), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	p := &pipeline{js: js, qd: qd, done: map[uint64]worker.Outcome{}}
	p.cond = sync.NewCond(&p.mu)
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg, Sink: sink,
		OnResult: func(r worker.Result) {
			if !r.Final() {
				return
			}
			p.mu.Lock()
			p.done[r.StreamSeq] = r.Outcome
			p.cond.Broadcast()
			p.mu.Unlock()
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := w.Run(runCtx); err != nil {
			b.Errorf("worker: %v", err)
		}
	}()
	b.Cleanup(func() { stop(); <-stopped })
	return p
}

// ingest publishes every document as a new version and waits until the
// worker has acked them all.
func (p *pipeline) ingest(b *testing.B, ids []string, contents [][]byte) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seqs := make([]uint64, len(ids))
	for i, id := range ids {
		req := messages.IngestRequest{V: messages.Version, ID: id, Content: contents[i]}
		data, err := messages.EncodeIngest(&req, messages.ContentTypeMsgpack)
		if err != nil {
			b.Fatal(err)
		}
		p.sent++
		m := nats.NewMsg("ingest.bench")
		m.Data = data
		m.Header.Set(messages.HeaderContentType, messages.ContentTypeMsgpack)
		m.Header.Set(messages.HeaderMsgID, fmt.Sprintf("%s@%d", id, p.sent))
		ack, err := p.js.PublishMsg(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		seqs[i] = ack.Sequence
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range seqs {
		for p.done[s] == "" {
			p.cond.Wait()
		}
		if o := p.done[s]; o != worker.OutcomeAcked {
			b.Fatalf("sequence %d: %s", s, o)
		}
	}
}

// BenchmarkPipeline runs the Markdown sample through the whole pipeline
// (JetStream, the worker, the Qdrant sink, the in-process Qdrant), each
// document as a new version per iteration, and reports its throughput by
// the wall clock and by the process's CPU time (which includes the
// in-process servers), and the points per upsert request and requests per
// 1,000 points. It runs twice: "alone", GOMAXPROCS documents at once and
// no linger, so that each document's points mostly leave in requests of
// their own, and "shared", with the documents in flight cmd/worker sets
// (Config.DocumentsInFlight) and the default linger. It also encodes the
// sample's chunks with a warm bm25.Encoder on its own thread and reports
// that CPU time as a share of the pipeline's (bm25-%): no change to the
// encoder can gain more than that end to end, and no more is saved by
// letting Qdrant compute the vectors (CHUNKSTREAM_BM25=qdrant). Run it
// alone:
//
//	go test -run '^$' -bench Pipeline -benchtime 3x ./worker/qdrantsink
func BenchmarkPipeline(b *testing.B) {
	docs := markdownSample(b)
	root := testutil.SharedDir(b, "corpus", "markdown")
	ids := make([]string, len(docs))
	contents := make([][]byte, len(docs))
	size := 0
	for i, d := range docs {
		ids[i], _ = filepath.Rel(root, d.Path)
		contents[i] = d.Content
		size += len(d.Content)
	}
	for _, run := range []struct {
		name        string
		concurrency int
		linger      time.Duration
	}{
		{"alone", runtime.GOMAXPROCS(0), 0},
		{"shared", DefaultConfig().DocumentsInFlight(), DefaultConfig().Linger},
	} {
		b.Run(run.name, func(b *testing.B) {
			p := newPipeline(b, run.concurrency, run.linger)
			p.ingest(b, ids, contents) // warm up: the collection, the vocabularies, the records
			var cpu time.Duration
			p.qd.ResetCalls()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				c0 := testutil.ProcessCPU()
				p.ingest(b, ids, contents)
				cpu += testutil.ProcessCPU() - c0
			}
			b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
			requests, points := 0, 0
			for _, c := range p.qd.Calls() {
				if c.Upserts() {
					requests++
					points += c.Points
				}
			}
			b.ReportMetric(float64(points)/float64(requests), "points/request")
			b.ReportMetric(1000*float64(requests)/float64(points), "requests/1000points")
			if cpu == 0 {
				return // no CPU times off Linux
			}
			b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
			b.StopTimer()
			b.ReportMetric(100*float64(encodeCPU(b, docs, b.N))/float64(cpu), "bm25-%")
		})
	}
}

// encodeCPU returns the thread CPU time of encoding the chunks of docs
// (chunked as the worker chunks Markdown) n times with a warm encoder.
func encodeCPU(b *testing.B, docs []chunking.Document, n int) time.Duration {
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, d := range docs {
		chunks, _, err := md.Chunk(d)
		if err != nil {
			continue
		}
		for _, c := range chunks {
			texts = append(texts, c.Content())
		}
	}
	enc, err := bm25.NewEncoder(bm25.English, bm25.DefaultAvgDL)
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, t := range texts {
		enc.Document(t)
	}
	t0 := testutil.ThreadCPU()
	for range n {
		for _, t := range texts {
			enc.Document(t)
		}
	}
	return testutil.ThreadCPU() - t0
}
