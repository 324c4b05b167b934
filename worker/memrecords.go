package worker

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// recordKV is what KVRecords needs of a key-value store: a JetStream KV
// bucket, or, for a worker that is its whole fleet for one run, this
// process's memory (memKV). The records' rules are KVRecords' alone,
// whichever holds them.
type recordKV interface {
	Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
	Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
	Bucket() string
}

var (
	_ recordKV = (jetstream.KeyValue)(nil)
	_ recordKV = (*memKV)(nil)
)

// memKV keeps values in a map with a bucket's revisions and
// compare-and-set, for Options.MemoryRecords: Create fails on a key that
// holds a value, Update on a revision that is not the key's last (0: on a
// key that holds one), with the bucket's errors (topology.IsCASConflict).
// Nothing is deleted, so there are no deletion markers.
type memKV struct {
	mu   sync.Mutex
	last uint64 // the last revision written, across keys as in a bucket
	vals map[string]memEntry
}

func newMemKV() *memKV { return &memKV{vals: map[string]memEntry{}} }

// Bucket names the store in errors.
func (m *memKV) Bucket() string { return "memory" }

// Get returns key's value, or jetstream.ErrKeyNotFound.
func (m *memKV) Get(_ context.Context, key string) (jetstream.KeyValueEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.vals[key]
	if !ok {
		return nil, jetstream.ErrKeyNotFound
	}
	return e, nil
}

// Create writes key's first value.
func (m *memKV) Create(_ context.Context, key string, value []byte, _ ...jetstream.KVCreateOpt) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vals[key]; ok {
		return 0, jetstream.ErrKeyExists
	}
	return m.put(key, value), nil
}

// Update writes key's value if its last revision is revision.
func (m *memKV) Update(_ context.Context, key string, value []byte, revision uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.vals[key]; ok && e.rev != revision || !ok && revision != 0 {
		return 0, jetstream.ErrKeyRevisionMismatch
	}
	return m.put(key, value), nil
}

// put writes a value; m.mu is held.
func (m *memKV) put(key string, value []byte) uint64 {
	m.last++
	m.vals[key] = memEntry{key: key, val: append([]byte(nil), value...), rev: m.last, at: time.Now()}
	return m.last
}

// memEntry is one value of a memKV (a jetstream.KeyValueEntry).
type memEntry struct {
	key string
	val []byte
	rev uint64
	at  time.Time
}

func (e memEntry) Bucket() string                  { return "memory" }
func (e memEntry) Key() string                     { return e.key }
func (e memEntry) Value() []byte                   { return e.val }
func (e memEntry) Revision() uint64                { return e.rev }
func (e memEntry) Created() time.Time              { return e.at }
func (e memEntry) Delta() uint64                   { return 0 }
func (e memEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }
