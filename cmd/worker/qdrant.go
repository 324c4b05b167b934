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

// newQdrantSink builds the sink of CHUNKSTREAM_SINK=qdrant, with an
// embeddings client when CHUNKSTREAM_EMBED_URL is set (its metrics in
// reg). The client's Run lasts until the returned function, which stops
// it and closes the sink.
func newQdrantSink(ctx context.Context, c *config, records worker.Records, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (worker.Sink, func(), error) {
	var (
		emb      qdrantsink.Embedder
		stopEmb  = func() {}
		embedErr = make(chan error, 1)
	)
	metrics := embed.NewMetrics(reg) // labelled by model: the next model's too
	if c.Embed.Enabled() {
		client, err := embed.New(c.Embed, embed.Options{Logger: log, Metrics: metrics, TracerProvider: tp})
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
	// During a model switch, the next model's client, batching likewise.
	var opts []qdrantsink.Option
	if next, ok := c.Embed.Next(); ok && c.Embed.Enabled() {
		client, err := embed.New(next, embed.Options{Logger: log, Metrics: metrics, TracerProvider: tp})
		if err != nil {
			stopEmb()
			return nil, nil, fmt.Errorf("next model's embedder: %w", err)
		}
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		nextErr := make(chan error, 1)
		go func() { nextErr <- client.Run(runCtx) }()
		stopFirst := stopEmb
		stopEmb = func() {
			cancel()
			if err := <-nextErr; err != nil {
				log.Error("next model's embedder batching failed", "err", err)
			}
			stopFirst()
		}
		opts = append(opts, qdrantsink.WithNextEmbedder(client))
	}
	// A Qdrant still starting is waited for, as long as the set-up of the
	// streams may take.
	sctx, cancel := context.WithTimeout(ctx, c.SetupTimeout)
	defer cancel()
	s, err := qdrantsink.New(sctx, c.Qdrant, records, emb, log, opts...)
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
// documents, at least GOMAXPROCS, at most maxEmbedInFlight. A document
// spends most of its time outside the embedder's queue, so filling the
// requests takes about four times the documents their inputs need (the
// embedding benchmark: a quarter of this fills 46 inputs of 64, this 58);
// a waiting document costs memory, not CPU.
func embedConcurrency(e embed.Config) int {
	conc := e.Concurrency
	if conc == 0 {
		conc = embed.DefaultConcurrency
	}
	return max(runtime.GOMAXPROCS(0), min((conc+1)*e.Batch, maxEmbedInFlight))
}
