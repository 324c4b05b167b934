package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/chunking/registry/registrytest"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// nestedList is a Markdown list nested depth levels deep, one level more
// per line (its size grows with the square of the depth: 2,400 levels
// are 5.8 MB).
func nestedList(depth int) []byte {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat("  ", i))
		fmt.Fprintf(&b, "- level %d\n", i+1)
	}
	return []byte(b.String())
}

// streamFunc is a chunking.StreamChunker made of a function.
type streamFunc func(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error)

func (f streamFunc) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return f(ctx, doc, yield)
}

func (f streamFunc) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	var out []chunking.Chunk
	w, err := f(context.Background(), doc, func(c chunking.Chunk) bool { out = append(out, c); return true })
	return out, w, err
}

// budgetChunkers are chunkersWithFaults plus chunkers that need more than
// any budget, counting their calls:
//   - "spin" works (on the CPU) until its context ends, as every
//     StreamChunker of this module does;
//   - "stubborn" ignores its context: it sleeps for its "sleep_ms" option,
//     then chunks as markdown;
//   - "endless" hands out chunks until yield refuses one (a million at
//     most).
type budgetChunkers struct {
	running atomic.Int64 // spin and stubborn calls under way
	spins   atomic.Int64 // spin calls started
	yields  atomic.Int64 // chunks endless handed out
}

// registry returns the default registry with the fault chunkers and
// these.
func (b *budgetChunkers) registry() *registry.Registry {
	md, err := registry.Default().NewChunker("markdown", nil)
	if err != nil {
		panic(err)
	}
	return registrytest.With(append(faultEntries(),
		registrytest.Func("spin", func(registrytest.Config) (chunking.Chunker, error) {
			return streamFunc(func(ctx context.Context, _ chunking.Document, _ func(chunking.Chunk) bool) ([]chunking.Warning, error) {
				b.running.Add(1)
				defer b.running.Add(-1)
				b.spins.Add(1)
				for n := 0; ; n++ {
					if n%1024 == 0 && ctx.Err() != nil {
						return nil, fmt.Errorf("spin: %w", ctx.Err())
					}
				}
			}), nil
		}),
		registrytest.Func("stubborn", func(c registrytest.Config) (chunking.Chunker, error) {
			return streamFunc(func(_ context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
				b.running.Add(1)
				defer b.running.Add(-1)
				time.Sleep(time.Duration(c.SleepMS) * time.Millisecond)
				// Chunked with a context that never ends: this chunker does
				// not watch the one it was given.
				return md.(chunking.StreamChunker).ChunkFunc(context.Background(), doc, yield)
			}), nil
		}),
		registrytest.Func("endless", func(registrytest.Config) (chunking.Chunker, error) {
			return streamFunc(func(_ context.Context, _ chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
				for i := range 1_000_000 {
					b.yields.Add(1)
					if !yield(chunking.NewChunk(fmt.Sprintf("chunk %d", i), nil)) {
						break
					}
				}
				return nil, nil
			}), nil
		}),
	)...)
}

