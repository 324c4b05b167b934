package bm25

import (
	"math/bits"
	"math/rand/v2"
	"unicode"
	"unicode/utf8"
)

// How the tokens are counted fast (it runs on every chunk the worker
// writes):
//
//   - The text is classified into a bitmap of candidate bytes (ASCII
//     letters and digits, and every non-ASCII byte), eight bytes at a time
//     (classify); the bytes of the common separator runes are then taken
//     out (unmarkSeparators), so that "don’t" is two ASCII runs.
//   - The runs of the bitmap are the candidate tokens (countRuns). A run of
//     ASCII letters and digits of at most 16 bytes (nearly every token) is
//     loaded as two little-endian words, lowercased by setting bit 5 of
//     each byte and masked to its length: that pair is its key.
//   - The key is looked up in a vocabulary table that outlives the call
//     (it belongs to the scratch space): an entry keeps the token's FNV-1a
//     hash, so a word is hashed once, not at every occurrence. An entry
//     belongs to the current call only if it holds the call's number
//     (epoch), so nothing is cleared between calls; a token first seen in
//     the call takes the next position, and the counts and hashes of the
//     call are kept by position, so the output is a sequential pass.
//   - Runs with non-ASCII bytes, tokens longer than 16 bytes and tokens
//     not in the table yet take the slower path (countRun): the Unicode
//     rules, the full probe into the same table, a map for long tokens.
//   - Entries whose hash equals another entry's are flagged when inserted
//     (and their keys altered, so that the fast loop never matches them),
//     so the output is merged by hash only for calls with such a token,
//     or with a long token whose hash another token of the call has.
//   - The counts of the call are kept zero past its distinct tokens (the
//     output pass clears them), so the fast loop counts a new token like a
//     seen one; the number of tokens is the sum of the counts.

// Vocabulary table sizes (entries, powers of two). The table keeps the
// tokens of earlier calls up to half of vocabMax entries (2 MiB, and
// 0.5 MiB for the hash set); then the tokens not seen in the last
// vocabRecent calls are dropped, or all of them if the recent ones fill a
// quarter of it. One call may grow the table past vocabMax while it needs
// to.
const (
	vocabMin    = 1 << 10
	vocabMax    = 1 << 16
	vocabRecent = 256
)

// longMax is how many long tokens the scratch space keeps between calls;
// past it, the next call starts with none.
const longMax = 1 << 12

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
// fast loop, which compares the keys of ASCII tokens exactly and checks
// nothing else, leaves such tokens to the slow path (find), which sees
// the flag. The flipped key of an ASCII token has a non-ASCII byte; that
// of a Unicode token still has one (UTF-8 sequences have two or more), and
// its first byte is not zero (a token starts at a rune, not a continuation
// byte): no ASCII token's key, and not an empty slot.
const sharedKey = 0x80

// key0 returns the entry's k0 as the token's bytes.
func (v *vocabEntry) key0() uint64 { return v.k0 ^ uint64(v.shared)*sharedKey }

// markShared flags the entry as sharing its hash.
func (v *vocabEntry) markShared() {
	v.k0 = v.key0() ^ sharedKey
	v.shared = 1
}

// longEntry is one long token (over shortMax bytes) kept between calls.
type longEntry struct {
	fnv   uint32 // FNV-1a 32 of the lowercased token
	epoch uint32 // the call that saw the token last
	pos   uint32 // its position in that call
}

// A stat is the hash and count of a distinct token of the call.
type stat struct{ fnv, tf uint32 }

// scratch is the reusable state of one encoding at a time: the vocabulary
// table (open addressing, linear probing, slot = (k0 + k1·mul1)·mul0 >>
// shift), the set of its hashes (hash<<32 | slot+1 at slot hash·mulH >>
// hshift), the long tokens, the call counter, and per-call buffers.
type scratch struct {
	mul0, mul1 uint64
	mulH       uint32
	epoch      uint32
	shift      uint
	used       int
	vocab      []vocabEntry
	hashes     []uint64

	long   map[string]int32 // long token → its entry in longs
	longs  []longEntry
	longAt []int32 // the positions of the long tokens of this call
	shared bool    // a token of this call may share its hash

	stats []stat    // by position: the distinct tokens of the call; zero past them between calls
	cand  []uint64  // bit i: byte i is an ASCII letter or digit, or not ASCII; a zero word past the text
	high  []uint64  // bit i: byte i is not ASCII; a zero word past the text
	tail  [64]byte  // the text's last partial block, zero padded
	buf   []byte    // a lowercased token off the fast path
	merge []uint64  // hash → output entry, (hash<<32 | entry+1)
	idx   []uint32  // merged output, before it is copied out
	vals  []float64 // its values
}

