package qdrantsink_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// The modelled embeddings server of the benchmarks: a request of n inputs
// takes serverFixed + n·serverPerInput, at most serverConcurrent at once.
// With requests of B inputs its capacity is
// serverConcurrent·B / (serverFixed + B·serverPerInput) inputs/s.
const (
	serverFixed      = 20 * time.Millisecond
	serverPerInput   = 200 * time.Microsecond
	serverConcurrent = 4
	// benchDims is small so that encoding vectors in the test servers
	// costs little of the machine the pipeline shares with them.
	benchDims  = 64
	benchModel = "bench-model"
	// benchBatch is CHUNKSTREAM_EMBED_BATCH in the benchmarks.
	benchBatch = 64
	// benchDocs is the size of the corpus sample, spread over the corpus.
	benchDocs = 1000
)

// capacity is the modelled server's throughput in inputs/s with requests
// of batch inputs.
func capacity(batch float64) float64 {
	return serverConcurrent * batch / (serverFixed.Seconds() + batch*serverPerInput.Seconds())
}

// corpusCopy copies benchDocs Markdown files of the shared corpus, taken
// at an even stride in path order so that every part of it is
// represented, into a temporary folder, keeping their relative paths.
func corpusCopy(b *testing.B) string {
	root := testutil.SharedDir(b, "corpus", "markdown")
	var paths []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return nil
	})
	slices.Sort(paths)
	dir := b.TempDir()
	stride := max(1, len(paths)/benchDocs)
	for i := 0; i < len(paths) && i/stride < benchDocs; i += stride {
		data, err := os.ReadFile(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		rel, _ := filepath.Rel(root, paths[i])
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// ingestEnv is one pipeline: an in-process JetStream server, a worker
// writing through the Qdrant sink into the in-process Qdrant with a dense
// vector, and the modelled embeddings server.
type ingestEnv struct {
	b      *testing.B
	nc     *nats.Conn
	js     jetstream.JetStream
	api    *embedtest.Server
	finals atomic.Int64 // requests finished (acked or dead-lettered)
	acked  atomic.Int64
	chunks atomic.Int64
}

// newIngestEnv starts a pipeline; batched runs the embedder's Run (the
// chunks of all documents in flight share requests), otherwise every
// document sends its own requests, as before batching across documents.
func newIngestEnv(b *testing.B, batched bool) *ingestEnv {
	return newIngestEnvWith(b, batched, embedtest.Config{Dims: benchDims, Fixed: serverFixed, PerInput: serverPerInput, MaxConcurrent: serverConcurrent, Usage: true})
}

func newIngestEnvWith(b *testing.B, batched bool, server embedtest.Config) *ingestEnv {
	e := &ingestEnv{b: b}
	ns := jstest.Start(b, b.TempDir(), -1)
	var err error
	if e.nc, err = nats.Connect(ns.ClientURL()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.nc.Close)
	if e.js, err = jetstream.New(e.nc); err != nil {
		b.Fatal(err)
	}
	cfg := worker.DefaultConfig()
	cfg.MetricsAddr = ""
	// Documents in flight: enough for the embedder's requests in flight
	// and the one filling to be full (as cmd/worker sets it), the same in
	// both modes.
	cfg.Concurrency = (serverConcurrent + 1) * benchBatch
	ctx := context.Background()
	top, err := worker.Setup(ctx, e.js, cfg)
	if err != nil {
		b.Fatal(err)
	}
	e.api = embedtest.Start(b, server)
	ecfg := embed.DefaultConfig()
	ecfg.URL, ecfg.Model, ecfg.Batch, ecfg.Concurrency = e.api.URL(), benchModel, benchBatch, serverConcurrent
	ecfg.MaxInputChars = 1 << 20
	client, err := embed.New(ecfg, embed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if batched {
		runEmbedder(b, client)
	}
	qd := qdranttest.Start(b)
	qcfg := qdrantsink.DefaultConfig()
	qcfg.Addr = qd.Addr()
	sink, err := qdrantsink.New(ctx, qcfg, worker.NewKVRecords(top.Docs), client, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	w, err := worker.New(e.nc, e.js, top, worker.Options{
		Config: cfg, Sink: sink,
		OnResult: func(r worker.Result) {
			if r.Final() {
				e.finals.Add(1)
			}
			if r.Outcome == worker.OutcomeAcked {
				e.acked.Add(1)
				e.chunks.Add(int64(r.Chunks))
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(runCtx); err != nil {
			b.Errorf("Run: %v", err)
		}
	}()
	b.Cleanup(func() { stop(); <-done })
	return e
}

// ingestResult is what one backfill cost.
type ingestResult struct {
	sent, acked, chunks int
	elapsed             time.Duration
	// cpu is the process's CPU time during the backfill: the whole
	// pipeline's (producer, NATS server, worker, both test servers), which
	// all run in this process.
	cpu   time.Duration
	stats embedtest.Stats // of the server, during the backfill
}

// backfill sends the folder with the producer (force: every document,
// else those changed since their done record) and waits until the worker
// finished every request sent.
func (e *ingestEnv) backfill(dir string, force bool) ingestResult {
	e.b.Helper()
	before := e.api.Stats()
	finals0, acked0, chunks0 := e.finals.Load(), e.acked.Load(), e.chunks.Load()
	start, cpu0 := time.Now(), testutil.ProcessCPU()
	s, err := producer.New(e.nc, e.js, producer.Options{Subject: "ingest.bench"}).Backfill(context.Background(), producer.BackfillOptions{Paths: []string{dir}, Force: force})
	if err != nil || s.Failed > 0 {
		e.b.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for e.finals.Load()-finals0 < int64(s.Sent) {
		if time.Now().After(deadline) {
			e.b.Fatalf("%d of %d requests finished", e.finals.Load()-finals0, s.Sent)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := ingestResult{
		sent: s.Sent, acked: int(e.acked.Load() - acked0), chunks: int(e.chunks.Load() - chunks0),
		elapsed: time.Since(start), cpu: testutil.ProcessCPU() - cpu0, stats: e.api.Stats(),
	}
	r.stats.Requests -= before.Requests
	r.stats.Answered -= before.Answered
	r.stats.Inputs -= before.Inputs
	r.stats.Tokens -= before.Tokens
	r.stats.Throttled -= before.Throttled
	return r
}

// BenchmarkEmbedIngest sends a sample of the Markdown corpus through
// JetStream into the in-process Qdrant with a dense vector, against the
// modelled embeddings server (20 ms + 0.2 ms per input, 4 requests at
// once), in each iteration into three fresh pipelines with the same
// settings (documents in flight included):
//
//   - per-doc: each document's chunks in requests of their own, the
//     behaviour before batching across documents (the client without Run;
//     its 4 requests in flight are that behaviour's best case, since the
//     server answers more with 429);
//   - batched: Run gathers the chunks of all documents in flight;
//   - ceiling: batched against a server that answers at once, which
//     measures what the rest of the pipeline (NATS, chunking, the Qdrant
//     double, the test servers, all on this machine) allows.
//
// It reports documents/s of each, the speedup of batched over per-doc,
// the inputs per request, and the batched inputs/s against the server's
// modelled capacity with requests of B = CHUNKSTREAM_EMBED_BATCH inputs,
// 4·B/(20 ms + 0.2 ms·B), and against the ceiling; with several
// iterations, the medians.
//
// Documents/s count wall-clock time, so they fall when other processes
// take the machine. The CPU time the process used per document does not
// (much), and the pipeline all runs in this process: cpu-ms/doc of the
// ceiling, with GOMAXPROCS processors, bounds what this process could do
// with the machine to itself, reported as cpu-bound-docs/s and, times
// the chunks per document, cpu-bound-inputs/s next to the server's
// capacity. (CPU time is 0 outside Linux, and so are these figures.)
//
//	go test -run '^$' -bench EmbedIngest -benchtime 3x ./worker/qdrantsink
func BenchmarkEmbedIngest(b *testing.B) {
	dir := corpusCopy(b)
	// Each iteration runs the three pipelines back to back, starting with
	// a different one each time; the medians over the iterations are
	// reported, so a machine shared with other work biases no pipeline.
	pipelines := []func() ingestResult{
		func() ingestResult { return newIngestEnv(b, false).backfill(dir, true) },
		func() ingestResult { return newIngestEnv(b, true).backfill(dir, true) },
		func() ingestResult {
			return newIngestEnvWith(b, true, embedtest.Config{Dims: benchDims}).backfill(dir, true)
		},
	}
	var (
		alone, batched, ceiling, speedup, inputs, perReqAlone, perReqBatched []float64
		cpuAlone, cpuBatched, cpuCeiling                                     []float64
		last                                                                 ingestResult
		it                                                                   int
	)
	for b.Loop() {
		rs := make([]ingestResult, len(pipelines))
		for k := range pipelines {
			i := (it + k) % len(pipelines)
			rs[i] = pipelines[i]()
		}
		it++
		for _, r := range rs {
			if r.stats.Throttled > 0 || r.acked == 0 {
				b.Fatalf("%+v: throttled or nothing acked", r)
			}
		}
		rate := func(r ingestResult) float64 { return float64(r.sent) / r.elapsed.Seconds() }
		alone = append(alone, rate(rs[0]))
		batched = append(batched, rate(rs[1]))
		ceiling = append(ceiling, rate(rs[2]))
		speedup = append(speedup, rate(rs[1])/rate(rs[0]))
		inputs = append(inputs, float64(rs[1].stats.Inputs)/rs[1].elapsed.Seconds())
		perReqAlone = append(perReqAlone, float64(rs[0].stats.Inputs)/float64(rs[0].stats.Answered))
		perReqBatched = append(perReqBatched, float64(rs[1].stats.Inputs)/float64(rs[1].stats.Answered))
		cpuMS := func(r ingestResult) float64 { return float64(r.cpu.Microseconds()) / 1000 / float64(r.sent) }
		cpuAlone = append(cpuAlone, cpuMS(rs[0]))
		cpuBatched = append(cpuBatched, cpuMS(rs[1]))
		cpuCeiling = append(cpuCeiling, cpuMS(rs[2]))
		last = rs[1]
	}
	b.ReportMetric(float64(last.sent), "docs")
	b.ReportMetric(float64(last.chunks)/float64(last.acked), "chunks/doc")
	b.ReportMetric(median(alone), "per-doc-docs/s")
	b.ReportMetric(median(batched), "batched-docs/s")
	b.ReportMetric(median(ceiling), "ceiling-docs/s")
	b.ReportMetric(median(speedup), "speedup-x")
	b.ReportMetric(median(perReqAlone), "per-doc-inputs/req")
	b.ReportMetric(median(perReqBatched), "batched-inputs/req")
	b.ReportMetric(median(inputs), "batched-inputs/s")
	b.ReportMetric(capacity(benchBatch), "capacity-inputs/s")
	b.ReportMetric(100*median(inputs)/capacity(benchBatch), "capacity-%")
	b.ReportMetric(100*median(batched)/median(ceiling), "of-ceiling-%")
	b.ReportMetric(median(cpuAlone), "per-doc-cpu-ms/doc")
	b.ReportMetric(median(cpuBatched), "batched-cpu-ms/doc")
	b.ReportMetric(median(cpuCeiling), "ceiling-cpu-ms/doc")
	if c := median(cpuCeiling); c > 0 {
		bound := float64(runtime.GOMAXPROCS(0)) * 1000 / c
		b.ReportMetric(bound, "cpu-bound-docs/s")
		b.ReportMetric(bound*float64(last.chunks)/float64(last.acked), "cpu-bound-inputs/s")
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// editedCopy inserts one paragraph in the middle of every tenth document
// of dir (in path order) and returns, over those documents, the number of
// chunks whose text is new (the worker's chunking before and after).
func editedCopy(b *testing.B, dir string) (edited, changed int) {
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	slices.Sort(paths)
	c, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		b.Fatal(err)
	}
	texts := func(id string, content []byte) (map[string]bool, []chunking.Chunk) {
		chunks, _, err := c.Chunk(chunking.Document{Path: id, Content: content})
		if err != nil {
			return nil, nil
		}
		set := map[string]bool{}
		for _, ch := range chunks {
			set[ch.Content()] = true
		}
		return set, chunks
	}
	for i := 0; i < len(paths); i += 10 {
		old, err := os.ReadFile(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		at := strings.Index(string(old[len(old)/2:]), "\n\n")
		if at < 0 {
			at = len(old) - len(old)/2
		}
		at += len(old) / 2
		para := fmt.Sprintf("\n\nAn inserted paragraph, number %d, written for the re-ingest benchmark: it says nothing the document did not, but it says it here.", i)
		content := append(append(append([]byte{}, old[:at]...), para...), old[at:]...)
		if err := os.WriteFile(paths[i], content, 0o644); err != nil {
			b.Fatal(err)
		}
		id, _ := filepath.Rel(dir, paths[i])
		before, _ := texts(id, old)
		_, after := texts(id, content)
		for _, ch := range after {
			if !before[ch.Content()] {
				changed++
			}
		}
		edited++
	}
	return edited, changed
}

// BenchmarkEmbedReingest ingests the corpus sample (batched), then edits
// one document in ten (one paragraph inserted in the middle) and sends
// the folder again: only the edited documents go, and only their chunks
// whose text changed should be embedded (the sink reuses the vectors of
// the others from Qdrant). Then it sends everything again unchanged, as
// the producer's -force does: nothing should be embedded. It reports the
// inputs embedded against the changed chunks, and the inputs embedded by
// the forced re-send.
//
//	go test -run '^$' -bench EmbedReingest -benchtime 1x ./worker/qdrantsink
func BenchmarkEmbedReingest(b *testing.B) {
	var (
		first, edit, force ingestResult
		edited, changed    int
	)
	for b.Loop() {
		dir := corpusCopy(b)
		e := newIngestEnv(b, true)
		first = e.backfill(dir, false)
		edited, changed = editedCopy(b, dir)
		edit = e.backfill(dir, false)
		force = e.backfill(dir, true)
	}
	if edit.sent != edited {
		b.Errorf("the edit re-sent %d documents, want the %d edited", edit.sent, edited)
	}
	b.ReportMetric(float64(first.sent), "docs")
	b.ReportMetric(float64(first.stats.Inputs), "first-inputs")
	b.ReportMetric(float64(edited), "edited-docs")
	b.ReportMetric(float64(edit.chunks), "edited-docs-chunks")
	b.ReportMetric(float64(changed), "changed-chunks")
	b.ReportMetric(float64(edit.stats.Inputs), "edit-inputs")
	b.ReportMetric(100*float64(edit.stats.Inputs-changed)/float64(changed), "edit-excess-%")
	b.ReportMetric(float64(force.sent), "force-docs")
	b.ReportMetric(float64(force.stats.Inputs), "force-inputs")
}
