package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/chunkstream/chunkstream/worker"
)

// newQdrantSink is the constructor hook of CHUNKSTREAM_SINK=qdrant: it
// builds worker/qdrantsink's sink from its own configuration (the
// CHUNKSTREAM_QDRANT_* and CHUNKSTREAM_EMBED_* variables) and the worker's
// document records, and returns a function that releases it.
//
// It is a stub until the Qdrant sink is wired here.
func newQdrantSink(ctx context.Context, c *config, records worker.Records, log *slog.Logger) (worker.Sink, func(), error) {
	return nil, nil, errors.New("CHUNKSTREAM_SINK=qdrant: the Qdrant sink is not wired into this build")
}
