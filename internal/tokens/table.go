package tokens

import (
	"encoding/binary"
	"math/bits"
)

// shortMax is the longest key the open-addressing table holds (in two
// words); longer tokens live in a map. Merge candidates of up to 16 bytes
// are most of those longer than 8, so none of them hashes a string.
const shortMax = 16

// table maps tokens to their ranks. Most lookups are of pieces of a few
// bytes: those of up to 16 bytes go to an open-addressing table keyed by
// the bytes packed in two words (one probe, no string comparison),
// two-byte ones to an array, the rest to a map (BenchmarkFastPaths/table
// and /pairs).
type table struct {
	// Tokens of up to 8 bytes in slots8, of 9 to 16 in slots: each a
	// power of two long, shift the hash's to a slot.
	slots8 []slot8
	shift8 uint
	slots  []slot
	shift  uint
	long   map[string]uint32
	pairs  []uint32 // rank+1 of each two-byte token, 0 when none, indexed by its bytes
	// pairSet has the bit of each two-byte token set (8 KiB: the count
	// of a two- or three-byte piece asks it, not the cache).
	pairSet []uint64
	// triples holds the three-byte tokens, each as its bytes and a top
	// bit (0 is empty), in an open-addressing table of 2^15 entries (128
	// KiB, so that the count of a three-byte piece, one piece in six of
	// prose, stays in the processor's second-level cache rather than
	// probing the filter and the short table).
	triples []uint32
	// filter has a bit set for each token of the short table (bits of
	// its hash other than the slot's): most keys that are no token, half
	// the candidates of a merge, are turned away by it without a probe of
	// the much larger table.
	filter     []uint64
	filterMask uint64
	// longest is the length of the longest token: a piece of n bytes has
	// at least n/longest tokens.
	longest int
}

// slot is one entry of the short table: the token's bytes packed in two
// words (key1 holds bytes 8–15); n = 0 marks it empty.
type slot struct {
	key, key1 uint64
	rank      uint32
	n         uint8
}

// slot8 is one entry of the table of tokens of up to 8 bytes: its bytes
// packed in a word (half the size of slot, so more of the most probed
// table stays in the processor's caches).
type slot8 struct {
	key  uint64
	rank uint32
	n    uint8
}

// packKey packs a token of at most shortMax bytes into two words.
func packKey(b []byte) (uint64, uint64) {
	if len(b) > 8 {
		return binary.LittleEndian.Uint64(b), pack(b[8:])
	}
	return pack(b), 0
}

// pack returns the bytes of b (at most 8) as a little-endian word,
// without a loop: two overlapping loads of four bytes, or three of one.
func pack(b []byte) uint64 {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*(n-4))
	case n > 0:
		return uint64(b[0]) | uint64(b[n/2])<<(8*(n/2)) | uint64(b[n-1])<<(8*(n-1))
	}
	return 0
}

// filterShift picks the hash bits of the filter: below those of the slot.
const filterShift = 12

func hash(k, k1 uint64, n int) uint64 {
	return (k ^ k1*0xC2B2AE3D27D4EB4F ^ uint64(n)<<59) * 0x9E3779B97F4A7C15
}

