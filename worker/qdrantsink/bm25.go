package qdrantsink

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// BM25 parameters fixed by the wire contract (README "Qdrant").
const (
	// BM25K1 is the term-frequency saturation k1.
	BM25K1 = 1.2
	// BM25B is the length normalisation b.
	BM25B = 0.75
	// DefaultAvgDL is the default average chunk length in tokens.
	DefaultAvgDL = 256
)

const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

// SparseVector is a sparse vector: distinct Indices, one Value per index.
type SparseVector struct {
	Indices []uint32
	Values  []float32
}

// BM25 computes the document side of BM25 as sparse vectors, the IDF part
// being left to Qdrant's IDF modifier. Build it with NewBM25. It is safe
// for concurrent use; scratch space is pooled.
type BM25 struct {
	avgdl float64
	pool  sync.Pool // *bm25Scratch
}

// NewBM25 returns a BM25 encoder for an average document length avgdl (in
// tokens, > 0).
func NewBM25(avgdl float64) *BM25 {
	e := &BM25{avgdl: avgdl}
	e.pool.New = func() any {
		// A random odd multiplier spreads token hashes over the table, so
		// a text cannot be crafted to pile its tokens into one probe run.
		return &bm25Scratch{mul: rand.Uint32() | 1}
	}
	return e
}

// bm25Term is one distinct token of a text.
type bm25Term struct {
	tf     int32
	group  int32  // index of the output entry (tokens with equal hashes share one)
	off, n int32  // the token's bytes in the arena, when tok is empty
	tok    string // the token as a substring of the text, if it is one
}

// bm25Scratch is the reusable state of one Encode: an open-addressing
// table keyed by token hash (an entry is hash<<32 | term index + 1; 0 is
// empty; slot = hash·mul >> shift) holding the first token of each hash,
// a map for the other tokens of a hash (collisions: rare, or an attack),
// the terms, an arena for the lowercased tokens that are not substrings of
// the text, and buffers.
type bm25Scratch struct {
	mul     uint32
	shift   uint32
	table   []uint64
	collide map[string]int32 // token → term index, for tokens whose hash an earlier token has
	terms   []bm25Term
	arena   []byte
	groups  []uint32 // output indices in first-occurrence order
	buf     []byte
	vals    []float64
}

// Encode returns the BM25 sparse vector of text. Tokens are the maximal runs
// of Unicode letters (category L) and decimal digits (Nd), lowercased rune
// by rune with Unicode simple case mapping. A token's index is the 32-bit
// FNV-1a hash of its UTF-8 bytes; its value is
//
//	tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl))
//
// with tf its count in text and len the number of tokens in text. Distinct
// tokens whose hashes collide add their values into one index. Indices come
// out in the order their first token appears in text (deterministic, and
// cheaper than sorting; Qdrant sorts them itself). Invalid UTF-8 bytes
// separate tokens. A text without tokens has an empty vector. The time is
// linear in len(text), also for texts crafted to collide.
func (e *BM25) Encode(text string) SparseVector {
	sc := e.pool.Get().(*bm25Scratch)
	defer e.pool.Put(sc)
	size := 64
	for size < len(text)/4 && size < 1<<16 {
		size <<= 1
	}
	if cap(sc.table) < size {
		sc.table = make([]uint64, size)
	} else {
		sc.table = sc.table[:size]
		clear(sc.table)
	}
	sc.shift = uint32(33 - bits.Len(uint(size)))
	if sc.collide != nil {
		clear(sc.collide)
	}
	sc.terms = sc.terms[:0]
	sc.groups = sc.groups[:0]
	sc.arena = sc.arena[:0]

	n := 0 // tokens
	buf := sc.buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && asciiLower[c] == 0 {
			i++ // an ASCII separator
			continue
		}
		// Fast path: a run of ASCII letters and digits ended by an ASCII
		// separator or the end of the text; hashed in place, copied only
		// when it has capitals.
		j, h, diff := i, uint32(fnvOffset32), byte(0)
		for j < len(text) {
			c := text[j]
			lc := asciiLower[c]
			if lc == 0 {
				break
			}
			diff |= lc ^ c
			h = (h ^ uint32(lc)) * fnvPrime32
			j++
		}
		if j > i && (j == len(text) || text[j] < utf8.RuneSelf) {
			n++
			if diff == 0 {
				addTerm(sc, text[i:j], h)
			} else {
				buf = buf[:0]
				for k := i; k < j; k++ {
					buf = append(buf, asciiLower[text[k]])
				}
				addTerm(sc, buf, h)
			}
			i = j
			continue
		}
		// General path: the token has non-ASCII runes.
		buf = buf[:0]
		k := i
		for k < len(text) {
			c := text[k]
			if c < utf8.RuneSelf {
				lc := asciiLower[c]
				if lc == 0 {
					break
				}
				buf = append(buf, lc)
				k++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[k:])
			if r == utf8.RuneError && size == 1 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			k += size
		}
		if k == i { // a non-ASCII separator (or an invalid byte)
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		h = fnvOffset32
		for _, b := range buf {
			h = (h ^ uint32(b)) * fnvPrime32
		}
		n++
		addTerm(sc, buf, h)
		i = k
	}
	sc.buf = buf
	if n == 0 {
		return SparseVector{}
	}
	norm := BM25K1 * (1 - BM25B + BM25B*float64(n)/e.avgdl)
	vals := sc.vals[:0]
	for range sc.groups {
		vals = append(vals, 0)
	}
	for _, t := range sc.terms {
		tf := float64(t.tf)
		vals[t.group] += tf * (BM25K1 + 1) / (tf + norm)
	}
	sc.vals = vals
	sv := SparseVector{Indices: slices.Clone(sc.groups), Values: make([]float32, len(vals))}
	for g, v := range vals {
		sv.Values[g] = float32(v)
	}
	return sv
}

