package worker

import "time"

// Config is a fixture for the env-tag parser.
type Config struct {
	URL     string        `env:"NATS_URL" envDefault:"nats://127.0.0.1:4222"`
	Drain   time.Duration `env:"CHUNKSTREAM_DRAIN_TIMEOUT" envDefault:"25s"`
	NoDef   string        `env:"CHUNKSTREAM_NO_DEFAULT"`
	Qdrant  sub.Config    `envPrefix:"CHUNKSTREAM_QDRANT_"`
	Local   Nested        `envPrefix:"CHUNKSTREAM_"`
	Ignored string        `json:"ignored"`
}

// Nested is reached only through an envPrefix.
type Nested struct {
	Consumer string `env:"CONSUMER,notEmpty" envDefault:"chunkers"`
}
