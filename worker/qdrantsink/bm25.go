package qdrantsink

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"unicode"
	"unicode/utf8"
	"unsafe"
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
// for concurrent use. Each concurrent call uses a scratch space with a
// vocabulary cache of up to 2.5 MiB; up to GOMAXPROCS of them are kept
// between calls, across garbage collections (a sync.Pool would drop the
// cache at every other one).
type BM25 struct {
	avgdl    float64
	free     chan *bm25Scratch
	portable bool // count with the Go kernels even where assembly ones exist (benchmarks)
}

// NewBM25 returns a BM25 encoder for an average document length avgdl (in
// tokens, > 0).
func NewBM25(avgdl float64) *BM25 {
	return &BM25{avgdl: avgdl, free: make(chan *bm25Scratch, runtime.GOMAXPROCS(0))}
}

func newBM25Scratch() *bm25Scratch {
	// Random odd multipliers spread keys over the tables, so a text cannot
	// be crafted to pile its tokens into one probe run.
	sc := &bm25Scratch{
		mul0: rand.Uint64() | 1,
		mul1: rand.Uint64() | 1,
		mulH: rand.Uint32() | 1,
	}
	sc.resetVocab(vocabMin)
	return sc
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
	return e.EncodeTo(nil, text)
}

// EncodeTo is Encode with the vector in the arena a (a new allocation if a
// is nil).
func (e *BM25) EncodeTo(a *VectorArena, text string) SparseVector {
	var sc *bm25Scratch
	select {
	case sc = <-e.free:
	default:
		sc = newBM25Scratch()
	}
	sc.portable = e.portable
	sv := sc.encodeTo(a, text, e.avgdl)
	select {
	case e.free <- sc:
	default: // more concurrent calls than kept scratch spaces
	}
	return sv
}

// encode is Encode with the scratch space sc.
func (sc *bm25Scratch) encode(text string, avgdl float64) SparseVector {
	return sc.encodeTo(nil, text, avgdl)
}

// encodeTo is EncodeTo with the scratch space sc.
func (sc *bm25Scratch) encodeTo(a *VectorArena, text string, avgdl float64) SparseVector {
	no := sc.count(text)
	if no == 0 {
		return SparseVector{}
	}
	return a.vector(sc.vector(no, avgdl))
}

// How Encode is fast (it must cost a small fraction of chunking):
//
//   - The text is classified where it is into a bitmap of token bytes
//     (ASCII letters and digits, and all non-ASCII bytes), 64 bytes at a
//     time with AVX-512BW or 16 with SSE2 on amd64, 8 at a time (SWAR)
//     elsewhere; the bytes of the common separator runes are then taken
//     out (unmarkSeparators).
//   - The runs of the bitmap are the candidate tokens. One loop (assembly
//     on amd64, Go elsewhere) takes each run start from the bitmap, reads
//     the run's length from it, and counts the token, without branching
//     on whether the token is new in the call.
//   - A run of ASCII letters and digits of at most 16 bytes (nearly every
//     token) is loaded as two little-endian words, lowercased by setting
//     bit 5 of each byte, and masked to its length: that pair is its key.
//   - The key is looked up in a vocabulary table that outlives the call
//     (it is kept with the scratch space): an entry keeps the token's
//     FNV-1a hash, so the hash is computed once per vocabulary word, not
//     per occurrence. An entry belongs to the current call only if it
//     holds the call's number (epoch), so nothing is cleared between
//     calls; a token first seen in the call takes the next position, and
//     the counts and hashes of the call are kept by position, so the
//     output is a sequential pass.
//   - Runs with non-ASCII bytes, tokens longer than 16 bytes and tokens
//     the fast loop does not find (new ones and flagged ones; the Go
//     loop also leaves those past the first two slots they hash to) leave
//     it for Go code: the Unicode path and the full probe into the same
//     table, and a map for long tokens.
//   - Entries whose hashes equal another entry's are flagged when
//     inserted (and their keys altered, so that the fast loop never
//     matches them), so the output is merged by hash only for calls with
//     such a token, or with a long token whose hash another token of the
//     call has (or more than longFew long tokens).
//   - The counts of the call are kept zero past its distinct tokens (the
//     output pass clears them), so the fast loop counts a new token like a
//     seen one; the number of tokens is the sum of the counts.

