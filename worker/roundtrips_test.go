package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// countingKV counts the operations on the bucket of document records.
type countingKV struct {
	jetstream.KeyValue
	mu  sync.Mutex
	ops map[string]int
}

// count counts an operation on a document record; the keys of the
// workers' presences, the outage notices and the fleet's defaults, which
// hold a ".", are not records and are written on timers of their own.
func (c *countingKV) count(op, key string) {
	if strings.Contains(key, ".") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops[op]++
}

func (c *countingKV) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.ops
	c.ops = map[string]int{}
	return out
}

func (c *countingKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	c.count("get", key)
	return c.KeyValue.Get(ctx, key)
}

func (c *countingKV) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	c.count("update", key)
	return c.KeyValue.Update(ctx, key, value, revision)
}

func (c *countingKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	c.count("create", key)
	return c.KeyValue.Create(ctx, key, value, opts...)
}

func (c *countingKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	c.count("put", key)
	return c.KeyValue.Put(ctx, key, value)
}

// TestRecordOperationsPerDocument counts the document record operations
// of the five steps with the subject sink: a document seen for the first
// time costs two writes (step 1 creates the record, step 5 finishes it)
// and no read; a new version of a recorded document costs the refused
// create, a read and the two writes.
func TestRecordOperationsPerDocument(t *testing.T) {
	e := newEnv(t, testConfig())
	kv := &countingKV{KeyValue: e.top.Docs, ops: map[string]int{}}
	e.top.Docs = kv
	w, res, _ := e.startWorker(worker.Options{})
	// Ready after its first fetch, so after it advertised its defaults.
	testutil.WaitFor(t, 10*time.Second, "the worker ready", w.Ready)
	const n = 20
	send := func(round int) {
		for i := range n {
			e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: fmt.Sprintf("doc-%d.md", i),
				Content: []byte(fmt.Sprintf("# Doc %d\n\nround %d\n", i, round))}, "")
		}
		testutil.WaitFor(t, 30*time.Second, "every request final", func() bool { return len(res.finals()) == n*(round+1) })
	}
	kv.take()
	send(0)
	first := kv.take()
	send(1)
	again := kv.take()
	for _, tc := range []struct {
		name string
		got  map[string]int
		want map[string]int
	}{
		{"new documents", first, map[string]int{"update": 2 * n}},
		{"new versions", again, map[string]int{"update": 3 * n, "get": n}},
	} {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: record operations %v for %d documents, want %v", tc.name, tc.got, n, tc.want)
		}
	}
}
