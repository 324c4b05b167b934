package embed_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

// BenchmarkBatching measures the client alone against the modelled
// embeddings server (20 ms + 0.2 ms per input, 4 requests at once): 80
// callers, each embedding 4 texts at a time (a document of the corpus's
// average size), with each call in requests of its own (the client
// without Run) and with Run gathering the calls' inputs into shared
// requests of up to 64. It reports inputs/s of both, the speedup, and the
// batched inputs/s against the server's modelled capacity with requests of
// 64 inputs, 4·64/(20 ms + 0.2 ms·64).
//
//	go test -run '^$' -bench Batching -benchtime 1x ./worker/embed
func BenchmarkBatching(b *testing.B) {
	const (
		callers, perCall, batch = 80, 4, 64
		fixed, perInput         = 20 * time.Millisecond, 200 * time.Microsecond
	)
	capacity := 4 * batch / (fixed.Seconds() + batch*perInput.Seconds())
	run := func(batched bool, inputs int) (float64, float64) {
		srv := embedtest.Start(b, embedtest.Config{Dims: 64, Fixed: fixed, PerInput: perInput, MaxConcurrent: 4})
		cfg := embed.DefaultConfig()
		cfg.URL, cfg.Model, cfg.Batch, cfg.Concurrency = srv.URL(), "m", batch, 4
		c, err := embed.New(cfg, embed.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if batched {
			go func() { _ = c.Run(ctx) }()
		}
		var left atomic.Int64
		left.Store(int64(inputs / perCall))
		start := time.Now()
		var wg sync.WaitGroup
		for w := range callers {
			wg.Go(func() {
				for n := 0; left.Add(-1) >= 0; n++ {
					texts := make([]string, perCall)
					for i := range texts {
						texts[i] = fmt.Sprintf("caller %d, call %d, text %d", w, n, i)
					}
					if _, err := c.Embed(ctx, texts); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		st := srv.Stats()
		if st.Throttled > 0 {
			b.Fatalf("throttled: %+v", st)
		}
		return float64(st.Inputs) / time.Since(start).Seconds(), float64(st.Inputs) / float64(st.Answered)
	}
	// Medians over the iterations, each running both back to back.
	var alone, batched, speedup, perReq []float64
	for b.Loop() {
		a, _ := run(false, 4000)
		r, n := run(true, 20000)
		alone, batched, speedup, perReq = append(alone, a), append(batched, r), append(speedup, r/a), append(perReq, n)
	}
	b.ReportMetric(median(alone), "per-call-inputs/s")
	b.ReportMetric(median(batched), "batched-inputs/s")
	b.ReportMetric(median(speedup), "speedup-x")
	b.ReportMetric(median(perReq), "batched-inputs/req")
	b.ReportMetric(capacity, "capacity-inputs/s")
	b.ReportMetric(100*median(batched)/capacity, "capacity-%")
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