// Vocabulary table sizes (entries, powers of two). The table keeps the
// tokens of earlier calls up to half of vocabMax entries (2 MiB, and
// 0.5 MiB for the hash set); then
// the tokens not seen in the last vocabRecent calls are dropped, or all
// of them if the recent ones fill a quarter of it. One call may grow the
// table past vocabMax while it needs to.
const (
	vocabMin    = 1 << 10
	vocabMax    = 1 << 16
	vocabRecent = 256
)

// shortMax is the longest lowercased token, in bytes, kept in the
// vocabulary table: its bytes are the key, two little-endian words padded
// with zeros (no token byte is zero).
const shortMax = 16

// vocabEntry is one short token in the vocabulary table.
type vocabEntry struct {
	k0, k1 uint64 // the lowercased token's bytes (k0 flipped by sharedKey if shared); k0 == 0 marks an empty slot
	fnv    uint32 // FNV-1a 32 of those bytes
	epoch  uint32 // the call that saw the token last
	pos    uint32 // its position in that call
	shared uint32 // 1 if another entry has had the same hash
}

// sharedKey is flipped in the stored k0 of a shared entry, so that the
// fast loops, which compare the keys of ASCII tokens exactly and check
// nothing else, leave such tokens to the Go path (find), which sees the
// flag. The flipped key of an ASCII token has a non-ASCII byte; that of a
// Unicode token still has one (UTF-8 sequences have two or more), and its
// first byte is not zero (a token starts at a rune, not a continuation
// byte): no ASCII token's key, and not an empty slot.
const sharedKey = 0x80

// key0 returns the entry's k0 as the token's bytes.
func (v *vocabEntry) key0() uint64 { return v.k0 ^ uint64(v.shared)*sharedKey }

// markShared flags the entry as sharing its hash.
func (v *vocabEntry) markShared() {
	v.k0 = v.key0() ^ sharedKey
	v.shared = 1
}

// bm25Scratch is the reusable state of an encoder: the vocabulary table
// (open addressing, linear probing, slot = (k0 + k1·mul1)·mul0 >> shift),
// the set of its hashes (hash<<32 | slot+1 at slot hash·mulH >> hshift),
// the call counter, and per-call buffers.
type bm25Scratch struct {
	mul0, mul1 uint64
	mulH       uint32
	portable   bool // use the Go kernels even where assembly ones exist (tests)
	epoch      uint32
	shift      uint
	used       int
	vocab      []vocabEntry
	hashes     []uint64

	shared bool             // a token of this call may share its hash
	long   map[string]int32 // token → position, for long tokens of this call
	longAt []int32          // the positions of the long tokens of this call
	// longKeys holds the bytes of the keys of long; an append that moves
	// it leaves the earlier keys in the old array, which they keep alive.
	longKeys []byte
	stats    []stat   // by position: the distinct tokens of the call; zero past them between calls
	pad      []byte   // the text, zero padded (see padded; amd64)
	tail     [64]byte // the text's last partial block, zero padded
	cand     []uint64 // a zero word, then bit i: byte i is an ASCII letter or digit, or not ASCII
	high     []uint64 // bit i: byte i is not ASCII
	buf      []byte
	merge    []uint64 // hash → output entry, (hash<<32 | entry+1)
	idx      []uint32 // merged output, before it is copied out
	out      []uint32 // the output, before it is copied out (see output)
	vals     []float64
}

