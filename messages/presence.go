package messages

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// WorkerKeyPrefix starts the keys, in the bucket of document records, of
// running workers' WorkerPresence; holding a ".", they are never a
// record's.
const WorkerKeyPrefix = "chunkstream.worker."

// WorkerPresence is what a running worker says of itself, every few
// seconds. A worker removes it when it stops; one that died leaves it to
// age (Seen).
type WorkerPresence struct {
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// Seen is when the worker wrote this; LastPull when it last asked the
	// server for requests (zero before its first pull).
	Seen     time.Time `json:"seen"`
	LastPull time.Time `json:"last_pull,omitzero"`
	// Ready is the worker's readiness (/readyz); InFlight and Held the
	// requests it is processing and holding for a sink outage.
	Ready    bool `json:"ready"`
	InFlight int  `json:"in_flight"`
	Held     int  `json:"held"`
	// OwnDefaults are the worker's own chunker defaults when they differ
	// from the fleet's, which it follows (nil when they agree).
	OwnDefaults *ChunkerDefaults `json:"own_defaults,omitempty"`
}

// PresenceEvery is how often a running worker writes its presence: its
// heartbeat.
const PresenceEvery = 5 * time.Second

// PresenceTTL is how long a presence counts after it was written, three
// heartbeats: a worker that has not written its presence for longer has
// stopped (killed, or cut off), and is gone, not a worker that is not
// pulling. Running workers remove such presences.
const PresenceTTL = 3 * PresenceEvery

// PullFresh is how recent a worker's last pull must be for it to count as
// pulling.
const PullFresh = 15 * time.Second

// Gone reports whether the worker stopped writing its presence: none for
// more than PresenceTTL before now.
func (p WorkerPresence) Gone(now time.Time) bool { return now.Sub(p.Seen) > PresenceTTL }

// Pulling reports whether the worker was seen and pulled within PullFresh
// of now.
func (p WorkerPresence) Pulling(now time.Time) bool {
	return now.Sub(p.Seen) <= PullFresh && now.Sub(p.LastPull) <= PullFresh
}

// WorkerKey returns the key of a worker's presence.
func WorkerKey(id string) string { return WorkerKeyPrefix + id }

// IsWorkerKey reports whether key is a worker's presence key.
func IsWorkerKey(key string) bool { return strings.HasPrefix(key, WorkerKeyPrefix) }

// EncodeWorkerPresence returns p as JSON.
func EncodeWorkerPresence(p WorkerPresence) ([]byte, error) { return json.Marshal(p) }

// DecodeWorkerPresence reads a presence's JSON; anything else wraps
// ErrDecode.
func DecodeWorkerPresence(data []byte) (WorkerPresence, error) {
	var p WorkerPresence
	if err := json.Unmarshal(data, &p); err != nil {
		return WorkerPresence{}, fmt.Errorf("%w: worker presence: %v", ErrDecode, err)
	}
	return p, nil
}