// newScratch returns an empty scratch space whose vocabulary table starts
// at size entries (a power of two).
func newScratch(size int) *scratch {
	// Random odd multipliers spread keys over the tables, so a text cannot
	// be crafted to pile its tokens into one probe run. They change where
	// tokens are stored, never the output.
	sc := &scratch{
		mul0: rand.Uint64() | 1,
		mul1: rand.Uint64() | 1,
		mulH: rand.Uint32() | 1,
	}
	sc.resetVocab(size)
	return sc
}

// resetVocab empties the vocabulary table, at size entries.
func (sc *scratch) resetVocab(size int) {
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
	clear(sc.long)
	sc.longs = sc.longs[:0]
}

// begin starts a call on a text of n bytes: a new epoch, and room in the
// vocabulary for the text's tokens (at most one per two bytes), or for a
// quarter of the table if it has more.
func (sc *scratch) begin(n int) {
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
	if len(sc.longs) > longMax {
		clear(sc.long)
		sc.longs = sc.longs[:0]
	}
	sc.shared = false
	sc.longAt = sc.longAt[:0]
}

// count counts the tokens of text; it returns the number of distinct ones,
// whose hashes and counts are sc.stats[:no], in the order of their first
// occurrence.
func (sc *scratch) count(text string) (no int) {
	sc.begin(len(text))
	if len(text) == 0 {
		return 0
	}
	// The bitmaps have a word for each 64-byte block of the text and one
	// past it, which ends every run.
	nw := (len(text)+63)/64 + 1
	if cap(sc.cand) < nw {
		sc.cand = make([]uint64, nw)
		sc.high = make([]uint64, nw)
	}
	// At most one token per two bytes.
	if maxRuns := len(text)/2 + 1; len(sc.stats) < maxRuns {
		sc.stats = make([]stat, maxRuns)
	}
	return sc.countRuns(text, sc.cand[:nw], sc.high[:nw])
}

// SWAR constants.
const (
	ones   = 0x0101010101010101
	hi80   = 0x80 * ones
	gather = 0x0102040810204080 // (m>>7)·gather>>56 packs the top bits of m's bytes
)

