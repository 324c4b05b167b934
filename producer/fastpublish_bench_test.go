package producer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking"
)

// BenchmarkBackfillFastIngest backfills 100,000 documents of 1 KiB held
// in memory (a split input, as a mailbox's threads are; -force; over TCP to an in-process server with INGEST allowing fast-ingest
// batches, nothing consuming) four ways in each iteration, back to back:
// through fast-ingest batches, one publish per request (the path taken
// without allow_batched), in bulk requests (BackfillOptions.Bulk) through
// fast-ingest batches, and a loop publishing as many messages of the
// request's size on the wire with PublishMsgAsync and a window of
// MaxPending, each with a Nats-Msg-Id, which is what `nats bench js pub
// async --dedup` measures. All three publish into INGEST, purged after
// each, so that they meet the same stream (its duplicate window holds the
// ids of all four). It reports each rate
// (documents or messages per second, medians), the fast rate as a share
// of the classic and loop rates, and the bulk rate as a share of the
// loop's (medians of the per-iteration ratios).
//
//	go test -run '^$' -bench BackfillFastIngest -benchtime 3x ./producer
func BenchmarkBackfillFastIngest(b *testing.B) {
	const n, size, window = 100_000, 1024, 256
	e := newBenchEnv(b)
	ctx := context.Background()
	// The documents are in memory, as a mailbox's threads are, so that the
	// rates compare publishing, not reading files.
	parts := make([]chunking.Document, n)
	for i := range parts {
		parts[i] = chunking.Document{Path: fmt.Sprintf("part-%06d.md", i), Content: mdContent(i, size)[:size]}
	}
	split := func(context.Context, string) ([]chunking.Document, []chunking.Warning, error) { return parts, nil, nil }
	p := New(e.nc, e.js, Options{})
	req, id, err := p.Request(ctx, Document{ID: "d000/f000000.md", Content: mdContent(0, size)[:size]})
	if err != nil {
		b.Fatal(err)
	}
	m, err := p.message(req, id, "")
	if err != nil {
		b.Fatal(err)
	}
	wire := len(m.Data)
	ajs, err := jetstream.New(e.nc, jetstream.WithPublishAsyncMaxPending(window))
	if err != nil {
		b.Fatal(err)
	}
	purge := func(name string) {
		st, err := e.js.Stream(ctx, name)
		if err == nil {
			err = st.Purge(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	retries := 0
	backfill := func(classic, bulk bool) float64 {
		o := BackfillOptions{Paths: []string{"bench.input"}, Split: split, Force: true, Bulk: bulk}
		if classic {
			allowBatches(b, e.js, "INGEST", false)
			defer allowBatches(b, e.js, "INGEST", true)
		}
		s, err := New(e.nc, e.js, Options{MaxPending: window}).Backfill(ctx, o)
		if err != nil || s.Sent != n {
			b.Fatalf("Backfill = %+v, %v", s.Stats, err)
		}
		retries += s.Retries
		purge("INGEST")
		return float64(n) / s.Elapsed.Seconds()
	}
	var fast, classic, bulk, ref, ofClassic, ofRef, bulkOfRef []float64
	b.SetBytes(int64(n) * size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f := backfill(false, false)
		c := backfill(true, false)
		k := backfill(false, true)
		r := asyncPublishRate(b, ajs, len(fast), n, wire)
		purge("INGEST")
		fast, classic, bulk, ref = append(fast, f), append(classic, c), append(bulk, k), append(ref, r)
		ofClassic, ofRef, bulkOfRef = append(ofClassic, f/c), append(ofRef, f/r), append(bulkOfRef, k/r)
	}
	b.StopTimer()
	b.ReportMetric(median(bulk), "bulk_docs/s")
	b.ReportMetric(median(bulkOfRef), "bulk/async")
	b.ReportMetric(median(fast), "fast_docs/s")
	b.ReportMetric(median(classic), "classic_docs/s")
	b.ReportMetric(median(ref), "async_msgs/s")
	b.ReportMetric(median(ofRef), "fast/async")
	b.ReportMetric(median(ofClassic), "fast/classic")
	// Re-sends on an undisturbed server are acknowledgements presumed lost
	// (StallTimeout without any): a loaded machine can pause that long.
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	b.Logf("per run: bulk %v docs/s, fast %v docs/s, classic %v docs/s, async publish %v msgs/s of %d B", rounded(bulk), rounded(fast), rounded(classic), rounded(ref), wire)
}

// asyncPublishRate publishes n messages of size bytes, each with its own
// Nats-Msg-Id, on ingest.bench<run> through js (its async window), waits for
// every PubAck and returns messages per second.
func asyncPublishRate(b *testing.B, js jetstream.JetStream, run, n, size int) float64 {
	data := make([]byte, size)
	subject := fmt.Sprintf("ingest.bench%d", run)
	start := time.Now()
	for i := range n {
		m := nats.NewMsg(subject)
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%d-%d", run, i))
		m.Data = data
		if _, err := js.PublishMsgAsync(m, jetstream.WithStallWait(time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("PubAcks still pending after a minute")
	}
	return float64(n) / time.Since(start).Seconds()
}