// TestOneDocumentCannotHoldAWorker: documents that need more than the
// chunking time budget go through a worker with one processor: a list
// nested 2,400 deep, a document whose chunker works until its context
// ends, and one whose chunker ignores its context and returns late. Each
// is dead-lettered too_complex with the figures (the nested list may
// instead be chunked in time on a fast machine: either is right), every
// chunker call has returned, and the small document queued behind them
// is processed.
func TestOneDocumentCannotHoldAWorker(t *testing.T) {
	start := time.Now()
	cfg := testConfig()
	cfg.Concurrency = 1
	cfg.MaxChunkTime = 200 * time.Millisecond
	// The requests fetched with the first wait in the client while the
	// others are chunked (the nested list's parse cannot be interrupted
	// and takes seconds under the race detector): a long AckWait keeps
	// them from being redelivered meanwhile, so each is chunked once.
	cfg.AckWait = 2 * time.Minute
	e := newEnv(t, cfg)
	bc := &budgetChunkers{}
	w, res, _ := e.startWorker(worker.Options{Chunkers: bc.registry()})

	deep := nestedList(2400)
	small := []byte("# Small\n\nA short document behind the slow ones.\n")
	// Over the server's payload limit: stored as an object, as the
	// producer does.
	objs, err := e.js.ObjectStore(context.Background(), cfg.ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := objs.PutBytes(context.Background(), messages.ContentVersion(deep), deep); err != nil {
		t.Fatal(err)
	}
	deepSeq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "deep.md",
		ContentRef: &messages.ContentRef{Bucket: cfg.ObjectsBucket, Name: messages.ContentVersion(deep)}}, "")
	spinSeq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "spin.md", Chunker: "spin", Content: []byte("x")}, "")
	stubbornSeq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "stubborn.md", Chunker: "stubborn",
		Options: map[string]any{"sleep_ms": 1000}, Content: []byte("# S\n\nx")}, "")
	smallSeq := e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "small.md", Content: small}, "")
	testutil.WaitFor(t, 3*time.Minute, "every request final", func() bool { return len(res.finals()) == 4 })

	finals := res.finals()
	dls := e.deadLetters()
	tooComplex := func(name string, seq uint64, figures ...string) {
		t.Helper()
		r, dl := finals[seq], dls[seq]
		if r.Outcome != worker.OutcomePermanent || r.Cause != fault.CauseTooComplex {
			t.Errorf("%s: outcome %s, cause %q (%v), want permanent too_complex", name, r.Outcome, r.Cause, r.Err)
		}
		if dl.Kind != messages.KindPermanent || dl.Cause != fault.CauseTooComplex || dl.Deliveries != 1 {
			t.Errorf("%s: dead letter %+v, want permanent too_complex after one delivery", name, dl)
		}
		for _, f := range append(figures, "too complex", "200ms budget (CHUNKSTREAM_MAX_CHUNK_TIME)") {
			if !strings.Contains(dl.Reason, f) {
				t.Errorf("%s: dead letter reason %q lacks %q", name, dl.Reason, f)
			}
		}
		t.Logf("%s: %s", name, dl.Reason)
	}
	tooComplex("spin", spinSeq, "stopped after", "chunks made: 0")
	tooComplex("stubborn", stubbornSeq, "the chunker returned after", "chunks made: 1")
	want := map[string][]byte{"small.md": small}
	switch r := finals[deepSeq]; r.Outcome {
	case worker.OutcomeAcked:
		t.Logf("nested list: chunked within the budget into %d chunks", r.Chunks)
		want["deep.md"] = deep
	default:
		tooComplex("nested list", deepSeq, fmt.Sprintf("the %d-byte document", len(deep)), "stopped after")
	}
	if r := finals[smallSeq]; r.Outcome != worker.OutcomeAcked {
		t.Errorf("small document behind them: %s (%v), want acked", r.Outcome, r.Err)
	}
	checkComplete(t, e.records(), want)
	if n := bc.running.Load(); n != 0 {
		t.Errorf("%d chunker calls still running, want every call returned", n)
	}
	if n := bc.spins.Load(); n != 1 {
		t.Errorf("spin chunker called %d times, want once (a dead letter is not retried)", n)
	}
	if got, want := metricValue(t, w.Metrics().DeadLetters.WithLabelValues(string(messages.KindPermanent), string(fault.CauseTooComplex))), float64(len(dls)); got != want {
		t.Errorf("too_complex dead letters counted %v, want %v", got, want)
	}
	if n := e.pendingIngest(); n != 0 {
		t.Errorf("INGEST holds %d requests, want 0", n)
	}
	t.Logf("whole test: %v", time.Since(start).Round(time.Millisecond))
}

