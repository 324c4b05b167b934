package topology_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/topology"
)

func TestCheckLimits(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sc      jetstream.StreamConfig
		history int64
		want    string // "" for no error
	}{
		{"no limits", jetstream.StreamConfig{Name: "S"}, 0, ""},
		{"age only", jetstream.StreamConfig{Name: "S", MaxAge: time.Hour}, 0, ""},
		{"bytes, discard new", jetstream.StreamConfig{Name: "S", MaxBytes: 1 << 20, Discard: jetstream.DiscardNew}, 0, ""},
		{"bytes, discard old", jetstream.StreamConfig{Name: "CHUNKS", MaxBytes: 1 << 20}, 0, "stream CHUNKS has max_bytes 1048576"},
		{"messages, discard old", jetstream.StreamConfig{Name: "S", MaxMsgs: 10}, 0, "max_msgs 10"},
		{"per subject, discard old", jetstream.StreamConfig{Name: "S", MaxMsgsPerSubject: 5}, 0, "max_msgs_per_subject 5"},
		{"a bucket's history", jetstream.StreamConfig{Name: "KV_B", MaxMsgsPerSubject: 1}, 1, ""},
		{"a bucket over its history", jetstream.StreamConfig{Name: "KV_B", MaxMsgsPerSubject: 1, MaxBytes: 100}, 1, "max_bytes 100"},
	} {
		err := topology.CheckLimits(tt.sc, tt.history)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: CheckLimits = %v, want nil", tt.name, err)
		case tt.want != "" && (!errors.Is(err, topology.ErrDiscardOld) || !strings.Contains(err.Error(), tt.want) ||
			!strings.Contains(err.Error(), "CHUNKSTREAM_ALLOW_DISCARD_OLD")):
			t.Errorf("%s: CheckLimits = %v, want ErrDiscardOld naming %q and the variable", tt.name, err, tt.want)
		}
	}
}

// TestEnsureRefusesDiscardOldLimits: a chunks, ingest or dead letter
// stream, or the records bucket, given a limit with discard old (which
// evicts silently) is refused at once with a message naming it, unless
// AllowDiscardOld; discard new with the same limit is accepted.
func TestEnsureRefusesDiscardOldLimits(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	cfg.SetupTimeout = time.Hour // a retry would outlast the test
	ctx := context.Background()
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	limit := func(name string, discard jetstream.DiscardPolicy) {
		t.Helper()
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		sc := st.CachedInfo().Config
		sc.MaxBytes, sc.Discard = 64<<20, discard
		if _, err := js.UpdateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{cfg.ChunksStream, cfg.IngestStream, cfg.DLQStream, "KV_" + cfg.DocsBucket} {
		limit(name, jetstream.DiscardOld)
		_, err := topology.Ensure(ctx, js, cfg)
		if !errors.Is(err, topology.ErrDiscardOld) || !strings.Contains(err.Error(), name) {
			t.Errorf("Ensure with %s limited, discard old = %v, want ErrDiscardOld naming it", name, err)
		}
		allow := cfg
		allow.AllowDiscardOld = true
		if _, err := topology.Ensure(ctx, js, allow); err != nil {
			t.Errorf("Ensure with %s limited, discard old, allowed = %v", name, err)
		}
		limit(name, jetstream.DiscardNew)
		if _, err := topology.Ensure(ctx, js, cfg); err != nil {
			t.Errorf("Ensure with %s limited, discard new = %v", name, err)
		}
	}
}

// TestRetry: a step failing as JetStream not enabled (not up yet) is
// tried again until it succeeds; one failing for good is returned at once;
// past SetupTimeout the error wraps ErrNotReady and the last error.
func TestRetry(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1, func(o *server.Options) { o.JetStream = false })
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	var tries atomic.Int32
	err := topology.Retry(context.Background(), cfg, "read", "the thing", func(ctx context.Context) error {
		if tries.Add(1) < 3 {
			_, err := js.AccountInfo(ctx)
			return err
		}
		return nil
	})
	if err != nil || tries.Load() != 3 {
		t.Errorf("Retry = %v after %d tries, want success on the third", err, tries.Load())
	}
	bad := errors.New("refused for good")
	tries.Store(0)
	if err := topology.Retry(context.Background(), cfg, "read", "the thing", func(context.Context) error {
		tries.Add(1)
		return bad
	}); !errors.Is(err, bad) || tries.Load() != 1 || !strings.Contains(err.Error(), "topology: read the thing") {
		t.Errorf("Retry of a refusal = %v after %d tries, want it at once, named", err, tries.Load())
	}
	cfg.SetupTimeout = 300 * time.Millisecond
	err = topology.Retry(context.Background(), cfg, "read", "the thing", func(ctx context.Context) error {
		_, err := js.AccountInfo(ctx)
		return err
	})
	var apiErr *jetstream.APIError
	if !errors.Is(err, topology.ErrNotReady) || !errors.As(err, &apiErr) {
		t.Errorf("Retry past SetupTimeout = %v, want ErrNotReady wrapping the last error (JetStream not enabled)", err)
	}
}

