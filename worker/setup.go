package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ObjectsTTL is the age at which objects behind content_ref expire.
const ObjectsTTL = 7 * 24 * time.Hour

// Topology is what Setup created or found.
type Topology struct {
	// Ingest is the stream of ingest requests.
	Ingest jetstream.Stream
	// Consumer is the durable pull consumer on Ingest.
	Consumer jetstream.Consumer
	// Docs is the KV bucket of document records.
	Docs jetstream.KeyValue
	// Objects is the Object Store bucket of large documents.
	Objects jetstream.ObjectStore
}

// IngestStreamConfig returns the INGEST stream's configuration: file
// storage, WorkQueue retention (a request leaves the stream when acked or
// terminated), the duplicate window, and direct gets (the max-deliveries
// advisory handler reads requests by sequence).
func IngestStreamConfig(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        cfg.IngestStream,
		Description: "chunkstream ingest requests",
		Subjects:    cfg.IngestSubjects,
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.DuplicateWindow,
		Replicas:    cfg.Replicas,
		AllowDirect: true,
	}
}

// ChunksStreamConfig returns the CHUNKS stream's configuration: a change
// feed with its own duplicate window and an age limit.
func ChunksStreamConfig(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        cfg.ChunksStream,
		Description: "chunkstream chunk records",
		Subjects:    []string{cfg.ChunksPrefix + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.ChunksDuplicateWindow,
		MaxAge:      cfg.ChunksMaxAge,
		Replicas:    cfg.Replicas,
	}
}

// DLQStreamConfig returns the DLQ stream's configuration: every subject
// under the dead letter subject's first token, kept until removed by
// people; its duplicate window makes dead-lettering idempotent.
func DLQStreamConfig(cfg Config) jetstream.StreamConfig {
	first, _, _ := strings.Cut(cfg.DLQSubject, ".")
	return jetstream.StreamConfig{
		Name:        cfg.DLQStream,
		Description: "chunkstream dead letters",
		Subjects:    []string{first + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  cfg.ChunksDuplicateWindow,
		Replicas:    cfg.Replicas,
	}
}

// ConsumerConfig returns the durable pull consumer's configuration.
// MaxAckPending leaves room for many workers; each worker bounds its own
// share by fetching only for idle processors.
func ConsumerConfig(cfg Config) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   "chunkstream workers",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: 10000,
		Replicas:      cfg.Replicas,
	}
}

// Setup creates the streams, buckets and consumer, or updates them to
// cfg; running it again changes nothing.
func Setup(ctx context.Context, js jetstream.JetStream, cfg Config) (*Topology, error) {
	var t Topology
	var err error
	if t.Ingest, err = js.CreateOrUpdateStream(ctx, IngestStreamConfig(cfg)); err != nil {
		return nil, fmt.Errorf("worker: set up stream %s: %w", cfg.IngestStream, err)
	}
	if _, err = js.CreateOrUpdateStream(ctx, ChunksStreamConfig(cfg)); err != nil {
		return nil, fmt.Errorf("worker: set up stream %s: %w", cfg.ChunksStream, err)
	}
	if _, err = js.CreateOrUpdateStream(ctx, DLQStreamConfig(cfg)); err != nil {
		return nil, fmt.Errorf("worker: set up stream %s: %w", cfg.DLQStream, err)
	}
	if t.Docs, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      cfg.DocsBucket,
		Description: "chunkstream document records",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("worker: set up bucket %s: %w", cfg.DocsBucket, err)
	}
	if t.Objects, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      cfg.ObjectsBucket,
		Description: "chunkstream large documents",
		TTL:         ObjectsTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("worker: set up object store %s: %w", cfg.ObjectsBucket, err)
	}
	if t.Consumer, err = t.Ingest.CreateOrUpdateConsumer(ctx, ConsumerConfig(cfg)); err != nil {
		return nil, fmt.Errorf("worker: set up consumer %s: %w", cfg.Consumer, err)
	}
	return &t, nil
}