// TestChunkCountAndSizeBounds: a document whose chunker gives more than
// MaxChunksPerDoc chunks is dead-lettered too_complex, its chunker
// stopped at the first chunk over; a request asking for chunks smaller
// than the worker accepts is invalid_options naming the option, the value
// and the bound; requests within the bounds are processed.
func TestChunkCountAndSizeBounds(t *testing.T) {
	cfg := testConfig()
	cfg.MaxChunksPerDoc = 10
	e := newEnv(t, cfg)
	bc := &budgetChunkers{}
	_, res, _ := e.startWorker(worker.Options{Chunkers: bc.registry()})

	long := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog again. ", 40))
	tiny := []byte("# Tiny\n\nSmall enough.\n")
	cases := []struct {
		name, chunker string
		opts          map[string]any
		content       []byte
		cause         fault.Cause // "" for acked
		reason        []string
	}{
		{"endless chunker", "endless", nil, []byte("x"), fault.CauseTooComplex,
			[]string{"too complex: the 1-byte document gives more than 10 chunks (CHUNKSTREAM_MAX_CHUNKS_PER_DOC): stopped at chunk 11"}},
		{"small chunks of a long document", "", map[string]any{"max_char": 32, "chunk_overlap": 0, "min_char": 0}, long, fault.CauseTooComplex,
			[]string{fmt.Sprintf("the %d-byte document gives more than 10 chunks", len(long))}},
		{"max_char below the bound", "", map[string]any{"max_char": 8, "chunk_overlap": 0}, tiny, fault.CauseInvalidOptions,
			[]string{"max_char 8 is below the smallest chunk size this worker accepts, 32 characters (CHUNKSTREAM_MIN_CHUNK_CHARS)"}},
		{"max_char below the bound, as a string", "markdown", map[string]any{"max_char": "1", "chunk_overlap": "0"}, tiny, fault.CauseInvalidOptions,
			[]string{"max_char 1 is below"}},
		{"max_chunk_size below the bound", "twostep", map[string]any{"max_chunk_size": 2}, tiny, fault.CauseInvalidOptions,
			[]string{"max_chunk_size 2 is below the smallest chunk size this worker accepts, 8 words (CHUNKSTREAM_MIN_CHUNK_WORDS)"}},
		{"smallest accepted max_char", "", map[string]any{"max_char": 32, "chunk_overlap": 0, "min_char": 0}, tiny, "", nil},
		{"smallest accepted max_chunk_size", "twostep", map[string]any{"max_chunk_size": 8}, tiny, "", nil},
	}
	seqs := map[uint64]int{}
	for i, c := range cases {
		seqs[e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("b/%d.md", i), Chunker: c.chunker,
			Options: c.opts, Content: c.content}, "")] = i
	}
	testutil.WaitFor(t, 60*time.Second, "every request final", func() bool { return len(res.finals()) == len(cases) })
	dls := e.deadLetters()
	for seq, r := range res.finals() {
		c := cases[seqs[seq]]
		if c.cause == "" {
			if r.Outcome != worker.OutcomeAcked || r.Chunks == 0 {
				t.Errorf("%s: %s with %d chunks (%v), want acked", c.name, r.Outcome, r.Chunks, r.Err)
			}
			continue
		}
		if r.Outcome != worker.OutcomePermanent || r.Cause != c.cause {
			t.Errorf("%s: %s, cause %q (%v), want permanent %s", c.name, r.Outcome, r.Cause, r.Err, c.cause)
		}
		if dls[seq].Cause != c.cause {
			t.Errorf("%s: dead letter cause %q, want %q", c.name, dls[seq].Cause, c.cause)
		}
		for _, s := range c.reason {
			if !strings.Contains(dls[seq].Reason, s) {
				t.Errorf("%s: dead letter reason %q lacks %q", c.name, dls[seq].Reason, s)
			}
		}
	}
	if n := bc.yields.Load(); n != 11 {
		t.Errorf("the endless chunker handed out %d chunks, want 11 (stopped at the first one over the limit)", n)
	}
}

// TestShutdownIsNotABudget: a document still chunking when the drain
// timeout ends is abandoned (NAKed for another worker), not dead-lettered
// as too complex, and its chunker, which watches its context, returns.
func TestShutdownIsNotABudget(t *testing.T) {
	cfg := testConfig()
	cfg.DrainTimeout = 200 * time.Millisecond
	cfg.MaxChunkTime = time.Hour
	e := newEnv(t, cfg)
	bc := &budgetChunkers{}
	w, res, stop := e.startWorker(worker.Options{Chunkers: bc.registry()})
	e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: "spin.md", Chunker: "spin", Content: []byte("x")}, "")
	testutil.WaitFor(t, time.Minute, "in flight", func() bool { return metricValue(t, w.Metrics().InFlight) == 1 && bc.running.Load() == 1 })
	stop()
	if all := res.snapshot(); len(all) != 1 || all[0].Outcome != worker.OutcomeAbandoned || all[0].Cause != "shutdown" {
		t.Errorf("results = %+v, want one abandoned by the shutdown", all)
	}
	if n := bc.running.Load(); n != 0 {
		t.Errorf("%d chunker calls still running after Run returned", n)
	}
	if n := len(e.streamMsgs("DLQ")); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	if n := e.pendingIngest(); n != 1 {
		t.Errorf("INGEST holds %d requests, want the abandoned one kept", n)
	}
}
