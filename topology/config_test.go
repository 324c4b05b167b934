package topology

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestValidateNamesVariable(t *testing.T) {
	for _, tt := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.IngestStream = "a.b" }, "CHUNKSTREAM_INGEST_STREAM"},
		{func(c *Config) { c.Consumer = "" }, "CHUNKSTREAM_CONSUMER"},
		{func(c *Config) { c.DocsBucket = "a b" }, "CHUNKSTREAM_DOCS_BUCKET"},
		{func(c *Config) { c.IngestSubjects = nil }, "CHUNKSTREAM_INGEST_SUBJECTS"},
		{func(c *Config) { c.IngestSubjects = []string{"ingest..x"} }, "CHUNKSTREAM_INGEST_SUBJECTS"},
		{func(c *Config) { c.ChunksPrefix = "c*" }, "CHUNKSTREAM_CHUNKS_PREFIX"},
		{func(c *Config) { c.DLQSubject = "dlq.>" }, "CHUNKSTREAM_DLQ_SUBJECT"},
		{func(c *Config) { c.Replicas = 0 }, "CHUNKSTREAM_REPLICAS"},
		{func(c *Config) { c.Replicas = 7 }, "CHUNKSTREAM_REPLICAS"},
		{func(c *Config) { c.DuplicateWindow = 0 }, "CHUNKSTREAM_DUPLICATE_WINDOW"},
		{func(c *Config) { c.ChunksDuplicateWindow = -time.Second }, "CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW"},
		{func(c *Config) { c.ChunksMaxAge = 0 }, "CHUNKSTREAM_CHUNKS_MAX_AGE"},
		{func(c *Config) { c.ChunksMaxAge = 30 * time.Minute }, "CHUNKSTREAM_CHUNKS_DUPLICATE_WINDOW"},
		{func(c *Config) { c.ObjectsTTL = 0 }, "CHUNKSTREAM_OBJECTS_TTL"},
		{func(c *Config) { c.AckWait = time.Millisecond }, "CHUNKSTREAM_ACK_WAIT"},
		{func(c *Config) { c.MaxDeliver = 0 }, "CHUNKSTREAM_MAX_DELIVER"},
		{func(c *Config) { c.SetupTimeout = 0 }, "CHUNKSTREAM_SETUP_TIMEOUT"},
	} {
		c := DefaultConfig()
		tt.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
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
		got.AckWait != 30*time.Second || got.MaxDeliver != 8 || got.MaxAckPending != 10000 || got.Replicas != 3 {
		t.Errorf("ConsumerConfig() = %+v", got)
	}
	if got := c.DocsBucketConfig(); got.Bucket != "CHUNKSTREAM_DOCS" || got.History != 1 || got.Replicas != 3 {
		t.Errorf("DocsBucketConfig() = %+v", got)
	}
	if got := c.ObjectsBucketConfig(); got.Bucket != "CHUNKSTREAM_OBJECTS" || got.TTL != 168*time.Hour || got.Replicas != 3 {
		t.Errorf("ObjectsBucketConfig() = %+v", got)
	}
}
