package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// newQdrantSink is the constructor hook of CHUNKSTREAM_SINK=qdrant: it
// builds worker/qdrantsink's sink from its configuration (the
// CHUNKSTREAM_QDRANT_* and CHUNKSTREAM_BM25_* variables), an embeddings
// client when CHUNKSTREAM_EMBED_URL is set (else points carry only the
// bm25 vector), whose metrics go to reg, and the worker's document
// records. The client's Run, which gathers the chunks of all documents in
// flight into shared requests, runs until the returned function, which
// stops it and closes the sink.
func newQdrantSink(ctx context.Context, c *config, records worker.Records, log *slog.Logger, reg prometheus.Registerer) (worker.Sink, func(), error) {
	var (
		emb      qdrantsink.Embedder
		stopEmb  = func() {}
		embedErr = make(chan error, 1)
	)
	if c.Embed.Enabled() {
		client, err := embed.New(c.Embed, embed.Options{Logger: log, Metrics: embed.NewMetrics(reg)})
		if err != nil {
			return nil, nil, fmt.Errorf("embedder: %w", err)
		}
		// Run outlives ctx (SIGTERM): the worker's drain still embeds.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		go func() { embedErr <- client.Run(runCtx) }()
		stopEmb = func() {
			cancel()
			if err := <-embedErr; err != nil {
				log.Error("embedder batching failed", "err", err)
			}
		}
		emb = client
	}
	// A Qdrant still starting is waited for, as long as the set-up of the
	// streams may take.
	sctx, cancel := context.WithTimeout(ctx, c.SetupTimeout)
	defer cancel()
	s, err := qdrantsink.New(sctx, c.Qdrant, records, emb, log)
	if err != nil {
		stopEmb()
		return nil, nil, fmt.Errorf("qdrant sink: %w", err)
	}
	return s, func() { stopEmb(); _ = s.Close() }, nil
}

// embedConcurrency is CHUNKSTREAM_CONCURRENCY when it is 0 (automatic) and
// the Qdrant sink has an embedder: enough documents in flight for the
// embedder's requests in flight and the one filling to be full, taking a
// document as 4 chunks; at least GOMAXPROCS. A document waiting for its
// vectors costs no CPU, and with GOMAXPROCS documents requests would carry
// a handful of inputs each.
func embedConcurrency(e embed.Config) int {
	conc := e.Concurrency
	if conc == 0 {
		conc = embed.DefaultConcurrency
	}
	return max(runtime.GOMAXPROCS(0), (conc+1)*e.Batch/4)
}
