package qdrantsink_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// TestBacklogRequests: under a backlog of 1,000 documents, a worker with
// the documents in flight cmd/worker gives it (Config.DocumentsInFlight)
// writes requests of 64 points or more on average, as Qdrant advises,
// the documents whole.
func TestBacklogRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("a backlog of 1,000 documents: not in -short")
	}
	const docs = 1000
	var seqs []uint64
	contents := map[uint64]string{}
	e := newE2EWith(t, e2eOptions{
		config: func(c *worker.Config, q *qdrantsink.Config) {
			c.Concurrency = q.DocumentsInFlight()
			// Requests leave when full (or after a second), so that the
			// figure does not depend on the machine's speed;
			// BenchmarkPipeline reports the default linger's.
			q.Linger = qdrantsink.MaxLinger
		},
		backlog: func(e *e2e) {
			for i := range docs {
				content := doc(fmt.Sprintf("Document %d", i), 1+i%7)
				s := e.publish(messages.IngestRequest{ID: fmt.Sprintf("d%04d.md", i), Content: []byte(content)})
				seqs = append(seqs, s)
				contents[s] = content
			}
		},
	})
	start := time.Now()
	e.wait(seqs...)
	requests, points := 0, 0
	for _, c := range e.qd.Calls() {
		if c.Upserts() {
			requests++
			points += c.Points
		}
	}
	t.Logf("%d documents, %d points in %d requests: %.1f points per request, %.1f requests per 1,000 points, %v",
		docs, points, requests, float64(points)/float64(requests), 1000*float64(requests)/float64(points), time.Since(start))
	if avg := float64(points) / float64(requests); avg < 64 {
		t.Errorf("%.1f points per upsert request under a backlog of %d documents, want at least 64", avg, docs)
	}
	for i, s := range seqs {
		if i%97 == 0 {
			e.expectDoc(fmt.Sprintf("d%04d.md", i), contents[s], s)
		}
	}
}