// resetVocab empties the vocabulary table, at size entries.
func (sc *bm25Scratch) resetVocab(size int) {
	if cap(sc.vocab) >= size && cap(sc.vocab) <= vocabMax {
		sc.vocab = sc.vocab[:size]
		clear(sc.vocab)
		sc.hashes = sc.hashes[:size]
		clear(sc.hashes)
	} else {
		sc.vocab = make([]vocabEntry, size)
		sc.hashes = make([]uint64, size)
	}
	sc.shift = uint(65 - bits.Len(uint(size)))
	sc.used = 0
	sc.epoch = 1
}

// begin starts a call on a text of n bytes: a new epoch, and room in the
// vocabulary for the text's tokens (at most one per two bytes), or for a
// quarter of the table if it has more.
func (sc *bm25Scratch) begin(n int) {
	sc.epoch++
	switch {
	case sc.epoch == 0 || len(sc.vocab) > vocabMax:
		// A wrapped counter, or a table grown by one huge text.
		sc.resetVocab(vocabMax)
	case len(sc.vocab) == vocabMax && 2*(sc.used+min(n/2+1, vocabMax/4)) > vocabMax:
		sc.rebuild(len(sc.vocab), func(v *vocabEntry) bool { return sc.epoch-v.epoch <= vocabRecent })
		if 4*sc.used > vocabMax {
			sc.resetVocab(vocabMax)
		}
	}
	sc.shared = false
	if len(sc.long) > 0 {
		clear(sc.long)
		sc.longKeys = sc.longKeys[:0]
		sc.longAt = sc.longAt[:0]
	}
}

// SWAR constants.
const (
	ones   = 0x0101010101010101
	hi80   = 0x80 * ones
	gather = 0x0102040810204080 // (m>>7)·gather>>56 packs the top bits of m's bytes
)

// classifyBytesGo sets cand and high from the 64-byte blocks of blocks,
// eight bytes at a time; it reports whether a byte is not ASCII.
func classifyBytesGo(blocks []byte, cand, high []uint64) bool {
	var anyHigh uint64
	for b := range cand {
		blk := (*[64]byte)(blocks[b*64:])
		var m, mh uint64
		for j := range 8 {
			w := binary.LittleEndian.Uint64(blk[j*8:])
			h := w & hi80
			v := w ^ h
			// A byte v < 0x80 is ≥ c iff v + (0x80 − c) has its top bit.
			digit := (v + 0x50*ones) &^ (v + 0x46*ones) // '0'..'9'
			l := v | 0x20*ones
			letter := (l + 0x1f*ones) &^ (l + 0x05*ones) // 'a'..'z' after |0x20
			m |= ((digit | letter | h) & hi80 >> 7 * gather >> 56) << (8 * j)
			if h != 0 { // rare in most texts: a predictable branch
				mh |= (h >> 7 * gather >> 56) << (8 * j)
			}
		}
		cand[b], high[b] = m, mh
		anyHigh |= mh
	}
	return anyHigh != 0
}

// classifyText classifies text into cand and high (one word per 64-byte
// block, and a zero word past the text) with classifyBlocks: the whole
// blocks where they are, the last partial one from a zero-padded copy. It
// reports whether a non-ASCII byte is left once the common separators are
// taken out of the runs (unmarkSeparators).
func (sc *bm25Scratch) classifyText(text string, cand, high []uint64, classifyBlocks func(blocks []byte, cand, high []uint64) bool) bool {
	view := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	nwords := len(cand) - 1
	full := len(text) / 64
	anyHigh := false
	if full > 0 {
		anyHigh = classifyBlocks(view[:full*64], cand[:full], high[:full])
	}
	if full < nwords {
		sc.tail = [64]byte{}
		copy(sc.tail[:], text[full*64:])
		if classifyBlocks(sc.tail[:], cand[full:nwords], high[full:nwords]) {
			anyHigh = true
		}
	}
	cand[nwords], high[nwords] = 0, 0
	return anyHigh && unmarkSeparators(text, cand, high)
}

