package bm25

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
)

// The parameters of the document values (see the package documentation).
const (
	// K1 is the term-frequency saturation k1.
	K1 = 1.2
	// B is the length normalisation b.
	B = 0.75
	// DefaultAvgDL is the average document length, in tokens, that
	// Document assumes.
	DefaultAvgDL = 256
)

// A Vector is a sparse vector: Values[i] is the value at Indices[i].
// Indices are distinct; they come in the order of the first occurrence of
// their token in the text. The empty vector (no tokens) has nil slices.
type Vector struct {
	Indices []uint32
	Values  []float32
}

// Document returns the document vector of text for the average document
// length DefaultAvgDL. Its scratch space lives for the one call; an
// Encoder keeps its scratch spaces, with their vocabulary caches, and
// encodes many texts faster.
func Document(text string) Vector {
	sc := newScratch(oneShotSize(len(text)))
	return sc.document(text, DefaultAvgDL)
}

// Query returns the query vector of text: the indices of its tokens, each
// once, in the order of their first occurrence, with the value 1. It does
// not depend on the average document length. Send it as the sparse query
// of a vector whose collection applies the IDF modifier.
func Query(text string) Vector {
	sc := newScratch(oneShotSize(len(text)))
	return sc.query(text)
}

// oneShotSize is the vocabulary table size of a scratch space for one text
// of n bytes: room for its tokens (at most one per two bytes) at half
// load, at most vocabMin.
func oneShotSize(n int) int {
	return min(vocabMin, 1<<bits.Len(uint(n|15)+2))
}

// An Encoder computes document vectors for one average document length,
// and query vectors. It is safe for concurrent use. Each concurrent call
// uses a scratch space: a vocabulary cache of up to about 2.5 MiB, and
// buffers the size of the longest text it has encoded. Up to GOMAXPROCS
// of them are kept between calls, across garbage collections (a sync.Pool
// would drop the caches at every other one).
type Encoder struct {
	avgdl float64
	free  chan *scratch
}

// NewEncoder returns an Encoder for the average document length avgdl, in
// tokens: a positive finite number. Every writer of one collection must
// use the same avgdl.
func NewEncoder(avgdl float64) (*Encoder, error) {
	if !(avgdl > 0) || math.IsInf(avgdl, 1) {
		return nil, fmt.Errorf("bm25: average document length %v is not a positive finite number of tokens", avgdl)
	}
	return &Encoder{avgdl: avgdl, free: make(chan *scratch, runtime.GOMAXPROCS(0))}, nil
}

// AvgDL returns the encoder's average document length, in tokens.
func (e *Encoder) AvgDL() float64 { return e.avgdl }

// Document returns the document vector of text.
func (e *Encoder) Document(text string) Vector {
	sc := e.get()
	defer e.put(sc)
	return sc.document(text, e.avgdl)
}

// Query returns the query vector of text, as the function Query does.
func (e *Encoder) Query(text string) Vector {
	sc := e.get()
	defer e.put(sc)
	return sc.query(text)
}

func (e *Encoder) get() *scratch {
	select {
	case sc := <-e.free:
		return sc
	default:
		return newScratch(vocabMin)
	}
}

func (e *Encoder) put(sc *scratch) {
	select {
	case e.free <- sc:
	default: // more concurrent calls than kept scratch spaces
	}
}

// document returns the document vector of text.
func (sc *scratch) document(text string, avgdl float64) Vector {
	return sc.documentVector(sc.count(text), avgdl)
}

