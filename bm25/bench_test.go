package bm25

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// The benchmarks compare the encoder with the two simpler designs it
// grew from, on the same texts in one run, so that each part has to earn
// its keep:
//
//   - simple: a byte loop that lowercases each token into a buffer and
//     counts it in a map by its bytes, hashing each distinct token of a
//     call (simpleEncoder, below);
//   - cache: the same byte loop finding the tokens, the ASCII ones counted
//     through the vocabulary cache (countBytewise, below);
//   - cache+swar: the encoder, which also finds the tokens eight bytes at
//     a time.

// simpleEncoder is the straightforward encoder: one pass over the bytes,
// a map by token, no state kept between calls but its buffers.
type simpleEncoder struct {
	buf   []byte
	pos   map[string]int32
	stats []stat
	sc    *scratch // for documentVector
}

func newSimpleEncoder() *simpleEncoder {
	return &simpleEncoder{pos: map[string]int32{}, sc: newScratch(vocabMin)}
}

func (s *simpleEncoder) document(text string, avgdl float64) Vector {
	clear(s.pos)
	stats := s.stats[:0]
	for i := 0; i < len(text); {
		buf := s.buf[:0]
		j := i
		for j < len(text) {
			if c := text[j]; c < utf8.RuneSelf {
				if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z') {
					break
				}
				buf = append(buf, c|0x20)
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			j += size
		}
		s.buf = buf
		if j == i { // a separator
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		i = j
		if p, ok := s.pos[string(buf)]; ok {
			stats[p].tf++
		} else {
			s.pos[string(buf)] = int32(len(stats))
			stats = append(stats, stat{fnv1a32(buf), 1})
		}
	}
	s.stats = stats
	sc := s.sc
	if len(sc.stats) < len(stats) {
		sc.stats = make([]stat, len(stats))
	}
	copy(sc.stats, stats)
	sc.shared, sc.longAt = true, sc.longAt[:0] // merge by hash: it does not know which tokens share one
	return sc.documentVector(len(stats), avgdl)
}

// countBytewise is count with a byte loop finding the tokens in place of
// the bitmaps: the ASCII tokens of at most shortMax bytes through the
// vocabulary cache, the others through countRun.
func (sc *scratch) countBytewise(text string) (no int) {
	sc.begin(len(text))
	if maxRuns := len(text)/2 + 1; len(sc.stats) < maxRuns {
		sc.stats = make([]stat, maxRuns)
	}
	var end [2 * shortMax]byte
	endAt := max(0, len(text)-shortMax)
	copy(end[:], text[endAt:])
	isAlnum := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z' }
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && !isAlnum(c) {
			i++
			continue
		}
		s := i
		if c < utf8.RuneSelf {
			for i < len(text) && isAlnum(text[i]) {
				i++
			}
			if i == len(text) || text[i] < utf8.RuneSelf { // an ASCII token
				if l := i - s; l <= shortMax {
					var k0, k1 uint64
					if s+shortMax <= len(text) {
						k0, k1 = load64(text, s), load64(text, s+8)
					} else {
						k0, k1 = load64(end[:], s-endAt), load64(end[:], s-endAt+8)
					}
					k0 = (k0 | 0x20*ones) & keyMasks[l][0]
					k1 = (k1 | 0x20*ones) & keyMasks[l][1]
					if v := sc.lookup(k0, k1); v != nil {
						if v.epoch != sc.epoch {
							v.epoch, v.pos = sc.epoch, uint32(no)
							sc.stats[no] = stat{v.fnv, 0}
							no++
						}
						sc.stats[v.pos].tf++
						continue
					}
				}
				no = sc.countRun(text[s:i], false, no)
				continue
			}
		}
		for i < len(text) && (text[i] >= utf8.RuneSelf || isAlnum(text[i])) {
			i++
		}
		no = sc.countRun(text[s:i], true, no)
	}
	return no
}

// lookup returns the vocabulary entry keyed k0, k1 if it is there and not
// flagged sharedKey, as the fast loop finds it.
func (sc *scratch) lookup(k0, k1 uint64) *vocabEntry {
	mask := len(sc.vocab) - 1
	for i := int((k0+k1*sc.mul1)*sc.mul0>>sc.shift) & mask; ; i = (i + 1) & mask {
		v := &sc.vocab[i]
		if v.k0 == k0 && v.k1 == k1 {
			return v
		}
		if v.k0 == 0 {
			return nil
		}
	}
}

// TestBenchmarkVariants checks that the designs the benchmarks compare
// give the reference vectors.
func TestBenchmarkVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	simple, sc := newSimpleEncoder(), newScratch(vocabMin)
	for range 300 {
		text := randomText(rng, rng.IntN(3000), 1+rng.IntN(400))
		checkDocument(t, simple.document(text, 100), text, 100)
		checkDocument(t, sc.documentVector(sc.countBytewise(text), 100), text, 100)
	}
}