// unmarkSeparators clears in cand and high (non-empty) the bits of the
// bytes of the non-ASCII separator runes common in prose: U+2000 to U+203F
// (spaces, dashes, quotes, ellipsis; General Punctuation has no letter or
// digit before U+2071) and U+00A0, the no-break space. The runs around
// them then stay on the fast path: "don’t" is two ASCII runs, not one
// Unicode run. It returns whether a non-ASCII byte is left.
func unmarkSeparators(text string, cand, high []uint64) bool {
	var left uint64
	for b, m := range high {
		for ; m != 0; m &= m - 1 {
			p := b*64 + bits.TrailingZeros64(m)
			n := 0
			switch {
			case text[p] == 0xe2 && p+2 < len(text) && text[p+1] == 0x80 && text[p+2]&0xc0 == 0x80:
				n = 3
			case text[p] == 0xc2 && p+1 < len(text) && text[p+1] == 0xa0:
				n = 2
			}
			for q := p; q < p+n; q++ {
				cand[q/64] &^= 1 << (q % 64)
				high[q/64] &^= 1 << (q % 64)
			}
		}
		left |= high[b]
	}
	return left != 0
}

// keyMasks[l] keeps the first l bytes of a two-word key.
var keyMasks = func() (t [32][2]uint64) {
	for l := 1; l <= shortMax; l++ {
		t[l][0] = ^uint64(0) >> (64 - 8*min(l, 8))
		if l > 8 {
			t[l][1] = ^uint64(0) >> (128 - 8*l)
		}
	}
	return t
}()

// count counts the tokens of text; it returns the number of distinct ones,
// whose hashes and counts are sc.stats[:no].
func (sc *bm25Scratch) count(text string) (no int) {
	sc.begin(len(text))
	if len(text) == 0 {
		return 0
	}
	// The bitmaps have a word for each 64-byte block of the text and one
	// past it, which ends every run; cand has a zero word before its first.
	nb := (len(text) + 63) / 64
	if cap(sc.cand) < nb+2 {
		sc.cand = make([]uint64, nb+2)
		sc.high = make([]uint64, nb+1)
	}
	// At most one token per two bytes.
	if maxRuns := len(text)/2 + 1; len(sc.stats) < maxRuns {
		sc.stats = make([]stat, maxRuns)
	}
	return sc.countTokens(text, sc.cand[1:nb+2], sc.high[:nb+1])
}

// countRunsGo counts the tokens of text in Go, as scanKernel does: it
// classifies text into cand and high, takes each run from the bitmap,
// counts the ASCII tokens of at most shortMax bytes found in the
// vocabulary table (not flagged sharedKey), and leaves the others to
// countRun. It returns the number of distinct tokens.
func (sc *bm25Scratch) countRunsGo(text string, cand, high []uint64) (no int) {
	if !sc.classifyText(text, cand, high, classifyBytesGo) {
		high = nil
	}
	// Keys are loaded as 16 bytes from the token's start: in the text, or
	// for the last 15 starts from a zero-padded copy of its end.
	view := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	var end [2 * shortMax]byte
	endAt := max(0, len(text)-shortMax)
	copy(end[:], text[endAt:])
	vocab, shift, mul0, mul1, epoch := sc.vocab, sc.shift, sc.mul0, sc.mul1, sc.epoch
	stats := sc.stats
	var prev uint64
	for b := range len(cand) - 1 {
		m := cand[b]
		starts := m &^ (m<<1 | prev>>63)
		prev = m
	runs:
		for ; starts != 0; starts &= starts - 1 {
			t := bits.TrailingZeros64(starts)
			s := b*64 + t
			// The run's length, from the bitmap: up to 64 bits of it from s.
			l := bits.TrailingZeros64(^(m>>t | cand[b+1]<<(63-t)<<1))
			if l <= shortMax && (high == nil || (high[b]>>t|high[b+1]<<(63-t)<<1)&(1<<l-1) == 0) {
				var kw *[16]byte
				if s+shortMax <= len(view) {
					kw = (*[16]byte)(view[s:])
				} else {
					kw = (*[16]byte)(end[s-endAt:])
				}
				mk := &keyMasks[l]
				k0 := (binary.LittleEndian.Uint64(kw[:8]) | 0x20*ones) & mk[0]
				k1 := (binary.LittleEndian.Uint64(kw[8:]) | 0x20*ones) & mk[1]
				mask := len(vocab) - 1
				for i := int((k0+k1*mul1)*mul0>>shift) & mask; ; i = (i + 1) & mask {
					v := &vocab[i]
					if v.k0 == k0 && v.k1 == k1 {
						// Count without branches: a token first seen in
						// this call takes position no, whose count is zero.
						fresh := 0
						if v.epoch != epoch {
							fresh = 1 // a SETNE
						}
						p := v.pos ^ (v.pos^uint32(no))&-uint32(fresh) // no if fresh, in arithmetic (the compiler branches on an if here)
						v.epoch, v.pos = epoch, p
						st := &stats[p]
						st.fnv = v.fnv
						st.tf++
						no += fresh
						continue runs
					}
					if v.k0 == 0 {
						break // not in the table: countRun inserts it
					}
				}
			}
			e := runEndAt(cand, s)
			no = sc.countRun(text[s:e], high != nil && runHasHigh(high, s, e), no)
			vocab, shift = sc.vocab, sc.shift // countRun may have grown the table
		}
	}
	return no
}

