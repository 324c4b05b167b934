package tokens

import (
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"

	"github.com/tiktoken-go/tokenizer"
)

// BenchmarkCount counts samples of the Markdown corpus (4 MB: every fifth
// file, 16 KiB of each at most) with this package and, for comparison,
// with github.com/tiktoken-go/tokenizer's own encoder.
func BenchmarkCount(b *testing.B) {
	var texts []string
	size := 0
	for _, s := range benchSamples(b) {
		texts = append(texts, s)
		size += len(s)
	}
	if size == 0 {
		b.Skip("corpus absent")
	}
	for _, name := range Names() {
		e := mustGet(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			c := e.Counter()
			defer c.Release()
			cpu, n := testutil.ProcessCPU(), 0
			for b.Loop() {
				for _, s := range texts {
					c.CountString(s)
				}
				n++
			}
			b.ReportMetric(float64((testutil.ProcessCPU()-cpu).Milliseconds())/float64(n), "cpu-ms/op")
		})
		b.Run(name+"/library", func(b *testing.B) {
			lib, err := tokenizer.Get(tokenizer.Encoding(name))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(size))
			cpu, n := testutil.ProcessCPU(), 0
			for b.Loop() {
				for _, s := range texts {
					_, _ = lib.Count(s)
				}
				n++
			}
			b.ReportMetric(float64((testutil.ProcessCPU()-cpu).Milliseconds())/float64(n), "cpu-ms/op")
		})
	}
}
