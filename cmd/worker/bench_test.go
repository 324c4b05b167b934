package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// BenchmarkLocalVsSplit runs `chunk split` and local mode (the whole
// pipeline through an embedded JetStream) over ../shared/corpus/markdown
// with the same flags, as separate processes, in turn in each iteration,
// and reports each one's documents/s and CPU per document, local mode's
// peak RSS, and local mode's CPU against split's (cpu-x-split, the median
// of the iterations' ratios). With CHUNKSTREAM_BENCH_BASELINE=FILE, each
// iteration also runs that other worker binary's local mode (an older
// build) right after, and base-cpu-x-split is its ratio. Run it alone:
//
//	go test -run '^$' -bench LocalVsSplit/workers=2 -benchtime 3x ./cmd/worker
func BenchmarkLocalVsSplit(b *testing.B) {
	corpus := testutil.SharedDir(b, "corpus", "markdown")
	worker := testutil.Binary(b, "./cmd/worker")
	chunk := testutil.Binary(b, "./cmd/chunk")
	baseline := os.Getenv("CHUNKSTREAM_BENCH_BASELINE")
	summary := regexp.MustCompile(`(\d+) (?:documents|files), (\d+) chunks, ([\d.]+) MB`)
	type result struct {
		docs      float64
		wall, cpu time.Duration
		peak      int64
	}
	run := func(b *testing.B, bin string, args ...string) result {
		cmd := exec.Command(bin, args...)
		start := time.Now()
		out, _ := cmd.CombinedOutput() // exit 1: the corpus holds one non-UTF-8 file
		r := result{wall: time.Since(start)}
		m := summary.FindSubmatch(out)
		if m == nil {
			b.Fatalf("%s: no summary in output:\n%s", bin, out)
		}
		r.docs, _ = strconv.ParseFloat(string(m[1]), 64)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.peak = ru.Maxrss
		}
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return r
	}
	perDoc := func(r result) float64 { return r.cpu.Seconds() * 1e3 / r.docs }
	for _, workers := range []string{"1", "2"} {
		b.Run("workers="+workers, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out.jsonl")
			local := func(bin string) result {
				defer os.Remove(out)
				return run(b, bin, "-local", corpus, "-out", out, "-workers", workers, "-no-progress")
			}
			var split, ours, base []result
			var ratio, baseRatio []float64
			for b.Loop() {
				s := run(b, chunk, "split", "-workers", workers, "-o", out, corpus)
				os.Remove(out)
				l := local(worker)
				split, ours = append(split, s), append(ours, l)
				ratio = append(ratio, perDoc(l)/perDoc(s))
				if baseline != "" {
					o := local(baseline)
					base = append(base, o)
					baseRatio = append(baseRatio, perDoc(o)/perDoc(s))
				}
			}
			b.ReportMetric(median(ratio), "cpu-x-split")
			report := func(name string, rs []result) {
				var rate, cpu []float64
				var peak int64
				for _, r := range rs {
					rate = append(rate, r.docs/r.wall.Seconds())
					cpu = append(cpu, perDoc(r))
					peak = max(peak, r.peak)
				}
				b.ReportMetric(median(rate), name+"-docs/s")
				b.ReportMetric(median(cpu), name+"-cpu-ms/doc")
				if name != "split" {
					b.ReportMetric(float64(peak)/1024, name+"-peak-MiB")
				}
			}
			report("split", split)
			report("local", ours)
			if baseline != "" {
				report("base", base)
				b.ReportMetric(median(baseRatio), "base-cpu-x-split")
			}
			b.Logf("cpu-x-split per iteration: %.2f; baseline's: %.2f", ratio, baseRatio)
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
