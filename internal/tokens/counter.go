package tokens

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

// Counter counts tokens with one encoding, keeping scratch space and a
// cache of piece counts between calls. It is not safe for concurrent use.
type Counter struct {
	enc     *Encoding
	sc      scanner
	m       bpe
	small   []uint64    // two-way set-associative cache of the counts of pieces of 4 to 7 bytes
	hot     []hotEntry  // the same for pieces of 8 to 15 bytes
	long    []longEntry // direct-mapped cache of longer pieces' counts
	scanned int         // bytes cut into pieces (Scanned)
	merged  int         // pieces counted without the caches (tests count them)
}

// hotEntry caches the token count of one piece of 8 to hotMax bytes: k0
// holds its bytes 0–7, the low 56 bits of k1 its bytes 8–14 and the top
// byte of k1 its length (high nibble) and count (low nibble; a piece has
// at most a token per byte). An empty entry is zero, which no piece of
// two bytes or more packs to.
type hotEntry struct {
	k0, k1 uint64
}

// hotMax is the longest piece the cache holds.
const hotMax = 15

// hotBits and smallBits size the piece caches: 2^15 entries of two words
// for pieces of 8 to 15 bytes and 2^16 of one word for pieces of 4 to 7
// bytes (1 MiB in all), in sets of two. Chunking the Markdown corpus in
// token mode a second time, 314,000 pieces of 4 to 15 bytes missed them,
// against 364,000 with one cache of 2^16 two-word entries for both (a
// simulation had the 2^14 direct-mapped entries of three words before
// it missing about twice as often); pieces merged in all, 346,000.
// Twice the entries of one word (1.5 MiB) took that to 278,000, no
// faster.
const (
	hotBits   = 15
	smallBits = 16
)

// longEntry caches the token count of one piece of hotMax+1 to longMax
// bytes, keeping a copy of its bytes to verify a hit.
type longEntry struct {
	hash  uint64
	count int
	piece []byte
}

// longMax is the longest piece the long cache holds, and longBits sizes
// it: 2^9 entries, at most 1 MiB of pieces. Long pieces are few but each
// costs a merge, and a chunker counts the same long piece several
// times (a long unbroken line cut into prefixes).
const (
	longMax  = 2048
	longBits = 9
)

// Encoding returns the encoding c counts with.
func (c *Counter) Encoding() *Encoding { return c.enc }

// Release gives c back to its encoding; c must not be used after.
func (c *Counter) Release() {
	c.sc = scanner{}
	e := c.enc
	e.mu.Lock()
	if len(e.free) < maxFree {
		e.free = append(e.free, c)
	}
	e.mu.Unlock()
}

// Scanned returns the bytes c has cut into pieces since it was made,
// counting every scan (a count, a cut, an index's build and its queries):
// the work tests count.
func (c *Counter) Scanned() int { return c.scanned }

// next returns the end of the piece starting at i (< len(c.sc.s)).
func (c *Counter) next(i int) int {
	o200k := c.enc.o200k
	j := c.sc.ascii(i, o200k)
	if j == 0 {
		if o200k {
			j = c.sc.nextO200K(i)
		} else {
			j = c.sc.nextCL100K(i)
		}
	}
	c.scanned += j - i
	return j
}

// Count returns the number of tokens of text.
func (c *Counter) Count(text []byte) int {
	return c.CountLimit(text, len(text))
}

// CountLimit returns the number of tokens of text when it is at most
// limit, else some number above limit, stopping once past limit.
func (c *Counter) CountLimit(text []byte, limit int) int {
	c.sc = scanner{s: text}
	n := 0
	for i := 0; i < len(text) && n <= limit; {
		// A piece too long to fit whatever its tokens takes the count
		// over limit without merging.
		j, k := c.countTo(i, i+1, (limit-n+1)*c.enc.ranks.longest, limit+1-n)
		n += k
		i = j
	}
	c.sc = scanner{}
	return n
}

// CountString is Count for a string (not copied).
func (c *Counter) CountString(text string) int {
	return c.Count(bytesOf(text))
}

