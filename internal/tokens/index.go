package tokens

import (
	"math"
	"sort"
	"unsafe"
)

// checkEvery is the spacing, in bytes, of an Index's checkpoints: a
// query scans at most about this much again at each of its two ends, and
// the index takes about 12 bytes per checkpoint (0.4× the text).
const checkEvery = 32

// Index holds the pieces of one text with their running token counts, so
// that the tokens of any span of the text are counted exactly by scanning
// only its two ends: the text is counted once, however many of its spans
// are asked for (a chunker sizing a section, then its paragraphs, lines
// and chunks).
//
// Why spans can be counted from the whole text's pieces: the patterns look
// only forward, so a scan of the span that reaches a piece boundary of
// the whole text's scan goes on with the same pieces (the same bytes
// follow), and each of those pieces stays the same in the span as long as
// its match read nothing at or past the span's end (Build records how far
// the matches read). A query scans from the span's start until it lands
// on a checkpoint, adds the running counts up to the last checkpoint whose
// pieces read below the span's end, and scans from there to the end.
//
// An Index is reused across texts (Build empties it); it is not safe for
// concurrent use, and it keeps a reference to the text it indexes.
type Index struct {
	c     *Counter
	text  []byte
	limit int // counts are exact up to limit (see Build)
	// Checkpoints, in text order: pos[k] is a piece boundary of the whole
	// text's scan, cum[k] the tokens of the pieces before it, and
	// reach[k] one past the highest offset the matches of those pieces
	// read (len(text)+1 once one looked at the end). The first is 0.
	pos, cum, reach []int32
	final           int // the last checkpoint whose pieces never looked at the end
}

// Build indexes text, counted with c, whose tokens are then exact up to
// limit: a piece too long to have at most limit tokens (more than
// limit+1 times the longest token's bytes) is not merged but counted as
// limit+1 tokens, as CountLimit does. Texts longer than 2 GiB are not
// supported (Indexable).
func (x *Index) Build(c *Counter, text []byte, limit int) {
	x.c, x.text, x.limit = c, text, limit
	x.pos, x.cum, x.reach = append(x.pos[:0], 0), append(x.cum[:0], 0), append(x.reach[:0], 0)
	x.final = 0
	c.sc = scanner{s: text}
	n, last := 0, 0
	limit = min(limit, len(text)) // a text has at most a token per byte
	clip := (limit + 1) * c.enc.ranks.longest
	for i := 0; i < len(text); {
		j, k := c.countTo(i, last+checkEvery, clip, limit+1)
		n += k
		i = j
		{
			x.pos = append(x.pos, int32(i))
			x.cum = append(x.cum, int32(min(n, math.MaxInt32)))
			x.reach = append(x.reach, int32(c.sc.reach))
			if !c.sc.eof {
				x.final = len(x.pos) - 1
			}
			last = i
		}
	}
	c.sc = scanner{}
}

// Indexable reports whether a text of n bytes can be indexed.
func Indexable(n int) bool { return n < math.MaxInt32 }

// Text returns the indexed text.
func (x *Index) Text() []byte { return x.text }

// Exact reports whether spans are counted exactly up to limit.
func (x *Index) Exact(limit int) bool { return limit <= x.limit || x.limit >= len(x.text) }

// Total returns the tokens of the whole text when they are at most the
// limit it was built with, else a number above it.
func (x *Index) Total() int { return int(x.cum[len(x.cum)-1]) }

// Span returns where b lies in the indexed text, and whether it does
// (b is a subslice of it; an empty b lies nowhere).
func (x *Index) Span(b []byte) (int, bool) {
	if len(b) == 0 || len(x.text) == 0 {
		return 0, false
	}
	off := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(x.text)))
	if off > uintptr(len(x.text)) || uintptr(len(b)) > uintptr(len(x.text))-off {
		return 0, false
	}
	return int(off), true
}

// checkpoint returns the index of the checkpoint at offset i, or -1.
func (x *Index) checkpoint(i int) int {
	k := sort.Search(len(x.pos), func(k int) bool { return int(x.pos[k]) >= i })
	if k < len(x.pos) && int(x.pos[k]) == i {
		return k
	}
	return -1
}