// runEndAt returns the end of the run of cand bits that starts at s.
func runEndAt(cand []uint64, s int) int {
	for b, t := s/64, s%64; ; b, t = b+1, 0 {
		if z := bits.TrailingZeros64(^(cand[b] >> t)); z < 64-t {
			return b*64 + t + z
		}
	}
}

// A stat is the hash and count of a distinct token of the call.
type stat struct{ fnv, tf uint32 }

// asciiLower returns tok (ASCII letters and digits) lowercased, in sc.buf.
func (sc *bm25Scratch) asciiLower(tok string) []byte {
	buf := sc.buf[:0]
	for i := 0; i < len(tok); i++ {
		buf = append(buf, tok[i]|0x20)
	}
	sc.buf = buf
	return buf
}

// runHasHigh reports whether a byte in [s, e) has its bit set in high.
func runHasHigh(high []uint64, s, e int) bool {
	first, last := s/64, (e-1)/64
	for b := first; b <= last; b++ {
		m := high[b]
		if b == first {
			m &= ^uint64(0) << (s % 64)
		}
		if b == last {
			m &= ^uint64(0) >> (63 - (e-1)%64)
		}
		if m != 0 {
			return true
		}
	}
	return false
}

// countRun counts a run the fast path leaves: one with non-ASCII bytes
// (unicode), whose non-letter non-digit runes and invalid bytes separate
// its tokens; or an ASCII token longer than shortMax, or one the fast loop
// did not find.
func (sc *bm25Scratch) countRun(run string, unicode bool, no int) int {
	if !unicode {
		return sc.countToken(sc.asciiLower(run), no)
	}
	for i := 0; i < len(run); {
		buf, k := lowerToken(sc.buf[:0], run[i:])
		sc.buf = buf
		if k == 0 { // a separator rune or an invalid byte
			_, size := utf8.DecodeRuneInString(run[i:])
			i += size
			continue
		}
		i += k
		no = sc.countToken(buf, no)
	}
	return no
}

// lowerToken appends to buf the lowercased token at the start of s (ASCII
// letters and digits, and Unicode letters and digits) and returns it with
// the token's length in s, 0 if s starts with a separator.
func lowerToken(buf []byte, s string) ([]byte, int) {
	k := 0
	for k < len(s) {
		if c := s[k]; c < utf8.RuneSelf {
			if c|0x20 < 'a' || c|0x20 > 'z' {
				if c < '0' || c > '9' {
					break
				}
			}
			buf = append(buf, c|0x20)
			k++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[k:])
		if r == utf8.RuneError && size == 1 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
		k += size
	}
	return buf, k
}

