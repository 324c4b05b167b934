package html

import "sort"

// seg maps a run of output bytes, from out to the next seg's out, to the
// source bytes [src, end). An ident seg maps byte for byte (output byte
// out+k is source byte src+k: text copied, or one whitespace byte read as
// a space); any other maps its whole run to the whole range (a decoded
// entity, collapsed whitespace, Markdown syntax the renderer wrote, which
// points at the tag it stands for, or nothing: src == end).
type seg struct {
	out, src, end int
	ident         bool
}

// offsetMap maps offsets of a text made from a source (the Markdown
// rendering of a page, or a page decoded to UTF-8) back to the source.
type offsetMap struct {
	segs []seg
	n    int // the text's length
}

// find returns the index of the seg holding output byte o (0 ≤ o < n).
func (m *offsetMap) find(o int) int {
	return sort.Search(len(m.segs), func(i int) bool { return m.segs[i].out > o }) - 1
}

// start returns the source offset where output byte o comes from.
func (m *offsetMap) start(o int) int {
	if m == nil {
		return o
	}
	s := m.segs[m.find(o)]
	if s.ident {
		return s.src + o - s.out
	}
	return s.src
}

// end returns the source offset just past where output byte o-1 comes
// from: the end of a range whose last output byte is o-1.
func (m *offsetMap) end(o int) int {
	if m == nil {
		return o
	}
	s := m.segs[m.find(o-1)]
	if s.ident {
		return s.src + o - s.out
	}
	return s.end
}

// buf is text being written with its offset map.
type buf struct {
	b    []byte
	segs []seg
}

func (w *buf) reset() {
	w.b = w.b[:0]
	w.segs = w.segs[:0]
}

// add records that the bytes just appended from out on map as s says.
func (w *buf) add(out, src, end int, ident bool) {
	if len(w.b) == out {
		return
	}
	if n := len(w.segs); n > 0 {
		p := &w.segs[n-1]
		if ident && p.ident && p.end == src && p.src+out-p.out == src {
			p.end = end
			return
		}
		if !ident && !p.ident && p.src == src && p.end == end {
			return
		}
	}
	w.segs = append(w.segs, seg{out: out, src: src, end: end, ident: ident})
}

// copied appends text taken byte for byte from the source at src.
func (w *buf) copied(text []byte, src int) {
	out := len(w.b)
	w.b = append(w.b, text...)
	w.add(out, src, src+len(text), true)
}

// made appends text the renderer made, standing for source [src, end).
func (w *buf) made(text string, src, end int) {
	out := len(w.b)
	w.b = append(w.b, text...)
	w.add(out, src, end, false)
}

// madeByte is made for one byte.
func (w *buf) madeByte(c byte, src, end int) {
	out := len(w.b)
	w.b = append(w.b, c)
	w.add(out, src, end, false)
}

// from appends o.b[i:j] with its map.
func (w *buf) from(o *buf, i, j int) {
	if i >= j {
		return
	}
	out := len(w.b)
	w.b = append(w.b, o.b[i:j]...)
	k := sort.Search(len(o.segs), func(k int) bool { return o.segs[k].out > i }) - 1
	for ; k < len(o.segs) && o.segs[k].out < j; k++ {
		s := o.segs[k]
		lo, hi := max(s.out, i), j
		if k+1 < len(o.segs) {
			hi = min(hi, o.segs[k+1].out)
		}
		if s.ident {
			w.add(out+lo-i, s.src+lo-s.out, s.src+hi-s.out, true)
		} else {
			w.add(out+lo-i, s.src, s.end, false)
		}
		// add merges only when the bytes are already appended; they are.
	}
}

// srcAt returns the source offset of w's byte i (i < len(w.b)), for the
// place of text made before it.
func (w *buf) srcAt(i int) int {
	m := offsetMap{segs: w.segs, n: len(w.b)}
	return m.start(i)
}

// mapOf returns w's offset map (sharing its segs).
func (w *buf) mapOf() *offsetMap { return &offsetMap{segs: w.segs, n: len(w.b)} }
