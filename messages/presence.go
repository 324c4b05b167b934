package messages

import (
	"encoding/json"
	"fmt"
	"slices"
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
	// Reads are the kinds of request the worker reads that workers of
	// earlier builds misread (WorkerReads); absent in a presence written
	// by such a build.
	Reads []string `json:"reads,omitempty"`
}

// Kinds of request a worker's presence says it reads (WorkerPresence.Reads):
// a producer sends them only when every running worker reads them.
const (
	// ReadsBulk: bulk requests (ContentTypeBulk), which a worker of an
	// earlier build dead-letters as invalid.
	ReadsBulk = "bulk"
	// ReadsTenants: requests with a tenant, which a worker of an earlier
	// build writes as the untenanted document of the same id.
	ReadsTenants = "tenants"
)

// WorkerReads returns the kinds of request this build's workers read.
func WorkerReads() []string { return []string{ReadsBulk, ReadsTenants} }

// ReadsKind reports whether the worker says it reads kind.
func (p WorkerPresence) ReadsKind(kind string) bool { return slices.Contains(p.Reads, kind) }

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
