package code_test

import (
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"

	"github.com/chunkstream/chunkstream/chunking/code"
)

// BenchmarkStdlib chunks a sample of the Go and Python standard
// libraries (every 8th file by path), of the JavaScript tree (every 2nd)
// and the TypeScript tree (every file, .ts and .tsx) at the default
// max_char and in target mode (target_char 1000, chunk-target), and runs
// the parse alone on the same bytes (parse-only).
// bench/code-splitters runs LangChain.js on the same files.
func BenchmarkStdlib(b *testing.B) {
	for _, tc := range []struct {
		tree string
		step int
		exts []string
	}{{"go", 8, []string{".go"}}, {"python", 8, []string{".py"}}, {"js", 2, []string{".js", ".mjs", ".cjs"}},
		{"ts", 1, []string{".ts", ".tsx"}}} {
		b.Run(tc.tree, func(b *testing.B) {
			dir, files := treeFiles(b, tc.tree, tc.step, tc.exts...)
			docs, total := readDocs(b, dir, files)
			c, err := code.New(code.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			b.Run("chunk", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(total)
				loopCPU(b, total, func() {
					for _, d := range docs {
						_, _, _ = c.Chunk(d)
					}
				})
			})
			t, err := code.New(code.Config{MaxChar: code.DefaultConfig().MaxChar, TargetChar: 1000})
			if err != nil {
				b.Fatal(err)
			}
			b.Run("chunk-target", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(total)
				loopCPU(b, total, func() {
					for _, d := range docs {
						_, _, _ = t.Chunk(d)
					}
				})
			})
			b.Run("parse-only", func(b *testing.B) {
				b.SetBytes(total)
				loopCPU(b, total, func() {
					for _, d := range docs {
						_ = c.ParseOnly(d)
					}
				})
			})
		})
	}
}

// loopCPU runs f in b.Loop and reports the process's CPU time per
// iteration and the bytes chunked per CPU second (cpu-MB/s): the speed
// per core, whatever else the machine is doing.
func loopCPU(b *testing.B, bytes int64, f func()) {
	start := testutil.ProcessCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := testutil.ProcessCPU() - start; n > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Milliseconds())/float64(n), "cpu-ms/op")
		b.ReportMetric(float64(bytes)*float64(n)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}