// TestEnsureNeverShrinks: a worker whose settings would make an existing
// stream or bucket keep less (a shorter chunk age or object TTL) is
// refused at once, naming the setting and what it keeps, and changes
// nothing, unless AllowDiscardOld; a longer age is applied; a records
// bucket given a TTL is refused; a longer history than the records need
// is kept.
func TestEnsureNeverShrinks(t *testing.T) {
	s := jstest.Start(t, t.TempDir(), -1)
	_, js := jstest.Connect(t, s.ClientURL())
	cfg := testConfig()
	cfg.SetupTimeout = time.Hour // a retry would outlast the test
	ctx := context.Background()
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	maxAge := func(name string) time.Duration {
		t.Helper()
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config.MaxAge
	}
	for _, tc := range []struct {
		stream, variable string
		set              func(c *topology.Config, d time.Duration)
		now              time.Duration
	}{
		{cfg.ChunksStream, "CHUNKSTREAM_CHUNKS_MAX_AGE", func(c *topology.Config, d time.Duration) { c.ChunksMaxAge = d }, cfg.ChunksMaxAge},
		{"OBJ_" + cfg.ObjectsBucket, "CHUNKSTREAM_OBJECTS_TTL", func(c *topology.Config, d time.Duration) { c.ObjectsTTL = d }, cfg.ObjectsTTL},
	} {
		shorter := cfg
		tc.set(&shorter, tc.now/2)
		_, err := topology.Ensure(ctx, js, shorter)
		if !errors.Is(err, topology.ErrShrink) || !strings.Contains(err.Error(), tc.variable) || !strings.Contains(err.Error(), tc.now.String()) {
			t.Errorf("%s: Ensure with half the age = %v, want ErrShrink naming %s and %v", tc.stream, err, tc.variable, tc.now)
		}
		if got := maxAge(tc.stream); got != tc.now {
			t.Errorf("%s: max age %v after the refusal, want %v unchanged", tc.stream, got, tc.now)
		}
		longer := cfg
		tc.set(&longer, tc.now*2)
		if _, err := topology.Ensure(ctx, js, longer); err != nil || maxAge(tc.stream) != tc.now*2 {
			t.Errorf("%s: Ensure with twice the age = %v, max age %v", tc.stream, err, maxAge(tc.stream))
		}
		shorter.AllowDiscardOld = true
		if _, err := topology.Ensure(ctx, js, shorter); err != nil || maxAge(tc.stream) != tc.now/2 {
			t.Errorf("%s: Ensure with half the age, allowed = %v, max age %v", tc.stream, err, maxAge(tc.stream))
		}
	}

	// The records bucket: a history of 5 is kept; a TTL is refused.
	kvStream := "KV_" + cfg.DocsBucket
	st, err := js.Stream(ctx, kvStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := st.CachedInfo().Config
	sc.MaxMsgsPerSubject = 5
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if _, err := topology.Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if st, err = js.Stream(ctx, kvStream); err != nil || st.CachedInfo().Config.MaxMsgsPerSubject != 5 {
		t.Errorf("records history after Ensure = %d, %v; want 5 kept", st.CachedInfo().Config.MaxMsgsPerSubject, err)
	}
	sc = st.CachedInfo().Config
	sc.MaxAge = time.Hour
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if _, err := topology.Ensure(ctx, js, cfg); !errors.Is(err, topology.ErrShrink) || !strings.Contains(err.Error(), cfg.DocsBucket) {
		t.Errorf("Ensure with a TTL on the records bucket = %v, want ErrShrink naming it", err)
	}
}