// countToken counts one lowercased token off the fast path and returns the
// new number of distinct tokens.
func (sc *bm25Scratch) countToken(tok []byte, no int) int {
	if len(tok) > shortMax {
		if p, ok := sc.long[string(tok)]; ok {
			sc.stats[p].tf++
			return no
		}
		if sc.long == nil {
			sc.long = map[string]int32{}
		}
		// The key's bytes live in longKeys, reused from call to call once
		// the map is cleared: no allocation per long token.
		at := len(sc.longKeys)
		sc.longKeys = append(sc.longKeys, tok...)
		sc.long[unsafe.String(&sc.longKeys[at], len(tok))] = int32(no)
		sc.longAt = append(sc.longAt, int32(no))
		sc.stats[no] = stat{fnv1a32(tok), 1}
		return no + 1
	}
	var key [16]byte
	copy(key[:], tok)
	v := &sc.vocab[sc.find(binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:]), len(tok))]
	if v.shared != 0 {
		sc.shared = true
	}
	if v.epoch == sc.epoch {
		sc.stats[v.pos].tf++
		return no
	}
	v.epoch, v.pos = sc.epoch, uint32(no)
	sc.stats[no] = stat{v.fnv, 1}
	return no + 1
}

func fnv1a32(b []byte) uint32 {
	h := uint32(fnvOffset32)
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime32
	}
	return h
}

// find returns the slot of the token keyed k0, k1 (l bytes), inserting it
// if it is new.
func (sc *bm25Scratch) find(k0, k1 uint64, l int) int {
	mask := len(sc.vocab) - 1
	for i := int((k0+k1*sc.mul1)*sc.mul0>>sc.shift) & mask; ; i = (i + 1) & mask {
		v := &sc.vocab[i]
		if v.key0() == k0 && v.k1 == k1 {
			return i
		}
		if v.k0 == 0 {
			return sc.insert(k0, k1, l)
		}
	}
}

// insert adds the token keyed k0, k1 (l bytes), not in the table, growing
// the table first if it is half full, and returns its slot. The new entry
// is not seen in this call yet.
func (sc *bm25Scratch) insert(k0, k1 uint64, l int) int {
	if 2*(sc.used+1) > len(sc.vocab) {
		// Below vocabMax the table doubles, keeping everything; above, only
		// this call's entries are kept, in a table with room for as many
		// again.
		if len(sc.vocab) < vocabMax {
			sc.rebuild(2*len(sc.vocab), func(*vocabEntry) bool { return true })
		} else {
			sc.rebuild(2*len(sc.vocab), func(v *vocabEntry) bool { return v.epoch == sc.epoch })
		}
	}
	var key [16]byte
	binary.LittleEndian.PutUint64(key[:8], k0)
	binary.LittleEndian.PutUint64(key[8:], k1)
	mask := len(sc.vocab) - 1
	i := int((k0+k1*sc.mul1)*sc.mul0>>sc.shift) & mask
	for sc.vocab[i].k0 != 0 {
		i = (i + 1) & mask
	}
	sc.vocab[i] = vocabEntry{k0: k0, k1: k1, fnv: fnv1a32(key[:l]), epoch: sc.epoch - 1}
	sc.used++
	sc.addHash(i)
	return i
}

// rebuild moves the entries that keep accepts into a new table of size
// entries, with a new hash set.
func (sc *bm25Scratch) rebuild(size int, keep func(*vocabEntry) bool) {
	old := sc.vocab
	sc.vocab = make([]vocabEntry, size)
	sc.hashes = make([]uint64, size)
	sc.shift = uint(65 - bits.Len(uint(size)))
	sc.used = 0
	mask := size - 1
	for j := range old {
		v := &old[j]
		if v.k0 == 0 || !keep(v) {
			continue
		}
		k0 := v.key0()
		i := int((k0+v.k1*sc.mul1)*sc.mul0>>sc.shift) & mask
		for sc.vocab[i].k0 != 0 {
			i = (i + 1) & mask
		}
		sc.vocab[i] = *v
		sc.vocab[i].k0, sc.vocab[i].shared = k0, 0
		sc.used++
		sc.addHash(i)
	}
}

