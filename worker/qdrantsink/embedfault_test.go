package qdrantsink_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
)

// lines is a slog.Handler that keeps the messages logged.
type lines struct {
	mu   sync.Mutex
	msgs []string
}

func (h *lines) Enabled(context.Context, slog.Level) bool { return true }
func (h *lines) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *lines) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lines) WithGroup(string) slog.Handler      { return h }

func (h *lines) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// TestEndToEndEmbedderDeploymentFaults: the embedder's deployment fails
// for many times the retry budget (MaxDeliver 3, backoff from 50 ms): its
// key is refused (401, 403), it serves vectors of another size than the
// collection's, or it hangs (past CHUNKSTREAM_EMBED_TIMEOUT). Each is an
// outage of the embedder: the worker holds its requests, is not ready,
// logs one line each way, and probes at its own rate (the endpoint gets
// a few requests a second, not one per document and retry); nothing is
// dead-lettered, and once the deployment is fixed every document is
// stored with its vectors on its first delivery.
func TestEndToEndEmbedderDeploymentFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	const dims = 8
	for _, tt := range []struct {
		name       string
		fail, heal func(*embedtest.Server)
	}{
		{"unauthorized", func(s *embedtest.Server) { s.SetStatus(401) }, func(s *embedtest.Server) { s.SetStatus(0) }},
		{"forbidden", func(s *embedtest.Server) { s.SetStatus(403) }, func(s *embedtest.Server) { s.SetStatus(0) }},
		{"another dimension", func(s *embedtest.Server) { s.SetDims(dims + 4) }, func(s *embedtest.Server) { s.SetDims(dims) }},
		{"hang", (*embedtest.Server).Hold, (*embedtest.Server).Release},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := embedtest.Start(t, embedtest.Config{Dims: dims})
			client, err := embed.New(embed.Config{URL: srv.URL(), Model: "test", Batch: 8, MaxInputChars: 8000,
				Linger: time.Millisecond, Timeout: 300 * time.Millisecond}, embed.Options{BackoffBase: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			runEmbedder(t, client)
			logs := &lines{}
			e := newE2EWith(t, e2eOptions{config: outageConfig, embedder: client, logger: slog.New(logs)})
			tt.fail(srv)
			backlog := e.publishBacklog(30)
			probes := func() float64 {
				return metricValue(t, e.w.Metrics().SinkProbes.WithLabelValues(qdrantsink.DependencyEmbedder, "failed"))
			}
			deadline := time.Now().Add(20 * time.Second)
			for probes() < 3 {
				if time.Now().After(deadline) {
					t.Fatal("the embedder was not probed")
				}
				time.Sleep(20 * time.Millisecond)
			}
			before, probesBefore := srv.Stats().Requests, probes()
			e.outageDuring(2 * time.Second) // the retry budget is ~0.35 s
			// Once the outage began, the endpoint gets the worker's probes
			// (one request each, counted when it fails: one may be in
			// flight) and at most the documents in hand when it began,
			// not a request per document and retry.
			sent, probed := srv.Stats().Requests-before, int(probes()-probesBefore)
			if most := probed + 1 + 2*e.cfg.Concurrency; sent > most {
				t.Errorf("%d requests to the embedder during the outage, %d of them probes, want at most %d (probes only, and the documents in hand)", sent, probed, most)
			}
			if n := e.deadLetters(); n != 0 {
				t.Errorf("%d dead letters during the outage, want 0", n)
			}
			tt.heal(srv)
			e.expectAllOnFirstDelivery(backlog)
			for _, p := range e.qd.Points("chunks") {
				if v := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorDense]; len(v.GetDense().GetData()) != dims {
					t.Fatalf("point %s has no %d-dimensional dense vector: %v", p.GetId().GetUuid(), dims, v)
				}
			}
			waitReady(t, e.w)
			if down, up := logs.count("sink down"), logs.count("sink up again"); down != 1 || up != 1 {
				t.Errorf("%d 'sink down' and %d 'sink up again' log lines, want one each", down, up)
			}
		})
	}
}
