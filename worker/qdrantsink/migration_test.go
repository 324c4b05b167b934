package qdrantsink_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/qdrant/go-client/qdrant"

	"github.com/chunkstream/chunkstream/bm25"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// migration is a deployment whose workers change their BM25 encoding:
// one JetStream server and one Qdrant, workers started and stopped.
type migration struct {
	t      *testing.T
	nc     *nats.Conn
	js     jetstream.JetStream
	top    *topology.Handles
	cfg    worker.Config
	qd     *qdranttest.Server
	finals atomic.Int64
}

// startWorker starts a worker whose Qdrant sink has qcfg (its address
// filled in) and returns the function that stops it, or New's error.
func (m *migration) startWorker(qcfg qdrantsink.Config) (func(), error) {
	qcfg.Addr = m.qd.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sink, err := qdrantsink.New(ctx, qcfg, worker.NewKVRecords(m.top.Docs), nil, nil)
	if err != nil {
		return nil, err
	}
	w, err := worker.New(m.nc, m.js, m.top, worker.Options{Config: m.cfg, Sink: sink, OnResult: func(r worker.Result) {
		if r.Final() {
			m.finals.Add(1)
		}
	}})
	if err != nil {
		m.t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(runCtx); err != nil {
			m.t.Errorf("Run: %v", err)
		}
	}()
	return func() { stop(); <-done; _ = sink.Close() }, nil
}

// backfill sends the folder (only the stale documents with resendStale)
// and waits until the workers finished what it sent.
func (m *migration) backfill(dir string, resendStale bool) producer.Stats {
	m.t.Helper()
	before := m.finals.Load()
	s, err := producer.New(m.nc, m.js, producer.Options{Subject: "ingest.docs"}).
		Backfill(context.Background(), producer.BackfillOptions{Paths: []string{dir}, ResendStale: resendStale})
	if err != nil || s.Failed > 0 {
		m.t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	testutil.WaitFor(m.t, 2*time.Minute, "the requests sent finished", func() bool { return m.finals.Load()-before >= int64(s.Sent) })
	return s.Stats
}

// TestEncodingMigration follows the runbook of docs/operations.md
// ("Changing the BM25 encoding"): a collection written with one encoding
// refuses a worker of another, naming the way out; workers of the new
// encoding writing a new collection, and producer -resend-stale, re-send
// exactly the documents written with the old one; the alias the readers
// search moves to the new collection in one step.
func TestEncodingMigration(t *testing.T) {
	ns := jstest.Start(t, t.TempDir(), -1)
	m := &migration{t: t}
	var err error
	if m.nc, err = nats.Connect(ns.ClientURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.nc.Close)
	if m.js, err = jetstream.New(m.nc); err != nil {
		t.Fatal(err)
	}
	m.cfg = worker.DefaultConfig()
	m.cfg.MetricsAddr, m.cfg.Concurrency = "", 8
	if m.top, err = worker.Setup(context.Background(), m.js, m.cfg); err != nil {
		t.Fatal(err)
	}
	m.qd = qdranttest.Start(t)
	dir := t.TempDir()
	for i := range 20 {
		text := fmt.Sprintf("# Note %d\n\nRotating credentials, step %d of the runbook.\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%02d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	client := m.qd.Client(t)

	// The deployment: the default encoding, readers on the alias chunks.
	old := qdrantsink.DefaultConfig()
	old.Collection = "chunks_v1"
	stopOld, err := m.startWorker(old)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.backfill(dir, false); s.Sent != 20 {
		t.Fatalf("first backfill sent %d, want 20", s.Sent)
	}
	if err := client.CreateAlias(ctx, "chunks", "chunks_v1"); err != nil {
		t.Fatal(err)
	}

	// A worker of another average length on the same collection refuses
	// to start and says how to migrate.
	next := qdrantsink.DefaultConfig()
	next.Collection, next.AvgDL = "chunks_v1", 100
	if _, err := m.startWorker(next); !errors.Is(err, qdrantsink.ErrEncodingMismatch) ||
		!strings.Contains(err.Error(), "CHUNKSTREAM_QDRANT_COLLECTION") || !strings.Contains(err.Error(), "producer -resend-stale") {
		t.Fatalf("a worker of avg_len 100 on chunks_v1: %v, want ErrEncodingMismatch naming the migration", err)
	}

	// The migration: new workers write a new collection; the re-send
	// sends exactly the documents written with the old encoding.
	stopOld()
	next.Collection = "chunks_v2"
	stopNext, err := m.startWorker(next)
	if err != nil {
		t.Fatal(err)
	}
	defer stopNext()
	if err := os.WriteFile(filepath.Join(dir, "n00.md"), []byte("# Note 0\n\nEdited meanwhile.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := m.backfill(dir, true); s.Sent != 19 || s.Stale != 19 {
		t.Errorf("-resend-stale sent %d (%d stale), want the 19 unchanged documents written with the old encoding", s.Sent, s.Stale)
	}
	if s := m.backfill(dir, false); s.Sent != 1 {
		t.Errorf("the next backfill sent %d, want the edited document alone", s.Sent)
	}
	if s := m.backfill(dir, true); s.Sent != 0 {
		t.Errorf("a second -resend-stale sent %d, want none", s.Sent)
	}
	enc, err := bm25.NewEncoder(bm25.English, 100)
	if err != nil {
		t.Fatal(err)
	}
	pts := m.qd.Points("chunks_v2")
	if len(pts) != 20 {
		t.Fatalf("chunks_v2 holds %d points, want the 20 documents' chunks", len(pts))
	}
	for _, p := range pts {
		got := p.GetVectors().GetVectors().GetVectors()[qdrantsink.VectorBM25].GetSparse()
		if want := enc.Document(p.GetPayload()[qdrantsink.FieldContent].GetStringValue()); !slices.Equal(got.GetValues(), want.Values) {
			t.Fatalf("point %s of chunks_v2: bm25 %v, want avg_len 100's %v", p.GetId().GetUuid(), got, want)
		}
	}

	// The switch: the alias moves in one request; searches follow it.
	if err := client.UpdateAliases(ctx, []*qdrant.AliasOperations{
		qdrant.NewAliasDelete("chunks"), qdrant.NewAliasCreate("chunks", "chunks_v2"),
	}); err != nil {
		t.Fatal(err)
	}
	hits, by, err := qdrantsink.Search(ctx, client, "edited", qdrantsink.SearchOptions{Collection: "chunks", Limit: 3})
	if err != nil || by != qdrantsink.SearchBM25 || len(hits) != 1 || hits[0].DocID != "n00.md" {
		t.Errorf("search of the alias after the switch = %+v, %s, %v; want the edited note, by bm25", hits, by, err)
	}
}
