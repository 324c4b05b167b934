package topology_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/topology"
)

func testConfig() topology.Config {
	c := topology.DefaultConfig()
	c.SetupTimeout = 30 * time.Second
	return c
}

// TestEnsureCreatesThenChangesNothing: a first Ensure creates everything;
// a second sends no create or update; a changed setting is updated and a
// setting Ensure does not decide (MaxBytes set by an operator) is kept.
func TestEnsureCreatesThenChangesNothing(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, s.ClientURL())
	writes := jstest.WatchAPIWrites(t, nc)
	ctx := context.Background()
	cfg := testConfig()

	h, err := topology.Ensure(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.Ingest == nil || h.Consumer == nil || h.Docs == nil || h.Objects == nil {
		t.Fatalf("Ensure returned %+v, want every handle", h)
	}
	if got := writes(); len(got) != 6 {
		t.Errorf("first Ensure wrote %q, want 6 creates (3 streams, 2 buckets, 1 consumer)", got)
	}
	for _, name := range []string{"INGEST", "CHUNKS", "DLQ", "KV_CHUNKSTREAM_DOCS", "OBJ_CHUNKSTREAM_OBJECTS"} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}

	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if got := writes(); len(got) != 0 {
		t.Errorf("second Ensure wrote %q, want nothing", got)
	}

	// An operator's limit on INGEST (discard new: a full stream refuses
	// requests rather than dropping old ones), then a changed duplicate
	// window, AckWait and a longer objects TTL.
	st, _ := js.Stream(ctx, "INGEST")
	sc := st.CachedInfo().Config
	sc.MaxBytes, sc.Discard = 1<<30, jetstream.DiscardNew
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	writes()
	cfg.DuplicateWindow = 5 * time.Minute
	cfg.AckWait = 45 * time.Second
	cfg.ObjectsTTL = 14 * 24 * time.Hour
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if got := writes(); len(got) != 3 {
		t.Errorf("Ensure after three changes wrote %q, want 3 updates (INGEST, objects, consumer)", got)
	}
	st, _ = js.Stream(ctx, "INGEST")
	if got := st.CachedInfo().Config; got.Duplicates != 5*time.Minute || got.MaxBytes != 1<<30 {
		t.Errorf("INGEST after Ensure: duplicates %v, max bytes %d; want 5m and the operator's 1 GiB", got.Duplicates, got.MaxBytes)
	}
	c, _ := st.Consumer(ctx, "chunkers")
	if got := c.CachedInfo().Config.AckWait; got != 45*time.Second {
		t.Errorf("consumer AckWait = %v, want 45s", got)
	}
	obs, _ := js.ObjectStore(ctx, "CHUNKSTREAM_OBJECTS")
	if st, err := obs.Status(ctx); err != nil || st.TTL() != 14*24*time.Hour {
		t.Errorf("objects TTL = %v (%v), want 336h (raised)", st.TTL(), err)
	}
}

