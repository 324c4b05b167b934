package producer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/topology"
)

// BenchmarkBackfill4K publishes a folder of 10,000 files of ~4 KB (two
// backfills per iteration, -force, one request per message and in bulk
// requests, over TCP to an in-process server with the INGEST stream) and
// reports documents/s of each and MB/s. When the nats CLI
// is on PATH (go install github.com/nats-io/natscli/nats@v0.5.0), it
// also runs `nats bench js pub async` with the same count and message
// size against the same server, and reports its rate and each backfill's share of it.
//
//	go test -run '^$' -bench Backfill4K -benchtime 3x ./producer
func BenchmarkBackfill4K(b *testing.B) {
	const n, size = 10000, 4096
	e := newBenchEnv(b)
	dir := b.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, mdContent(i, size)[:size], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	// The message size on the wire, for nats bench.
	p := New(e.nc, e.js, Options{})
	req, id, err := p.Request(ctx, Document{ID: "d00/f00000.md", Content: mdContent(0, size)[:size]})
	if err != nil {
		b.Fatal(err)
	}
	m, err := p.message(req, id, "")
	if err != nil {
		b.Fatal(err)
	}
	wire := len(m.Data)

	natsBin, _ := exec.LookPath("nats")
	if natsBin == "" {
		b.Logf("nats CLI not on PATH: no comparison")
	}
	// Each iteration runs our backfill, then nats bench with the same
	// count and message size, back to back, so both see the same machine
	// load; the medians and the median ratio are reported.
	var ours, bulk, mbs, ref, ratio, bulkRatio []float64
	retries := 0
	b.SetBytes(int64(n) * size)
	b.ResetTimer()
	for b.Loop() {
		s, err := New(e.nc, e.js, Options{MaxPending: 1024}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Force: true})
		if err != nil || s.Sent != n {
			b.Fatalf("Backfill = %+v, %v", s.Stats, err)
		}
		retries += s.Retries
		rate := float64(s.Sent) / s.Elapsed.Seconds()
		ours = append(ours, rate)
		mbs = append(mbs, float64(s.Bytes)/1e6/s.Elapsed.Seconds())
		s, err = New(e.nc, e.js, Options{MaxPending: 1024}).Backfill(ctx, BackfillOptions{Paths: []string{dir}, Force: true, Bulk: true})
		if err != nil || s.Sent != n {
			b.Fatalf("Backfill with Bulk = %+v, %v", s.Stats, err)
		}
		retries += s.Retries
		bulkRate := float64(s.Sent) / s.Elapsed.Seconds()
		bulk = append(bulk, bulkRate)
		if natsBin == "" {
			continue
		}
		b.StopTimer()
		r, out := natsBench(b, natsBin, e.url, n, wire)
		b.StartTimer()
		ref = append(ref, r)
		ratio = append(ratio, rate/r)
		bulkRatio = append(bulkRatio, bulkRate/r)
		if len(ref) == 1 {
			b.Logf("nats bench js pub async, %d msgs of %d B:\n%s", n, wire, out)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(ours), "docs/s")
	b.ReportMetric(median(bulk), "bulk_docs/s")
	b.ReportMetric(median(mbs), "MB/s")
	// Retries on an undisturbed server are publishes presumed lost
	// (StallTimeout without any PubAck): none is expected.
	b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
	if len(ref) > 0 {
		b.ReportMetric(median(ref), "natsbench_msgs/s")
		b.ReportMetric(100*median(ratio), "%_of_natsbench")
		b.ReportMetric(100*median(bulkRatio), "bulk_%_of_natsbench")
		b.Logf("per run: ours %v docs/s, in bulk requests %v docs/s; nats bench %v msgs/s", rounded(ours), rounded(bulk), rounded(ref))
	}
}

// natsBench runs `nats bench js pub async` (file storage, message ids,
// its own stream) and returns its msgs/s.
func natsBench(b *testing.B, bin, url string, n, size int) (float64, []byte) {
	out, err := exec.Command(bin, "bench", "js", "pub", "async", "benchsubject",
		"--server", url, "--create", "--purge", "--storage", "file", "--dedup", "--msgs", strconv.Itoa(n),
		"--size", strconv.Itoa(size), "--no-progress").CombinedOutput()
	if err != nil {
		b.Fatalf("nats bench: %v\n%s", err, out)
	}
	mm := regexp.MustCompile(`([\d,]+) msgs/sec`).FindSubmatch(out)
	if mm == nil {
		b.Fatalf("nats bench output without msgs/sec:\n%s", out)
	}
	r, _ := strconv.ParseFloat(string(bytes.ReplaceAll(mm[1], []byte(","), nil)), 64)
	return r, out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

type benchEnv struct {
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
}

// newBenchEnv starts a TCP-listening in-process server with the INGEST
// stream only (nothing consumes during the benchmark).
func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	ns := startTCPServer(b, b.TempDir())
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cfg := topology.DefaultConfig()
	if _, err := js.CreateStream(ctx, cfg.IngestStreamConfig()); err != nil {
		b.Fatal(err)
	}
	return &benchEnv{url: ns.ClientURL(), nc: nc, js: js}
}