// addTerm counts the token tok with hash h. A new token whose hash equals
// an earlier token's joins that token's output entry.
func addTerm[T string | []byte](sc *bm25Scratch, tok T, h uint32) {
	mask := uint32(len(sc.table) - 1)
	for i := (h * sc.mul) >> sc.shift; ; i = (i + 1) & mask {
		e := sc.table[i]
		if e == 0 {
			j := newTerm(sc, tok, int32(len(sc.groups)))
			sc.groups = append(sc.groups, h)
			sc.table[i] = uint64(h)<<32 | uint64(j+1)
			if 2*len(sc.terms) > len(sc.table) {
				sc.grow()
			}
			return
		}
		if uint32(e>>32) != h {
			continue
		}
		t := &sc.terms[uint32(e)-1]
		if t.tok == string(tok) || t.tok == "" && string(sc.arena[t.off:t.off+t.n]) == string(tok) {
			t.tf++
			return
		}
		// Another token with this hash: counted apart, summed into the
		// first one's entry.
		if j, ok := sc.collide[string(tok)]; ok {
			sc.terms[j].tf++
			return
		}
		if sc.collide == nil {
			sc.collide = map[string]int32{}
		}
		sc.collide[string(tok)] = newTerm(sc, tok, t.group)
		return
	}
}

// newTerm appends a term of count 1 in output entry group and returns its
// index.
func newTerm[T string | []byte](sc *bm25Scratch, tok T, group int32) int32 {
	t := bm25Term{tf: 1, group: group}
	if s, ok := any(tok).(string); ok {
		t.tok = s
	} else {
		t.off, t.n = int32(len(sc.arena)), int32(len(tok))
		sc.arena = append(sc.arena, tok...)
	}
	sc.terms = append(sc.terms, t)
	return int32(len(sc.terms) - 1)
}

// asciiLower maps an ASCII letter or digit to its lowercase form and every
// other byte (ASCII separators, and all bytes ≥ 0x80) to 0. It is never
// written.
var asciiLower = func() (t [256]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c] = c
		t[c-'a'+'A'] = c
	}
	return t
}()

// grow doubles the table and re-inserts its entries.
func (sc *bm25Scratch) grow() {
	old := sc.table
	sc.table = make([]uint64, 2*len(old))
	sc.shift--
	mask := uint32(len(sc.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := (uint32(e>>32) * sc.mul) >> sc.shift
		for sc.table[i] != 0 {
			i = (i + 1) & mask
		}
		sc.table[i] = e
	}
}
