package worker

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/topology"
)

// Setup sets up the worker's topology with topology.Ensure: it creates the
// streams, buckets and consumer, or updates those whose settings differ
// from cfg, converging when several workers start at once, within
// cfg.SetupTimeout. Running it again changes nothing.
func Setup(ctx context.Context, js jetstream.JetStream, cfg Config) (*topology.Handles, error) {
	return topology.Ensure(ctx, js, cfg.Config)
}