// TestEnsureLiftsMaxDeliver: a consumer an earlier version created with
// a delivery limit (max_deliver 8) is updated to redeliver without one
// (the workers keep the limit: docs/design.md, "Delivery semantics"),
// its other settings and its place in the stream kept.
func TestEnsureLiftsMaxDeliver(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	nc, js := jstest.Connect(t, s.ClientURL())
	ctx := context.Background()
	cfg := testConfig()
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	old := cfg.ConsumerConfig()
	old.MaxDeliver = 8
	if _, err := js.UpdateConsumer(ctx, cfg.IngestStream, old); err != nil {
		t.Fatal(err)
	}
	writes := jstest.WatchAPIWrites(t, nc)
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	// nats.go updates a consumer with the create request (action update).
	if got := writes(); len(got) != 1 || got[0] != "$JS.API.CONSUMER.CREATE."+cfg.IngestStream+"."+cfg.Consumer {
		t.Errorf("Ensure over a consumer with max_deliver 8 wrote %q, want one write of the consumer", got)
	}
	c, err := js.Consumer(ctx, cfg.IngestStream, cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CachedInfo().Config; got.MaxDeliver != -1 || got.AckWait != cfg.AckWait {
		t.Errorf("consumer after Ensure: max_deliver %d, ack wait %v; want -1 and %v", got.MaxDeliver, got.AckWait, cfg.AckWait)
	}
}

// TestEnsureFailsAtOnceOnRefusal: a setting the server refuses for good
// (three replicas on a single server) is reported at once, not retried
// until the set-up timeout.
func TestEnsureFailsAtOnceOnRefusal(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	cfg.Replicas = 3
	cfg.SetupTimeout = time.Hour // a retry would outlast the test
	_, err := topology.Ensure(context.Background(), js, cfg)
	if err == nil || errors.Is(err, topology.ErrNotReady) || !strings.Contains(err.Error(), "stream INGEST") ||
		!strings.Contains(strings.ToLower(err.Error()), "replicas") {
		t.Errorf("Ensure at R3 on one server = %v, want an immediate error naming stream INGEST and replicas", err)
	}
}

// TestEnsureGivesUpClearly: a server without JetStream never becomes
// ready; Ensure stops at SetupTimeout with an error naming what was not
// ready and the last error.
func TestEnsureGivesUpClearly(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1, func(o *server.Options) { o.JetStream = false })
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	cfg.SetupTimeout = 2 * time.Second // room for a first answer on a loaded machine
	_, err := topology.Ensure(context.Background(), js, cfg)
	if !errors.Is(err, topology.ErrNotReady) || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("Ensure without JetStream = %v, want ErrNotReady wrapping the last error (no responders)", err)
	}
	for _, want := range []string{"stream INGEST", "CHUNKSTREAM_SETUP_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Ensure error %q does not name %q", err, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.SetupTimeout = time.Hour
	if _, err := topology.Ensure(ctx, js, cfg); errors.Is(err, topology.ErrNotReady) || !errors.Is(err, context.Canceled) {
		t.Errorf("Ensure with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestObjectsCreatesButNeverUpdates: Objects creates a missing bucket as
// the config says, and leaves an existing one as it is.
func TestObjectsCreatesButNeverUpdates(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	ctx := context.Background()
	cfg := testConfig()
	cfg.ObjectsTTL = time.Hour
	obs, err := topology.Objects(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := obs.Status(ctx); st.TTL() != time.Hour {
		t.Errorf("created TTL = %v, want 1h", st.TTL())
	}
	cfg.ObjectsTTL = 2 * time.Hour
	if obs, err = topology.Objects(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if st, _ := obs.Status(ctx); st.TTL() != time.Hour {
		t.Errorf("TTL after Objects with 2h = %v, want the existing 1h kept", st.TTL())
	}
}

// TestStreamForSubject: a subject INGEST stores is found; one it does not
// store fails at once; while INGEST does not exist, StreamForSubject
// waits for it.
func TestStreamForSubject(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	ctx := context.Background()
	cfg := testConfig()

	cfg.SetupTimeout = 300 * time.Millisecond
	if _, err := topology.StreamForSubject(ctx, js, cfg, "ingest.docs"); !errors.Is(err, topology.ErrNotReady) ||
		!strings.Contains(err.Error(), "start a worker") {
		t.Errorf("StreamForSubject with no INGEST = %v, want ErrNotReady saying to start a worker", err)
	}

	cfg.SetupTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		name, err := topology.StreamForSubject(ctx, js, cfg, "ingest.docs")
		if err == nil && name != "INGEST" {
			err = errors.New("found stream " + name)
		}
		done <- err
	}()
	if _, err := js.CreateStream(ctx, cfg.IngestStreamConfig()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("StreamForSubject while INGEST is created = %v, want INGEST", err)
	}

	cfg.SetupTimeout = time.Hour // waiting would outlast the test
	if _, err := topology.StreamForSubject(ctx, js, cfg, "elsewhere.docs"); err == nil || errors.Is(err, topology.ErrNotReady) ||
		!strings.Contains(err.Error(), "elsewhere.docs") {
		t.Errorf("StreamForSubject(elsewhere.docs) = %v, want an immediate error naming the subject", err)
	}
}

// TestEnsureAllowsBatchesOnExistingStreams: a CHUNKS stream made without
// allow_atomic and an INGEST stream made without allow_batched (by an
// older release) get them from Ensure, and keep every message they held.
func TestEnsureAllowsBatchesOnExistingStreams(t *testing.T) {
	cfg := testConfig()
	tests := []struct {
		name    string
		old     jetstream.StreamConfig
		subject string
		allowed func(jetstream.StreamConfig) bool
	}{
		{"CHUNKS allow_atomic", cfg.ChunksStreamConfig(), "chunks.docs.%d",
			func(c jetstream.StreamConfig) bool { return c.AllowAtomicPublish }},
		{"INGEST allow_batched", cfg.IngestStreamConfig(), "ingest.docs.%d",
			func(c jetstream.StreamConfig) bool { return c.AllowBatchPublish }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jstest.Start(t, t.TempDir(), -1)
			_, js := jstest.Connect(t, s.ClientURL())
			ctx := context.Background()
			old := tt.old
			old.AllowAtomicPublish, old.AllowBatchPublish = false, false
			if _, err := js.CreateStream(ctx, old); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if _, err := js.Publish(ctx, fmt.Sprintf(tt.subject, i), []byte("message")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := topology.Ensure(ctx, js, cfg); err != nil {
				t.Fatal(err)
			}
			st, err := js.Stream(ctx, old.Name)
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.allowed(info.Config) || info.State.Msgs != 5 {
				t.Errorf("%s after Ensure: allowed %v, %d messages; want true and the 5 it held", old.Name, tt.allowed(info.Config), info.State.Msgs)
			}
		})
	}
}

// TestIngestMadeAgainNumbersAboveRecords: an ingest stream deleted and
// made again by Ensure numbers its requests above every version the
// document records hold, so none is taken for an older version; the
// first one ever starts at 1.
func TestIngestMadeAgainNumbersAboveRecords(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	ctx := context.Background()
	h, err := topology.Ensure(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	publish := func() uint64 {
		t.Helper()
		ack, err := js.Publish(ctx, topology.DefaultIngestSubject, []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	if seq := publish(); seq != 1 {
		t.Fatalf("first request of a new pipeline at %d, want 1", seq)
	}
	for key, val := range map[string]string{
		"YS5tZA":                 `{"ingest_seq":41,"state":"done"}`,
		"Yi5tZA":                 `{"ingest_seq":7,"state":"done","last_failure":{"ingest_seq":99}}`,
		"chunkstream.worker.abc": `{"host":"h"}`,
	} {
		if _, err := h.Docs.Put(ctx, key, []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.DeleteStream(ctx, cfg.IngestStream); err != nil {
		t.Fatal(err)
	}
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if seq := publish(); seq != 42 {
		t.Errorf("first request of INGEST made again at %d, want 42 (above the records' 41)", seq)
	}
	if _, err := topology.Ensure(ctx, js, cfg); err != nil { // an existing stream: left as it is
		t.Fatal(err)
	}
	if seq := publish(); seq != 43 {
		t.Errorf("next request at %d, want 43", seq)
	}
}
