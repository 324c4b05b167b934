package qdrantsink

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	sink *Sink
	mu   sync.Mutex
	cond *sync.Cond
	done map[uint64]string // stream sequence → final outcome
	sent int
}

func newPipeline(b *testing.B) *pipeline {
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
	ctx := context.Background()
	top, err := worker.Setup(ctx, js, cfg)
	if err != nil {
		b.Fatal(err)
	}
	qd := qdranttest.Start(b)
	qcfg := DefaultConfig()
	qcfg.Addr = qd.Addr()
	sink, err := New(ctx, qcfg, worker.NewKVRecords(top.Docs), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	p := &pipeline{js: js, sink: sink, done: map[uint64]string{}}
	p.cond = sync.NewCond(&p.mu)
	w, err := worker.New(nc, js, top, worker.Options{
		Config: cfg, Sink: sink, NewChunker: registry.NewChunker,
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
// (JetStream, the worker, the Qdrant sink, the in-process Qdrant), once
// per iteration with each BM25 kernel set, alternating, and reports the
// throughput of each (wall clock and process CPU time; the CPU includes
// the in-process servers) and the assembly's gain end to end.
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
	p := newPipeline(b)
	p.ingest(b, ids, contents) // warm up: collection, vocabularies, records
	variants := []struct {
		name     string
		portable bool
	}{{"asm", false}, {"go", true}}
	wall := make([]time.Duration, len(variants))
	cpu := make([]time.Duration, len(variants))
	b.SetBytes(int64(size))
	for b.Loop() {
		for i, v := range variants {
			p.sink.bm25.portable = v.portable
			t0, c0 := time.Now(), testutil.ProcessCPU()
			p.ingest(b, ids, contents)
			wall[i] += time.Since(t0)
			cpu[i] += testutil.ProcessCPU() - c0
		}
	}
	mb := float64(size) * float64(b.N) / 1e6
	for i, v := range variants {
		b.ReportMetric(mb/wall[i].Seconds(), v.name+"-MB/s")
		b.ReportMetric(mb/cpu[i].Seconds(), v.name+"-cpu-MB/s")
	}
	b.ReportMetric(100*(float64(wall[1])/float64(wall[0])-1), "asm-gain-%")
	b.ReportMetric(100*(float64(cpu[1])/float64(cpu[0])-1), "asm-cpu-gain-%")
}