// newTable builds the table of ranks (each rank once). Tokens go in in
// rank order, so the layout is the same in every process (the work of a
// count is reproducible) and the most frequent tokens, merged first, sit
// nearest their home slots.
func newTable(ranks map[string]uint32) *table {
	short := 0
	byRank := make([]string, len(ranks))
	for tok, r := range ranks {
		if len(tok) <= shortMax {
			short++
		}
		byRank[r] = tok
	}
	short8 := 0
	for tok := range ranks {
		if len(tok) <= 8 {
			short8++
		}
	}
	size8, size := 1<<bits.Len(uint(short8*2)), 1<<bits.Len(uint((short-short8)*2))
	t := &table{
		slots8: make([]slot8, size8), shift8: uint(64 - bits.Len(uint(size8-1))),
		slots: make([]slot, size), shift: uint(64 - bits.Len(uint(size-1))),
		long: map[string]uint32{},
	}
	t.triples = make([]uint32, 1<<triplesBits)
	t.pairs = make([]uint32, 1<<16)
	t.pairSet = make([]uint64, 1<<16/64)
	fbits := 1 << bits.Len(uint(short*16-1)) // about one false positive in sixteen
	t.filter, t.filterMask = make([]uint64, fbits/64), uint64(fbits-1)
	for r, tok := range byRank {
		r := uint32(r)
		t.longest = max(t.longest, len(tok))
		if len(tok) == 2 {
			t.pairs[int(tok[0])<<8|int(tok[1])] = r + 1
			t.pairSet[int(tok[0])<<2|int(tok[1])>>6] |= 1 << (tok[1] & 63)
		}
		if len(tok) == 3 {
			k := tripleKey(tok[0], tok[1], tok[2])
			i := tripleHash(k)
			for t.triples[i] != 0 {
				i = (i + 1) & (1<<triplesBits - 1)
			}
			t.triples[i] = k
		}
		if len(tok) > shortMax {
			t.long[tok] = r
			continue
		}
		k, k1 := packKey([]byte(tok))
		h := hash(k, k1, len(tok))
		f := h >> filterShift & t.filterMask
		t.filter[f/64] |= 1 << (f % 64)
		if len(tok) <= 8 {
			i := h >> t.shift8
			for t.slots8[i].n != 0 {
				i = (i + 1) & uint64(size8-1)
			}
			t.slots8[i] = slot8{key: k, rank: r, n: uint8(len(tok))}
			continue
		}
		i := h >> t.shift
		for t.slots[i].n != 0 {
			i = (i + 1) & uint64(size-1)
		}
		t.slots[i] = slot{key: k, key1: k1, rank: r, n: uint8(len(tok))}
	}
	return t
}

// rank returns the rank of token b.
func (t *table) rank(b []byte) (uint32, bool) {
	if len(b) == 2 {
		r := t.pairs[int(b[0])<<8|int(b[1])]
		return r - 1, r != 0
	}
	return t.probe(b)
}

// triplesBits sizes the table of three-byte tokens (o200k_base has
// 18,185 of them: the table is at most 56% full).
const triplesBits = 15

func tripleKey(a, b, c byte) uint32 {
	return uint32(a) | uint32(b)<<8 | uint32(c)<<16 | 1<<24
}

func tripleHash(k uint32) uint32 {
	return k * 0x9E3779B1 >> (32 - triplesBits)
}

// isTriple reports whether a, b, c is a token.
func (t *table) isTriple(a, b, c byte) bool {
	k := tripleKey(a, b, c)
	for i := tripleHash(k); ; i = (i + 1) & (1<<triplesBits - 1) {
		switch t.triples[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// isPair reports whether a, b is a token.
func (t *table) isPair(a, b byte) bool {
	return t.pairSet[int(a)<<2|int(b)>>6]&(1<<(b&63)) != 0
}

// probe returns the rank of token b from the short table or the map.
func (t *table) probe(b []byte) (uint32, bool) {
	if len(b) > shortMax {
		r, ok := t.long[string(b)]
		return r, ok
	}
	k, k1 := packKey(b)
	return t.probeKey(k, k1, len(b))
}

// probeKey returns the rank of the token of length ln (2 < ln ≤
// shortMax) whose bytes packKey packs to k, k1.
func (t *table) probeKey(k, k1 uint64, ln int) (uint32, bool) {
	n := uint8(ln)
	h := hash(k, k1, ln)
	if f := h >> filterShift & t.filterMask; t.filter[f/64]&(1<<(f%64)) == 0 {
		return 0, false
	}
	if n <= 8 {
		mask := uint64(len(t.slots8) - 1)
		for i := h >> t.shift8; ; i = (i + 1) & mask {
			s := &t.slots8[i]
			if s.n == n && s.key == k {
				return s.rank, true
			}
			if s.n == 0 {
				return 0, false
			}
		}
	}
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.n == n && s.key == k && s.key1 == k1 {
			return s.rank, true
		}
		if s.n == 0 {
			return 0, false
		}
	}
}
