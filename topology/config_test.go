package topology

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/fault"
)

func TestValidateNamesVariable(t *testing.T) {
	for _, tt := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.IngestStream = "a.b" }, "IngestStream"},
		{func(c *Config) { c.Consumer = "" }, "Consumer"},
		{func(c *Config) { c.DocsBucket = "a b" }, "DocsBucket"},
		{func(c *Config) { c.IngestSubjects = nil }, "IngestSubjects"},
		{func(c *Config) { c.IngestSubjects = []string{"ingest..x"} }, "IngestSubjects"},
		{func(c *Config) { c.ChunksPrefix = "c*" }, "ChunksPrefix"},
		{func(c *Config) { c.DLQSubject = "dlq.>" }, "DLQSubject"},
		{func(c *Config) { c.Replicas = 0 }, "Replicas"},
		{func(c *Config) { c.Replicas = 7 }, "Replicas"},
		{func(c *Config) { c.DuplicateWindow = 0 }, "DuplicateWindow"},
		{func(c *Config) { c.ChunksDuplicateWindow = -time.Second }, "ChunksDuplicateWindow"},
		{func(c *Config) { c.ChunksMaxAge = 0 }, "ChunksMaxAge"},
		{func(c *Config) { c.ChunksMaxAge = 30 * time.Minute }, "ChunksDuplicateWindow"},
		{func(c *Config) { c.ObjectsTTL = 0 }, "ObjectsTTL"},
		{func(c *Config) { c.AckWait = time.Millisecond }, "AckWait"},
		{func(c *Config) { c.MaxDeliver = 0 }, "MaxDeliver"},
		{func(c *Config) { c.SetupTimeout = 0 }, "SetupTimeout"},
		{func(c *Config) { c.Storage = 7 }, "Storage"},
	} {
		c := DefaultConfig()
		tt.mut(&c)
		var fe *fault.FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != tt.want {
			t.Errorf("Validate() = %v, want a fault.FieldError of field %s", err, tt.want)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}

func TestWithDefaults(t *testing.T) {
	got := Config{ObjectsBucket: "MINE", Replicas: 3}.WithDefaults()
	want := DefaultConfig()
	want.ObjectsBucket, want.Replicas = "MINE", 3
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	if got := (Config{}).WithDefaults(); !reflect.DeepEqual(got, DefaultConfig()) {
		t.Errorf("Config{}.WithDefaults() = %+v, want DefaultConfig()", got)
	}
}

// TestBuilders pins the configurations the streams, buckets and consumer
// are created with: other tools (the bootstrap job) create them the same
// way.
func TestBuilders(t *testing.T) {
	c := DefaultConfig()
	c.Replicas = 3
	c.DLQSubject = "dead.letters.here"
	if got, want := c.IngestStreamConfig(), (jetstream.StreamConfig{
		Name: "INGEST", Description: "chunkstream ingest requests", Subjects: []string{"ingest.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		Replicas: 3, AllowDirect: true, AllowBatchPublish: true,
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("IngestStreamConfig() = %+v, want %+v", got, want)
	}
	if got := c.ChunksStreamConfig(); got.Name != "CHUNKS" || !reflect.DeepEqual(got.Subjects, []string{"chunks.>"}) ||
		got.MaxAge != 168*time.Hour || got.Duplicates != time.Hour || got.Replicas != 3 || got.Retention != jetstream.LimitsPolicy ||
		!got.AllowAtomicPublish {
		t.Errorf("ChunksStreamConfig() = %+v", got)
	}
	if got := c.DLQStreamConfig(); got.Name != "DLQ" || !reflect.DeepEqual(got.Subjects, []string{"dead.>"}) || got.Replicas != 3 {
		t.Errorf("DLQStreamConfig() = %+v, want subjects [dead.>]", got)
	}
	if got := c.ConsumerConfig(); got.Durable != "chunkers" || got.AckPolicy != jetstream.AckExplicitPolicy ||
		got.AckWait != 30*time.Second || got.MaxDeliver != -1 || got.MaxAckPending != 10000 || got.Replicas != 3 {
		t.Errorf("ConsumerConfig() = %+v", got)
	}
	if got := c.DocsBucketConfig(); got.Bucket != "CHUNKSTREAM_DOCS" || got.History != 1 || got.Replicas != 3 {
		t.Errorf("DocsBucketConfig() = %+v", got)
	}
	if got := c.ObjectsBucketConfig(); got.Bucket != "CHUNKSTREAM_OBJECTS" || got.TTL != 168*time.Hour || got.Replicas != 3 {
		t.Errorf("ObjectsBucketConfig() = %+v", got)
	}
	// Memory storage reaches every stream and bucket.
	c.Storage = jetstream.MemoryStorage
	for name, got := range map[string]jetstream.StorageType{
		"ingest": c.IngestStreamConfig().Storage, "chunks": c.ChunksStreamConfig().Storage, "dlq": c.DLQStreamConfig().Storage,
		"docs": c.DocsBucketConfig().Storage, "objects": c.ObjectsBucketConfig().Storage,
	} {
		if got != jetstream.MemoryStorage {
			t.Errorf("%s: storage %v with Config.Storage memory", name, got)
		}
	}
}