// load64 returns the little-endian word at s[i:i+8] (one load on the
// machines Go compiles for).
func load64[T string | []byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// classify sets cand and high from the 64-byte blocks of blocks (one word
// per block), eight bytes at a time; it reports whether a byte is not
// ASCII.
func classify[T string | []byte](blocks T, cand, high []uint64) bool {
	var anyHigh uint64
	high = high[:len(cand)]
	for b := range cand {
		blk := blocks[b*64 : b*64+64]
		c0, h0 := classifyWord(load64(blk, 0))
		c1, h1 := classifyWord(load64(blk, 8))
		c2, h2 := classifyWord(load64(blk, 16))
		c3, h3 := classifyWord(load64(blk, 24))
		c4, h4 := classifyWord(load64(blk, 32))
		c5, h5 := classifyWord(load64(blk, 40))
		c6, h6 := classifyWord(load64(blk, 48))
		c7, h7 := classifyWord(load64(blk, 56))
		cand[b] = c0 | c1<<8 | c2<<16 | c3<<24 | c4<<32 | c5<<40 | c6<<48 | c7<<56
		h := h0 | h1<<8 | h2<<16 | h3<<24 | h4<<32 | h5<<40 | h6<<48 | h7<<56
		high[b] = h
		anyHigh |= h
	}
	return anyHigh != 0
}

// classifyWord returns a bit for each of the eight bytes of w: whether it
// is a candidate byte (an ASCII letter or digit, or not ASCII), and
// whether it is not ASCII.
func classifyWord(w uint64) (cand, high uint64) {
	h := w & hi80
	v := w ^ h
	// A byte v < 0x80 is ≥ c iff v + (0x80 − c) has its top bit.
	digit := (v + 0x50*ones) &^ (v + 0x46*ones) // '0'..'9'
	l := v | 0x20*ones
	letter := (l + 0x1f*ones) &^ (l + 0x05*ones) // 'a'..'z' after |0x20
	return (digit | letter | h) & hi80 >> 7 * gather >> 56, h >> 7 * gather >> 56
}

// classifyText classifies text into cand and high (one word per 64-byte
// block, and a zero word past the text): the whole blocks where they are,
// the last partial one from a zero-padded copy. It reports whether a
// non-ASCII byte is left once the common separators are taken out of the
// runs (unmarkSeparators).
func (sc *scratch) classifyText(text string, cand, high []uint64) bool {
	nwords := len(cand) - 1
	full := len(text) / 64
	anyHigh := classify(text[:full*64], cand[:full], high[:full])
	if full < nwords {
		sc.tail = [64]byte{}
		copy(sc.tail[:], text[full*64:])
		if classify(sc.tail[:], cand[full:nwords], high[full:nwords]) {
			anyHigh = true
		}
	}
	cand[nwords], high[nwords] = 0, 0
	return anyHigh && unmarkSeparators(text, cand, high)
}

// unmarkSeparators clears in cand and high the bits of the bytes of the
// non-ASCII separator runes common in prose: U+2000 to U+203F (spaces,
// dashes, quotes, ellipsis; General Punctuation has no letter or digit
// before U+2071) and U+00A0, the no-break space. The runs around them then
// stay on the fast path: "don’t" is two ASCII runs, not one Unicode run.
// It returns whether a non-ASCII byte is left.
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
var keyMasks = func() (t [shortMax + 1][2]uint64) {
	for l := 1; l <= shortMax; l++ {
		t[l][0] = ^uint64(0) >> (64 - 8*min(l, 8))
		if l > 8 {
			t[l][1] = ^uint64(0) >> (128 - 8*l)
		}
	}
	return t
}()

// countRuns counts the tokens of text: it classifies text into cand and
// high, takes each run from the bitmap, counts the ASCII tokens of at
// most shortMax bytes found in the vocabulary table (not flagged
// sharedKey), and leaves the others to countRun. It returns the number of
// distinct tokens.
func (sc *scratch) countRuns(text string, cand, high []uint64) (no int) {
	if !sc.classifyText(text, cand, high) {
		high = nil
	}
	// Keys are loaded as 16 bytes from the token's start: in the text, or
	// for the last starts from a zero-padded copy of its end.
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
				var k0, k1 uint64
				if s+shortMax <= len(text) {
					k := text[s : s+shortMax]
					k0, k1 = load64(k, 0), load64(k, 8)
				} else {
					k := end[s-endAt : s-endAt+shortMax]
					k0, k1 = load64(k, 0), load64(k, 8)
				}
				mk := &keyMasks[l]
				k0 = (k0 | 0x20*ones) & mk[0]
				k1 = (k1 | 0x20*ones) & mk[1]
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

// countRun counts a run the fast loop leaves: one with non-ASCII bytes
// (unicode), whose non-letter non-digit runes and invalid bytes separate
// its tokens; or an ASCII token longer than shortMax, or one the fast loop
// did not find.
func (sc *scratch) countRun(run string, unicode bool, no int) int {
	if !unicode {
		buf := sc.buf[:0]
		for i := 0; i < len(run); i++ {
			buf = append(buf, run[i]|0x20)
		}
		sc.buf = buf
		return sc.countToken(buf, no)
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
func (sc *scratch) countToken(tok []byte, no int) int {
	if len(tok) > shortMax {
		return sc.countLong(tok, no)
	}
	var key [16]byte
	copy(key[:], tok)
	v := &sc.vocab[sc.find(load64(key[:], 0), load64(key[:], 8), len(tok))]
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

// countLong counts a lowercased token longer than shortMax.
func (sc *scratch) countLong(tok []byte, no int) int {
	j, ok := sc.long[string(tok)]
	if !ok {
		if sc.long == nil {
			sc.long = map[string]int32{}
		}
		j = int32(len(sc.longs))
		sc.long[string(tok)] = j
		sc.longs = append(sc.longs, longEntry{fnv: fnv1a32(tok), epoch: sc.epoch - 1})
	}
	e := &sc.longs[j]
	if e.epoch == sc.epoch {
		sc.stats[e.pos].tf++
		return no
	}
	e.epoch, e.pos = sc.epoch, uint32(no)
	sc.longAt = append(sc.longAt, int32(no))
	sc.stats[no] = stat{e.fnv, 1}
	return no + 1
}

const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

// fnv1a32 returns the 32-bit FNV-1a hash of b.
func fnv1a32(b []byte) uint32 {
	h := uint32(fnvOffset32)
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime32
	}
	return h
}

// find returns the slot of the token keyed k0, k1 (l bytes), inserting it
// if it is new.
func (sc *scratch) find(k0, k1 uint64, l int) int {
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
func (sc *scratch) insert(k0, k1 uint64, l int) int {
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
	put64(key[:8], k0)
	put64(key[8:], k1)
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

// put64 stores w in b[:8], little-endian.
func put64(b []byte, w uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(w >> (8 * i))
	}
}

// rebuild moves the entries that keep accepts into a new table of size
// entries, with a new hash set.
func (sc *scratch) rebuild(size int, keep func(*vocabEntry) bool) {
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
func (sc *scratch) addHash(i int) {
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
