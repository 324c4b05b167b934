package worker

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/topology"
)

// Setup sets up the worker's topology with topology.Ensure ;
// running it again changes nothing.
func Setup(ctx context.Context, js jetstream.JetStream, cfg Config) (*topology.Handles, error) {
	return topology.Ensure(ctx, js, cfg.Config)
}