// documentVector returns the document vector of the no distinct tokens
// counted in sc.stats.
func (sc *scratch) documentVector(no int, avgdl float64) Vector {
	if no == 0 {
		return Vector{}
	}
	stats := sc.stats[:no]
	defer clear(stats) // counts stay zero past the distinct tokens
	n := 0
	for _, st := range stats {
		n += int(st.tf)
	}
	// The explicit conversion rounds the product, so that no compiler fuses
	// it with the addition below into one multiply-add: the values must be
	// the same on every machine and in every language.
	norm := float64(K1 * (1 - B + B*float64(n)/avgdl))
	var lut [tfLUT]float64
	for tf := 1; tf < tfLUT; tf++ {
		lut[tf] = value(float64(tf), norm)
	}
	if !sc.mayShare(stats) {
		v := Vector{Indices: make([]uint32, no), Values: make([]float32, no)}
		var lut32 [tfLUT]float32
		for tf, w := range lut {
			lut32[tf] = float32(w)
		}
		for p, st := range stats {
			v.Indices[p] = st.fnv
			if st.tf < tfLUT {
				v.Values[p] = lut32[st.tf]
			} else {
				v.Values[p] = float32(value(float64(st.tf), norm))
			}
		}
		return v
	}
	idx, vals := sc.mergeByHash(stats, func(tf uint32) float64 {
		if tf < tfLUT {
			return lut[tf]
		}
		return value(float64(tf), norm)
	})
	v := Vector{Indices: make([]uint32, len(idx)), Values: make([]float32, len(idx))}
	copy(v.Indices, idx)
	for i, w := range vals {
		v.Values[i] = float32(w)
	}
	return v
}

// value is the document value of a token counted tf times in a text of
// normalised length norm.
func value(tf, norm float64) float64 {
	return tf * (K1 + 1) / (tf + norm)
}

// tfLUT is how many term frequencies document looks up rather than
// computes.
const tfLUT = 8

// query returns the query vector of text.
func (sc *scratch) query(text string) Vector {
	no := sc.count(text)
	if no == 0 {
		return Vector{}
	}
	stats := sc.stats[:no]
	defer clear(stats)
	idx := sc.idx[:0]
	if sc.mayShare(stats) {
		idx, _ = sc.mergeByHash(stats, func(uint32) float64 { return 0 })
	} else {
		for _, st := range stats {
			idx = append(idx, st.fnv)
		}
		sc.idx = idx
	}
	v := Vector{Indices: make([]uint32, len(idx)), Values: make([]float32, len(idx))}
	copy(v.Indices, idx)
	for i := range v.Values {
		v.Values[i] = 1
	}
	return v
}

// mayShare reports whether a distinct token of the call may have the
// index of another: one the vocabulary flagged, or a long token (long
// tokens stay out of the vocabulary's hash set).
func (sc *scratch) mayShare(stats []stat) bool {
	return sc.shared || len(sc.longAt) > 0 && longShares(stats, sc.longAt)
}

// mergeByHash merges the distinct tokens stats by hash, in the order of
// their first occurrence, adding their values (value of their count) in
// that order. The slices are scratch space, valid until the next call.
func (sc *scratch) mergeByHash(stats []stat, value func(tf uint32) float64) ([]uint32, []float64) {
	size := 16
	for size < 2*len(stats) {
		size <<= 1
	}
	if cap(sc.merge) < size {
		sc.merge = make([]uint64, size)
	}
	merge := sc.merge[:size]
	clear(merge)
	shift := uint(33 - bits.Len(uint(size)))
	mask := uint32(size - 1)
	idx, vals := sc.idx[:0], sc.vals[:0]
	for _, st := range stats {
		h, w := st.fnv, value(st.tf)
		for i := (h * sc.mulH) >> shift; ; i = (i + 1) & mask {
			e := merge[i]
			if e == 0 {
				merge[i] = uint64(h)<<32 | uint64(len(idx)+1)
				idx = append(idx, h)
				vals = append(vals, w)
				break
			}
			if uint32(e>>32) == h {
				vals[uint32(e)-1] += w
				break
			}
		}
	}
	sc.idx, sc.vals = idx, vals
	return idx, vals
}

// longFew is how many long tokens longShares compares with every token.
const longFew = 4

// longShares reports whether a long token of the call (at the positions
// longAt of stats) may share its hash with another token: it compares
// the hashes of up to longFew of them with every token's, and says yes
// for more.
func longShares(stats []stat, longAt []int32) bool {
	if len(longAt) > longFew {
		return true
	}
	for _, lp := range longAt {
		h := stats[lp].fnv
		for p, st := range stats {
			if st.fnv == h && p != int(lp) {
				return true
			}
		}
	}
	return false
}
