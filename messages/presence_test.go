package messages_test

import (
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/messages"
)

// TestPresenceGone: a worker is gone once its presence is older than
// three heartbeats, and not before; a pulling worker is one seen and
// pulling within PullFresh.
func TestPresenceGone(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if messages.PresenceTTL != 3*messages.PresenceEvery {
		t.Fatalf("PresenceTTL = %v, want three heartbeats of %v", messages.PresenceTTL, messages.PresenceEvery)
	}
	for _, tc := range []struct {
		seen, pulled time.Duration // ago
		gone, pull   bool
	}{
		{0, 0, false, true},
		{messages.PresenceTTL, messages.PresenceTTL, false, true},
		{messages.PresenceTTL + time.Nanosecond, 0, true, false},
		{time.Second, time.Hour, false, false}, // alive, holding through an outage
		{time.Hour, time.Hour, true, false},    // killed an hour ago
		{-time.Minute, 0, false, true},         // its clock ahead of ours
	} {
		p := messages.WorkerPresence{Seen: now.Add(-tc.seen), LastPull: now.Add(-tc.pulled)}
		if got := p.Gone(now); got != tc.gone {
			t.Errorf("seen %v ago: Gone = %v, want %v", tc.seen, got, tc.gone)
		}
		if got := p.Pulling(now); got != tc.pull {
			t.Errorf("seen %v, pulled %v ago: Pulling = %v, want %v", tc.seen, tc.pulled, got, tc.pull)
		}
	}
}
