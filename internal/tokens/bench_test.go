package tokens

import (
	"slices"
	"testing"
	"time"

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

// BenchmarkFastPaths times each hand-written fast path of the counter
// against the simplest correct version, in the same iterations and in
// alternating order, over the corpus samples (cl100k_base), and reports
// the simple version's time over the fast one's:
//   - cache: the tokens of every piece without the cache of short pieces;
//   - merge: the pieces that are no token merged with the heap (as long
//     pieces are) rather than the scan;
//   - run: runs of letters read one code point at a time (scanner.at)
//     rather than ASCII bytes directly;
//   - table: pieces and two-byte parts looked up in a map rather than the
//     table;
//   - pairs: two-byte parts looked up in the short table rather than the
//     pairs array.
func BenchmarkFastPaths(b *testing.B) {
	var all []byte
	for _, s := range benchSamples(b) {
		all = append(all, s...)
	}
	if len(all) == 0 {
		b.Skip("corpus absent")
	}
	e := mustGet(b, CL100KBase)
	c := e.Counter()
	defer c.Release()
	ranks := map[string]uint32{}
	for r := range uint32(100256) {
		if tok, ok := e.ranks.token(r); ok {
			ranks[tok] = r
		}
	}
	sc := scanner{s: all}
	var pieces, merged, twos [][]byte
	var runs []int
	for i := 0; i < len(all); {
		j := sc.nextCL100K(i)
		p := all[i:j]
		pieces = append(pieces, p)
		if _, ok := e.ranks.rank(p); !ok && len(p) > 1 && len(p) < heapFrom {
			merged = append(merged, p)
		}
		for k := 0; k+2 <= len(p); k += 2 {
			twos = append(twos, p[k:k+2])
		}
		if cl, _ := sc.at(i); cl&cLetter != 0 {
			runs = append(runs, i)
		}
		i = j
	}
	lookups := append(slices.Clone(pieces), twos...)
	cases := []struct {
		name         string
		n            int
		fast, simple func(k int)
	}{
		{"cache", len(pieces), func(k int) { c.pieceTokens(pieces[k]) }, func(k int) { c.slowPiece(pieces[k]) }},
		{"merge", len(merged), func(k int) { c.m.parts(merged[k]) }, func(k int) { c.m.partsHeap(merged[k]) }},
		{"run", len(runs), func(k int) { sc.run(runs[k], cLetter) }, func(k int) {
			for i := runs[k]; ; {
				cl, n := sc.at(i)
				if n == 0 || cl&cLetter == 0 {
					break
				}
				i += n
			}
		}},
		{"table", len(lookups), func(k int) { e.ranks.rank(lookups[k]) }, func(k int) { _ = ranks[string(lookups[k])] }},
		{"pairs", len(twos), func(k int) { e.ranks.rank(twos[k]) }, func(k int) { e.ranks.probe(twos[k]) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var fast, simple time.Duration
			timed := func(f func(int), from, to int, d *time.Duration) {
				start := time.Now()
				for k := from; k < to; k++ {
					f(k)
				}
				*d += time.Since(start)
			}
			for b.Loop() {
				for k := 0; k < tc.n; k += 256 {
					to := min(k+256, tc.n)
					if k/256%2 == 0 {
						timed(tc.fast, k, to, &fast)
						timed(tc.simple, k, to, &simple)
					} else {
						timed(tc.simple, k, to, &simple)
						timed(tc.fast, k, to, &fast)
					}
				}
			}
			b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
		})
	}
}
