package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// newQdrantSink is the constructor hook of CHUNKSTREAM_SINK=qdrant: it
// builds worker/qdrantsink's sink from its configuration (the
// CHUNKSTREAM_QDRANT_* and CHUNKSTREAM_BM25_* variables), an embeddings
// client when CHUNKSTREAM_EMBED_URL is set (else points carry only the
// bm25 vector), and the worker's document records; the returned function
// closes it.
func newQdrantSink(ctx context.Context, c *config, records worker.Records, log *slog.Logger) (worker.Sink, func(), error) {
	var emb qdrantsink.Embedder
	if c.Embed.Enabled() {
		client, err := embed.New(c.Embed, embed.Options{Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("embedder: %w", err)
		}
		emb = client
	}
	s, err := qdrantsink.New(ctx, c.Qdrant, records, emb, log)
	if err != nil {
		return nil, nil, fmt.Errorf("qdrant sink: %w", err)
	}
	return s, func() { _ = s.Close() }, nil
}
