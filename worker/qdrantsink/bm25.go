package qdrantsink

import (
	"slices"
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

// SparseVector is a sparse vector: Indices strictly ascending, one Value
// per index.
type SparseVector struct {
	Indices []uint32
	Values  []float32
}

// BM25 computes the document side of BM25 as sparse vectors, the IDF part
// being left to Qdrant's IDF modifier. The zero value is not usable; build
// it with NewBM25. It is safe for concurrent use.
type BM25 struct {
	avgdl float64
}

// NewBM25 returns a BM25 encoder for an average document length avgdl (in
// tokens, > 0).
func NewBM25(avgdl float64) *BM25 { return &BM25{avgdl: avgdl} }

// term is one distinct token seen in a text.
type term struct {
	hash uint32
	tok  string
	tf   int
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
// out ascending. Invalid UTF-8 bytes separate tokens. A text without tokens
// has an empty vector.
func (e *BM25) Encode(text string) SparseVector {
	var (
		terms []term
		byKey = make(map[uint32]int, 64) // hash → index in terms of its first token
		buf   = make([]byte, 0, 32)
		n     int // tokens
	)
	add := func() {
		if len(buf) == 0 {
			return
		}
		n++
		h := uint32(fnvOffset32)
		for _, c := range buf {
			h ^= uint32(c)
			h *= fnvPrime32
		}
		if i, ok := byKey[h]; ok {
			for j := i; j < len(terms) && terms[j].hash == h; j++ {
				if terms[j].tok == string(buf) {
					terms[j].tf++
					buf = buf[:0]
					return
				}
			}
			// A collision: keep the colliding token next to its peers.
			terms = slices.Insert(terms, i+1, term{hash: h, tok: string(buf), tf: 1})
			for k, v := range byKey {
				if v > i {
					byKey[k] = v + 1
				}
			}
			buf = buf[:0]
			return
		}
		byKey[h] = len(terms)
		terms = append(terms, term{hash: h, tok: string(buf), tf: 1})
		buf = buf[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf = append(buf, c)
			case 'A' <= c && c <= 'Z':
				buf = append(buf, c+'a'-'A')
			default:
				add()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		} else {
			add()
		}
	}
	add()
	if n == 0 {
		return SparseVector{}
	}
	norm := BM25K1 * (1 - BM25B + BM25B*float64(n)/e.avgdl)
	// Sum per hash, then sort by index.
	sv := SparseVector{Indices: make([]uint32, 0, len(byKey)), Values: make([]float32, 0, len(byKey))}
	type iv struct {
		idx uint32
		val float64
	}
	out := make([]iv, 0, len(byKey))
	for i := 0; i < len(terms); {
		h := terms[i].hash
		var v float64
		for ; i < len(terms) && terms[i].hash == h; i++ {
			tf := float64(terms[i].tf)
			v += tf * (BM25K1 + 1) / (tf + norm)
		}
		out = append(out, iv{h, v})
	}
	slices.SortFunc(out, func(a, b iv) int {
		switch {
		case a.idx < b.idx:
			return -1
		case a.idx > b.idx:
			return 1
		}
		return 0
	})
	for _, x := range out {
		sv.Indices = append(sv.Indices, x.idx)
		sv.Values = append(sv.Values, float32(x.val))
	}
	return sv
}