// corpusPieces returns the Markdown files of the shared corpus, in path
// order, up to 4 MiB, cut at blank lines into pieces of at most 2 KiB
// (a chunk's size).
func corpusPieces(b *testing.B) (pieces []string, size int) {
	root := testutil.SharedDir(b, "corpus", "markdown")
	var paths []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return nil
	})
	slices.Sort(paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		var piece strings.Builder
		for para := range strings.SplitAfterSeq(string(data), "\n\n") {
			if piece.Len() > 0 && piece.Len()+len(para) > 2048 {
				pieces = append(pieces, piece.String())
				piece.Reset()
			}
			piece.WriteString(para)
		}
		if piece.Len() > 0 {
			pieces = append(pieces, piece.String())
		}
		if size += len(data); size >= 4<<20 {
			break
		}
	}
	return pieces, size
}

// benchmarkTexts runs encode over texts per iteration, reporting MB/s
// (SetBytes) and the same from the thread's CPU time (cpu-MB/s), which a
// loaded machine disturbs less.
func benchmarkTexts(b *testing.B, texts []string, encode func(string)) {
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		t0 := testutil.ThreadCPU()
		for _, t := range texts {
			encode(t)
		}
		cpu += testutil.ThreadCPU() - t0
	}
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkDocument compares the three designs on the Markdown corpus, in
// chunk-sized pieces. Run it as
//
//	go test -run '^$' -bench Document -count 5 ./bm25
func BenchmarkDocument(b *testing.B) {
	pieces, _ := corpusPieces(b)
	simple := newSimpleEncoder()
	cache := newScratch(vocabMin)
	enc, _ := NewEncoder(DefaultAvgDL)
	b.Run("simple", func(b *testing.B) {
		benchmarkTexts(b, pieces, func(t string) { simple.document(t, DefaultAvgDL) })
	})
	b.Run("cache", func(b *testing.B) {
		benchmarkTexts(b, pieces, func(t string) { cache.documentVector(cache.countBytewise(t), DefaultAvgDL) })
	})
	b.Run("cache+swar", func(b *testing.B) {
		benchmarkTexts(b, pieces, func(t string) { enc.Document(t) })
	})
}

// BenchmarkAdversarial runs the encoder over texts that defeat its fast
// paths: every word new, thousands of distinct words of one index, no
// ASCII, one huge token. A super-linear cost would show as a rate far
// below the others.
func BenchmarkAdversarial(b *testing.B) {
	const size = 1 << 20
	rng := rand.New(rand.NewPCG(17, 18))
	var distinct, colliding, greek strings.Builder
	for i := 0; distinct.Len() < size; i++ {
		fmt.Fprintf(&distinct, "w%dx%d ", i, rng.Uint32())
	}
	// Words of one FNV-1a state extend alike: 2^k distinct tokens of one
	// index from k colliding pairs.
	pairs := collidingPairs(12)
	for colliding.Len() < size {
		for _, p := range pairs {
			colliding.WriteString(p[rng.IntN(2)])
		}
		colliding.WriteByte(' ')
	}
	for greek.Len() < size {
		greek.WriteString("Ο Σίσυφος κυλά τον βράχο ξανά και ξανά, ΣΊΣΥΦΟΣ. ")
	}
	enc, _ := NewEncoder(DefaultAvgDL)
	for _, tc := range []struct{ name, text string }{
		{"distinct", distinct.String()},
		{"colliding", colliding.String()},
		{"greek", greek.String()},
		{"one-token", strings.Repeat("a", size)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchmarkTexts(b, []string{tc.text}, func(t string) { enc.Document(t) })
		})
	}
}

// collidingPairs returns k pairs of distinct lowercase words such that,
// after any choice of one word of each earlier pair, the two words of the
// next pair leave FNV-1a in the same state.
func collidingPairs(k int) [][2]string {
	rng := rand.New(rand.NewPCG(19, 20))
	state := uint32(fnvOffset32)
	var pairs [][2]string
	for len(pairs) < k {
		seen := map[uint32]string{}
		for {
			b := make([]byte, 6)
			for i := range b {
				b[i] = byte('a' + rng.IntN(26))
			}
			h := state
			for _, c := range b {
				h = (h ^ uint32(c)) * fnvPrime32
			}
			if w, ok := seen[h]; ok && w != string(b) {
				pairs = append(pairs, [2]string{w, string(b)})
				state = h
				break
			}
			seen[h] = string(b)
		}
	}
	return pairs
}

// BenchmarkQuery encodes short queries, with the one-shot function and
// with an Encoder.
func BenchmarkQuery(b *testing.B) {
	queries := []string{"how to rotate nats credentials", "JetStream consumer ack wait", "Kubernetes pod disruption budget", "σίσυφος"}
	enc, _ := NewEncoder(DefaultAvgDL)
	b.Run("Query", func(b *testing.B) { benchmarkTexts(b, queries, func(t string) { Query(t) }) })
	b.Run("Encoder.Query", func(b *testing.B) { benchmarkTexts(b, queries, func(t string) { enc.Query(t) }) })
}
