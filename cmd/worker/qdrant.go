package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

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
func newQdrantSink(ctx context.Context, c *config, records worker.Records, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (worker.Sink, func(), error) {
	var (
		emb      qdrantsink.Embedder
		stopEmb  = func() {}
		embedErr = make(chan error, 1)
	)
	if c.Embed.Enabled() {
		client, err := embed.New(c.Embed, embed.Options{Logger: log, Metrics: embed.NewMetrics(reg), TracerProvider: tp})
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

// qdrantConcurrency is CHUNKSTREAM_CONCURRENCY when it is 0 (automatic)
// and the sink is Qdrant's: enough documents in flight to fill its upsert
// requests (qdrantsink.Config.DocumentsInFlight) and, with an embedder,
// its embedding requests (embedConcurrency), at least GOMAXPROCS.
func qdrantConcurrency(c *config) int {
	n := max(runtime.GOMAXPROCS(0), c.Qdrant.DocumentsInFlight())
	if c.Embed.Enabled() {
		n = max(n, embedConcurrency(c.Embed))
	}
	return n
}

// maxEmbedInFlight bounds the documents in flight embedConcurrency sets.
const maxEmbedInFlight = 2048

// embedConcurrency is CHUNKSTREAM_CONCURRENCY when it is 0 (automatic) and
// the Qdrant sink has an embedder: (requests in flight + 1) × batch
// documents, at least GOMAXPROCS. A document spends most of its time
// outside the embedder's queue (its records, its upsert, its ack), so the
// requests in flight and the one filling are full only with about four
// times as many documents as their inputs would need at 4 chunks each:
// with the embedding benchmark's modelled server, a quarter of this
// filled requests to 46 inputs of 64, this fills them to 58 and gives
// 1.33× the documents/s, and twice this adds nothing. A document waiting
// for its vectors costs no CPU, only its memory; at most
// maxEmbedInFlight, whatever the batch.
func embedConcurrency(e embed.Config) int {
	conc := e.Concurrency
	if conc == 0 {
		conc = embed.DefaultConcurrency
	}
	return max(runtime.GOMAXPROCS(0), min((conc+1)*e.Batch, maxEmbedInFlight))
}
