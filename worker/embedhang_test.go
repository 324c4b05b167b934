package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// embedSink embeds every chunk with a real embeddings client before the
// subject sink writes it, as the Qdrant sink does: the client's outages
// are the dependency "embedder", and Probe asks the client.
type embedSink struct {
	inner  worker.Sink
	client *embed.Client
}

func (s *embedSink) Write(ctx context.Context, doc worker.Doc, chunks []worker.Chunk) error {
	if len(chunks) > 0 {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Chunk.Content()
		}
		if _, err := s.client.Embed(ctx, texts); err != nil {
			return err
		}
	}
	return s.inner.Write(ctx, doc, chunks)
}

func (s *embedSink) Probe(ctx context.Context, dependency string) error {
	if dependency != embed.Dependency {
		return nil
	}
	_, err := s.client.Probe(ctx)
	return err
}

// TestHungEmbedderPausesIdleWorker: the embedder hangs while worker A has
// every request in hand and worker B has none. A finds the outage when
// its requests time out; B, which sends the embedder nothing, must pause
// too: not ready, one "sink down" line, its probe confirming A's notice.
// Once the embedder answers, both resume with one "sink up again" line
// each, and every request is acked on its first delivery, none
// dead-lettered.
func TestHungEmbedderPausesIdleWorker(t *testing.T) {
	cfg := outageConfig()
	e := newEnv(t, cfg)
	api := embedtest.Start(t, embedtest.Config{})
	start := func(logs *logCounter) (*worker.Worker, *results) {
		ec := embed.DefaultConfig()
		ec.URL, ec.Model, ec.Timeout = api.URL(), "test-model", time.Second
		client, err := embed.New(ec, embed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sink := &embedSink{inner: subjectsink.New(e.js, cfg.ChunksPrefix, 16), client: client}
		w, res, _ := e.startWorker(worker.Options{Sink: sink, Logger: slog.New(logs)})
		return w, res
	}
	logsA, logsB := &logCounter{}, &logCounter{}
	a, resA := start(logsA)
	testutil.WaitFor(t, time.Minute, "worker A ready", a.Ready)

	api.Hold()
	docs := markdownDocs(3) // fewer than A fetches at once
	for id, c := range docs {
		e.publish("ingest.docs", messages.IngestRequest{V: 1, ID: id, Content: c}, "")
	}
	testutil.WaitFor(t, time.Minute, "every request in A's hands", func() (bool, string) {
		info := e.consumerInfo()
		return info.NumPending == 0 && info.NumAckPending == len(docs), fmt.Sprintf("pending %d, ack pending %d", info.NumPending, info.NumAckPending)
	})
	b, resB := start(logsB)
	testutil.WaitFor(t, time.Minute, "A paused by its own timed-out requests", func() bool { return !a.Ready() })
	testutil.WaitFor(t, time.Minute, "B, with no work, paused too", func() bool { return !b.Ready() })
	if n := len(resB.snapshot()); n != 0 {
		t.Errorf("B processed %d deliveries during the hang, want none", n)
	}
	if up := metricValue(t, b.Metrics().SinkUp.WithLabelValues(embed.Dependency)); up != 0 {
		t.Errorf("B's sink_up{embedder} = %v during the hang, want 0", up)
	}

	api.Release()
	testutil.WaitFor(t, time.Minute, "every request acked", func() bool { return len(resA.finals())+len(resB.finals()) == len(docs) })
	testutil.WaitFor(t, time.Minute, "both ready again", func() bool { return a.Ready() && b.Ready() })
	for _, res := range []*results{resA, resB} {
		for seq, r := range res.finals() {
			if r.Outcome != worker.OutcomeAcked || r.Delivery != 1 {
				t.Errorf("seq %d: %s on delivery %d, want acked on the first", seq, r.Outcome, r.Delivery)
			}
		}
	}
	checkComplete(t, e.records(), docs)
	if n := len(e.streamMsgs(cfg.DLQStream)); n != 0 {
		t.Errorf("%d dead letters, want 0", n)
	}
	for name, logs := range map[string]*logCounter{"A": logsA, "B": logsB} {
		if down, back := logs.count("sink down"), logs.count("sink up again"); down != 1 || back != 1 {
			t.Errorf("worker %s: %d 'sink down' and %d 'sink up again' log lines, want one each", name, down, back)
		}
	}
}