// CountStringLimit is CountLimit for a string (not copied).
func (c *Counter) CountStringLimit(text string, limit int) int {
	return c.CountLimit(bytesOf(text), limit)
}

// bytesOf returns the bytes of s without copying them (the counter only
// reads them and keeps no reference).
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// cutWindow bounds the bytes Cut reads per token asked for: a long run of
// letters is one piece, which Cut would otherwise merge whole for each
// prefix taken from it.
const cutWindow = 16

// Cut returns the length in bytes of a prefix of text of about n ≥ 1
// tokens: the first n tokens of text's first 16n+64 bytes, moved back to
// a character start, but at least one character; len(text) when text has
// at most n tokens. Counted alone, the prefix may have a few tokens more
// or less than n.
func (c *Counter) Cut(text []byte, n int) int {
	text = text[:min(len(text), cutWindow*max(n, 1)+64)]
	c.sc = scanner{s: text}
	defer func() { c.sc = scanner{} }()
	end := len(text)
	for i := 0; i < len(text); {
		j, k := c.countTo(i, i+1, len(text), 0)
		piece := text[i:j]
		if k < n {
			n -= k
			i = j
			continue
		}
		end = j
		if k > n {
			p := c.m.parts(piece)
			end = i + int(p[n])
		}
		break
	}
	for end < len(text) && end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == 0 && len(text) > 0 {
		_, size := utf8.DecodeRune(text)
		end = size
	}
	return end
}

