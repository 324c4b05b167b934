package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// BenchmarkLocalVsSplit runs local mode (the whole pipeline through an
// embedded JetStream) and `chunk split` over ../shared/corpus/markdown
// with the same flags, in the same run, as separate processes, reporting
// documents/s, chunks/s, MB/s, peak RSS and CPU per document, and on
// each local row its CPU against the split row before it (cpu-x-split).
// Run it alone:
//
//	go test -run '^$' -bench LocalVsSplit -benchtime 1x ./cmd/worker
func BenchmarkLocalVsSplit(b *testing.B) {
	corpus := testutil.SharedDir(b, "corpus", "markdown")
	worker := testutil.Binary(b, "./cmd/worker")
	chunk := testutil.Binary(b, "./cmd/chunk")
	summary := regexp.MustCompile(`(\d+) (?:documents|files), (\d+) chunks, ([\d.]+) MB`)
	splitCPU := map[string]float64{} // CPU ms per document of split, by workers=N
	for _, tc := range []struct {
		name string
		args func(out string) (string, []string)
	}{
		{"split/workers=1", func(out string) (string, []string) {
			return chunk, []string{"split", "-workers", "1", "-o", out, corpus}
		}},
		{"local/workers=1", func(out string) (string, []string) {
			return worker, []string{"-local", corpus, "-out", out, "-workers", "1", "-no-progress"}
		}},
		{"split/workers=2", func(out string) (string, []string) {
			return chunk, []string{"split", "-workers", "2", "-o", out, corpus}
		}},
		{"local/workers=2", func(out string) (string, []string) {
			return worker, []string{"-local", corpus, "-out", out, "-workers", "2", "-no-progress"}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out.jsonl")
			var docs, chunks, mb float64
			var peak int64
			var elapsed, cpu time.Duration
			for b.Loop() {
				bin, args := tc.args(out)
				cmd := exec.Command(bin, args...)
				start := time.Now()
				stderr, _ := cmd.CombinedOutput() // exit 1: the corpus holds one non-UTF-8 file
				elapsed += time.Since(start)
				m := summary.FindSubmatch(stderr)
				if m == nil {
					b.Fatalf("%s: no summary in output:\n%s", tc.name, stderr)
				}
				docs, _ = strconv.ParseFloat(string(m[1]), 64)
				chunks, _ = strconv.ParseFloat(string(m[2]), 64)
				mb, _ = strconv.ParseFloat(string(m[3]), 64)
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peak = max(peak, ru.Maxrss)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				os.Remove(out)
			}
			secs := elapsed.Seconds() / float64(b.N)
			b.ReportMetric(docs/secs, "docs/s")
			b.ReportMetric(chunks/secs, "chunks/s")
			b.ReportMetric(mb/secs, "MB/s")
			b.ReportMetric(float64(peak)/1024, "peak-MiB")
			perDoc := cpu.Seconds() * 1e3 / float64(b.N) / docs
			b.ReportMetric(perDoc, "cpu-ms/doc")
			kind, workers, _ := strings.Cut(tc.name, "/")
			if kind == "split" {
				splitCPU[workers] = perDoc
			} else if s := splitCPU[workers]; s > 0 {
				b.ReportMetric(perDoc/s, "cpu-x-split")
			}
		})
	}
}