// addHash puts the hash of vocabulary slot i in the hash set, flagging
// both entries if another entry has it already.
func (sc *bm25Scratch) addHash(i int) {
	h := sc.vocab[i].fnv
	mask := uint32(len(sc.hashes) - 1)
	for j := (h * sc.mulH) >> (sc.shift - 32) & mask; ; j = (j + 1) & mask {
		e := sc.hashes[j]
		if e == 0 {
			sc.hashes[j] = uint64(h)<<32 | uint64(i+1)
			return
		}
		if uint32(e>>32) == h {
			if o := &sc.vocab[uint32(e)-1]; o.shared == 0 {
				o.markShared()
			}
			sc.vocab[i].markShared()
			return
		}
	}
}

// tfLUT is how many term frequencies vector looks up rather than computes.
const tfLUT = 8

// vector builds the output from the no distinct tokens of the call in
// scratch (see output), and clears their counts. If a token may share its
// hash with another, tokens are merged by hash into the first one's entry.
func (sc *bm25Scratch) vector(no int, avgdl float64) []uint32 {
	stats := sc.stats[:no]
	defer clear(stats)
	n := 0
	for _, st := range stats {
		n += int(st.tf)
	}
	norm := BM25K1 * (1 - BM25B + BM25B*float64(n)/avgdl)
	if !sc.shared && len(sc.longAt) > 0 {
		sc.shared = longShares(stats, sc.longAt)
	}
	var lut [tfLUT]float64
	for tf := 1; tf < tfLUT; tf++ {
		f := float64(tf)
		lut[tf] = f * (BM25K1 + 1) / (f + norm)
	}
	value := func(tf uint32) float64 {
		if tf < tfLUT {
			return lut[tf]
		}
		f := float64(tf)
		return f * (BM25K1 + 1) / (f + norm)
	}
	if !sc.shared {
		var lut32 [tfLUT]float32
		for tf, v := range lut {
			lut32[tf] = float32(v)
		}
		out := sc.output(no)
		idx, vals := out[:no], out[no:]
		for p, st := range stats {
			idx[p] = st.fnv
			if st.tf < tfLUT {
				vals[p] = math.Float32bits(lut32[st.tf])
			} else {
				vals[p] = math.Float32bits(float32(value(st.tf)))
			}
		}
		return out
	}
	size := 16
	for size < 2*no {
		size <<= 1
	}
	if cap(sc.merge) < size {
		sc.merge = make([]uint64, size)
	}
	merge := sc.merge[:size]
	clear(merge)
	shift := uint(33 - bits.Len(uint(size)))
	mask := uint32(size - 1)
	idx := sc.idx[:0]
	vals := sc.vals[:0]
	for _, st := range stats {
		h, val := st.fnv, value(st.tf)
		for i := (h * sc.mulH) >> shift; ; i = (i + 1) & mask {
			e := merge[i]
			if e == 0 {
				merge[i] = uint64(h)<<32 | uint64(len(idx)+1)
				idx = append(idx, h)
				vals = append(vals, val)
				break
			}
			if uint32(e>>32) == h {
				vals[uint32(e)-1] += val
				break
			}
		}
	}
	sc.idx, sc.vals = idx, vals
	out := sc.output(len(idx))
	copy(out, idx)
	for g, v := range vals {
		out[len(idx)+g] = math.Float32bits(float32(v))
	}
	return out
}

// output returns a scratch buffer for a vector of n entries: n indices,
// then n values as float32 bits.
func (sc *bm25Scratch) output(n int) []uint32 {
	if cap(sc.out) < 2*n {
		sc.out = make([]uint32, 2*n)
	}
	return sc.out[:2*n]
}

// longFew is how many long tokens longShares compares with every token.
const longFew = 4

// longShares reports whether a long token of the call (at the positions
// longAt of stats) may share its hash with another token, long tokens
// being kept out of the vocabulary's hash set: it compares the hashes of
// up to longFew of them with every token's, and says yes for more.
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