// pieceTokens returns the number of tokens of one piece.
func (c *Counter) pieceTokens(piece []byte) int {
	if len(piece) == 1 {
		return 1
	}
	if len(piece) <= 3 {
		return c.shortPiece(piece)
	}
	if len(piece) < 8 {
		return c.smallPiece(piece)
	}
	if len(piece) > hotMax {
		return c.longPiece(piece)
	}
	k0, k1 := binary.LittleEndian.Uint64(piece), pack(piece[8:])|uint64(len(piece))<<60
	if c.hot == nil {
		c.hot = make([]hotEntry, 1<<hotBits)
	}
	h := (k0*0x9E3779B97F4A7C15 ^ k1*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15 >> (64 - hotBits)
	set := (*[2]hotEntry)(c.hot[h&^1:])
	const keyMask = 0xF0FFFFFFFFFFFFFF // k1 without the count
	if e := set[0]; e.k0 == k0 && e.k1&keyMask == k1 {
		return int(e.k1 >> 56 & 0xF)
	}
	if e := set[1]; e.k0 == k0 && e.k1&keyMask == k1 {
		set[0], set[1] = e, set[0] // most recently used first
		return int(e.k1 >> 56 & 0xF)
	}
	n := c.slowPiece(piece)
	set[1], set[0] = set[0], hotEntry{k0: k0, k1: k1 | uint64(n)<<56}
	return n
}

// smallPiece returns the number of tokens of a piece of 4 to 7 bytes,
// through the cache of such pieces, whose entries are one word: the
// piece's bytes in the low 56 bits, its length (high nibble) and count
// (low nibble) in the top byte.
func (c *Counter) smallPiece(piece []byte) int {
	k := pack(piece) | uint64(len(piece))<<60
	if c.small == nil {
		c.small = make([]uint64, 1<<smallBits)
	}
	h := (k * 0x9E3779B97F4A7C15) >> (64 - smallBits)
	set := (*[2]uint64)(c.small[h&^1:])
	const keyMask = 0xF0FFFFFFFFFFFFFF // without the count
	if e := set[0]; e&keyMask == k {
		return int(e >> 56 & 0xF)
	}
	if e := set[1]; e&keyMask == k {
		set[0], set[1] = e, set[0] // most recently used first
		return int(e >> 56 & 0xF)
	}
	n := c.slowPiece(piece)
	set[1], set[0] = set[0], k|uint64(n)<<56
	return n
}

// shortPiece returns the number of tokens of a piece of two or three
// bytes without merging: a two-byte piece that is no token is two single
// bytes, and a three-byte one is two tokens when either of its pairs is
// one (the merge of the lower-ranked pair cannot be followed by another),
// else three single bytes.
func (c *Counter) shortPiece(piece []byte) int {
	t := c.enc.ranks
	if len(piece) == 2 {
		if t.isPair(piece[0], piece[1]) {
			return 1
		}
		return 2
	}
	if t.isTriple(piece[0], piece[1], piece[2]) {
		return 1
	}
	if t.isPair(piece[0], piece[1]) || t.isPair(piece[1], piece[2]) {
		return 2
	}
	return 3
}

// longPiece returns the number of tokens of a piece longer than hotMax.
func (c *Counter) longPiece(piece []byte) int {
	if len(piece) > longMax {
		return c.slowPiece(piece)
	}
	if c.long == nil {
		c.long = make([]longEntry, 1<<longBits)
	}
	h := hashBytes(piece)
	e := &c.long[h>>(64-longBits)]
	if e.hash == h && bytes.Equal(e.piece, piece) {
		return e.count
	}
	n := c.slowPiece(piece)
	e.hash, e.count, e.piece = h, n, append(e.piece[:0], piece...)
	return n
}

// hashBytes hashes b eight bytes at a time (the same in every process,
// so that the work of a count is reproducible).
func hashBytes(b []byte) uint64 {
	h := uint64(len(b)) * 0x9E3779B97F4A7C15
	for ; len(b) >= 8; b = b[8:] {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xC2B2AE3D27D4EB4F
		h ^= h >> 29
	}
	return (h ^ pack(b)) * 0x9E3779B97F4A7C15
}

// slowPiece counts the tokens of a piece without the cache.
func (c *Counter) slowPiece(piece []byte) int {
	c.merged++
	if _, ok := c.enc.ranks.rank(piece); ok {
		return 1
	}
	if len(piece) <= shortCount {
		return c.m.countShort(piece)
	}
	return len(c.m.parts(piece)) - 1
}

// Appender counts the tokens of a text written to it in parts, exactly
// and in linear time (see the package documentation). Call Reset before
// use.
type Appender struct {
	c     *Counter
	limit int
	done  int    // tokens of the final pieces
	tail  []byte // the text after the final pieces
}

// Reset empties a and makes it count with c, stopping once its count is
// known to be above limit (see Over).
func (a *Appender) Reset(c *Counter, limit int) {
	a.c, a.limit, a.done, a.tail = c, limit, 0, a.tail[:0]
}

// CopyFrom makes a a copy of b (reusing a's buffer).
func (a *Appender) CopyFrom(b *Appender) {
	a.c, a.limit, a.done = b.c, b.limit, b.done
	a.tail = append(a.tail[:0], b.tail...)
}

// step counts the piece of the text at i and returns where the next
// begins; ok is false when the piece ends the text written so far, so it
// may still grow or change.
func (a *Appender) step(i int) (j int, ok bool) {
	c := a.c
	c.sc.eof = false
	j = c.next(i)
	if c.sc.eof {
		return i, false
	}
	if piece := a.tail[i:j]; len(piece) > (a.limit-a.done+1)*c.enc.ranks.longest {
		a.done = a.limit + 1
	} else {
		a.done += c.pieceTokens(piece)
	}
	return j, true
}

// Over reports whether the text written so far is known to have more
// than limit tokens; once over, writes are ignored.
func (a *Appender) Over() bool { return a.done > a.limit }

// Write appends p to the text.
func (a *Appender) Write(p []byte) {
	if a.Over() {
		return
	}
	a.tail = append(a.tail, p...)
	a.steps()
}

// WriteString is Write for a string.
func (a *Appender) WriteString(s string) {
	a.Write(bytesOf(s))
}

// Count returns the number of tokens of the text written, or some number
// above limit once Over.
func (a *Appender) Count() int {
	if a.Over() || len(a.tail) == 0 {
		return a.done
	}
	return a.done + a.c.CountLimit(a.tail, a.limit-a.done)
}
