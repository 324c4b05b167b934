package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestClusterHarness checks the harness itself: an R3 stream keeps
// accepting and serving messages while its leader is down, and the
// restarted node catches up.
func TestClusterHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	c := newCluster(t, 3)
	_, js := c.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "H", Subjects: []string{"h.>"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "stream H current", func() (bool, string) { return streamCurrent(ctx, js, "H", 3) })
	for i := range 50 {
		if _, err := js.Publish(ctx, fmt.Sprintf("h.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	s, err := js.Stream(ctx, "H")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.byName(info.Cluster.Leader)
	t.Logf("killing %s", info.Cluster.Leader)
	c.kill(leader)
	for i := 50; i < 100; i++ {
		// A message id makes the retries of one publish store it once.
		hdr := nats.Header{nats.MsgIdHdr: []string{fmt.Sprint(i)}}
		if err := publishRetry(ctx, js, fmt.Sprintf("h.%d", i), []byte("x"), hdr); err != nil {
			t.Fatalf("publish %d with the leader down: %v", i, err)
		}
	}
	c.restart(leader)
	testutil.WaitFor(t, 30*time.Second, "stream H current after restart", func() (bool, string) { return streamCurrent(ctx, js, "H", 3) })
	info, err = s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 100 {
		t.Errorf("stream H holds %d messages, want 100", info.State.Msgs)
	}
}