// CountLimit returns the tokens of text[s:e] when they are at most limit
// (Exact(limit) must hold), else some number above limit; 0 ≤ s ≤ e ≤
// len(text).
func (x *Index) CountLimit(s, e, limit int) int {
	c, text := x.c, x.text
	limit = min(limit, e-s)
	c.sc = scanner{s: text[:e]}
	defer func() { c.sc = scanner{} }()
	n, jumped := 0, false
	next := -1 // the first checkpoint at or after i, found on the first look
	for i := s; i < e && n <= limit; {
		if !jumped {
			if next < 0 {
				next = sort.Search(len(x.pos), func(k int) bool { return int(x.pos[k]) >= i })
			}
			for next < len(x.pos) && int(x.pos[next]) < i {
				next++
			}
			if next < len(x.pos) && int(x.pos[next]) == i {
				// In step with the whole text's scan: take the pieces up
				// to the last checkpoint that read nothing at or past e
				// (all of them when the span runs to the text's end).
				k := len(x.pos) - 1
				if e < len(text) {
					k = sort.Search(len(x.pos), func(k int) bool { return int(x.reach[k]) > e }) - 1
				}
				if k > next {
					n += int(x.cum[k] - x.cum[next])
					i = int(x.pos[k])
				}
				jumped = true
				continue
			}
		}
		j, k := c.countTo(i, i+1, (limit-n+1)*c.enc.ranks.longest, limit+1-n)
		n += k
		i = j
	}
	return n
}

// jointWindow is how much of an indexed text AppendTo copies after the
// text before it to find the joint: the first piece boundary in step with
// the text's own scan, which is nearly always within a few pieces.
const jointWindow = 4 * checkEvery

// AppendTo writes the indexed text to a as Write would, scanning only the
// joint with the text before it. It copies only the joint and the text
// after the index's last final piece, unless the joint is not found in
// the first jointWindow bytes (then all of it, as Write does).
func (x *Index) AppendTo(a *Appender) {
	if a.Over() {
		return
	}
	if len(x.text) > 2*jointWindow && x.joint(a, jointWindow) {
		return
	}
	x.joint(a, len(x.text))
}

// joint writes the first n bytes of the indexed text after a's tail and
// counts the pieces from there until they are in step with the text's
// own scan, then goes on from the index's last final piece, copying only
// the text after it. When n is short of the whole text and the joint is
// not found in it, joint changes nothing and reports false.
func (x *Index) joint(a *Appender, n int) bool {
	text, c := x.text, a.c
	p, done := len(a.tail), a.done
	a.tail = append(a.tail, text[:n]...)
	c.sc = scanner{s: a.tail}
	next := 0
	i := a.stepUntil(0, func(i int) bool {
		for i >= p && next < len(x.pos) && int(x.pos[next])+p < i {
			next++
		}
		return i >= p && next < len(x.pos) && int(x.pos[next])+p == i
	})
	c.sc = scanner{}
	if !a.Over() && i < len(a.tail) && next < len(x.pos) && int(x.pos[next])+p == i {
		// In step with the text's own scan, whose pieces are final up to
		// checkpoint final: go on from there (or from here) in the rest
		// of the text.
		k := next
		if next < x.final {
			a.done += int(x.cum[x.final] - x.cum[next])
			k = x.final
		}
		a.tail = append(a.tail[:0], text[x.pos[k]:]...)
		a.steps()
		return true
	}
	if n < len(text) && !a.Over() {
		a.tail, a.done = a.tail[:p], done // a piece read past the window
		return false
	}
	a.tail = a.tail[:copy(a.tail, a.tail[i:])]
	return true
}

// steps counts the final pieces of a.tail and keeps the rest, as Write
// does.
func (a *Appender) steps() {
	if a.Over() {
		return
	}
	c := a.c
	c.sc = scanner{s: a.tail}
	i := a.stepUntil(0, nil)
	c.sc = scanner{}
	a.tail = a.tail[:copy(a.tail, a.tail[i:])]
}

// stepUntil counts the pieces of a.tail (which c.sc scans) from i until
// stop(i) holds (stop may be nil), a piece may still grow or change, or
// the count is over, and returns where it stopped.
func (a *Appender) stepUntil(i int, stop func(int) bool) int {
	for i < len(a.tail) && (stop == nil || !stop(i)) {
		j, ok := a.step(i)
		if !ok {
			break // the piece may still grow or change: keep it
		}
		i = j
		if a.Over() {
			break
		}
	}
	return i
}
