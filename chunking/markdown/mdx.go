package markdown

import (
	"bytes"
	"cmp"
	"slices"
)

// CleanMDX returns MDX source with the MDX-only syntax removed outside
// code fences, in the steps docs/chunkers.md (MDX) lists; code fences are
// kept byte for byte. It runs in linear time and never fails.
// CleanMDXMap also says where each byte came from.
func CleanMDX(src []byte) []byte {
	clean, _ := cleanMDX(src, false)
	return clean
}

// CleanMDXMap is CleanMDX that also returns the map from offsets of the
// cleaned text back to offsets of src: cleaning only removes bytes, so the
// cleaned text is a sequence of runs of src, and the map holds where each
// run starts in both.
func CleanMDXMap(src []byte) ([]byte, *OffsetMap) {
	return cleanMDX(src, true)
}

// OffsetMap maps byte offsets of a cleaned text back to the source it was
// cleaned from (CleanMDXMap). The nil map is the identity.
type OffsetMap struct {
	runs []run // in order of at; the cleaned text is the runs' bytes
}

// run is a run of source bytes kept whole: the cleaned bytes from at to
// the next run's at are the source bytes from orig on.
type run struct{ at, orig int }

// find returns the run holding cleaned byte off.
func (m *OffsetMap) find(off int) run {
	i, _ := slices.BinarySearchFunc(m.runs, off, func(r run, off int) int { return cmp.Compare(r.at, off+1) })
	return m.runs[max(i-1, 0)]
}

// Start returns the source offset of cleaned byte off: where a span
// starting there starts in the source.
func (m *OffsetMap) Start(off int) int {
	if m == nil || len(m.runs) == 0 {
		return off
	}
	r := m.find(off)
	return r.orig + off - r.at
}

// End returns the source offset just after cleaned byte end-1 (end ≥ 1):
// where a span ending at end ends in the source.
func (m *OffsetMap) End(end int) int {
	if m == nil || len(m.runs) == 0 {
		return end
	}
	return m.Start(end-1) + 1
}

// text is MDX text during cleaning: its bytes, and when tracked the runs
// of source bytes they are made of.
type text struct {
	b     []byte
	runs  []run
	track bool
}

// builder writes a cleaned text from ranges of an input text, in
// increasing order, carrying the runs over.
type builder struct {
	in  *text
	out text
	k   int // the input run holding the last copied byte
}

func newBuilder(in *text, size int) *builder {
	return &builder{in: in, out: text{b: make([]byte, 0, size), track: in.track}}
}

// copy appends in.b[i:j].
func (w *builder) copy(i, j int) {
	if i >= j {
		return
	}
	if w.out.track {
		runs := w.in.runs
		for w.k+1 < len(runs) && runs[w.k+1].at <= i {
			w.k++
		}
		for k, p := w.k, i; p < j; k++ {
			w.out.addRun(len(w.out.b)+p-i, runs[k].orig+p-runs[k].at)
			if k+1 >= len(runs) {
				break
			}
			p = runs[k+1].at
		}
	}
	w.out.b = append(w.out.b, w.in.b[i:j]...)
}

// addRun records that the byte at at comes from orig, unless the previous
// run already says so.
func (t *text) addRun(at, orig int) {
	if n := len(t.runs); n > 0 && t.runs[n-1].orig+at-t.runs[n-1].at == orig {
		return
	}
	t.runs = append(t.runs, run{at: at, orig: orig})
}

// cleanMDX is CleanMDX, with the offset map when track is set.
func cleanMDX(src []byte, track bool) ([]byte, *OffsetMap) {
	in := &text{b: src, track: track}
	if track {
		in.runs = []run{{0, 0}}
	}
	w := newBuilder(in, len(src))
	for p := 0; p < len(src); {
		fs, fe := nextFence(src, p)
		if fs > p {
			afterFence := len(w.out.b) > 0 && w.out.b[len(w.out.b)-1] == '\n'
			region := &text{b: src[p:fs], track: track}
			if track {
				region.runs = []run{{0, p}}
			}
			cleaned := cleanRegion(region, afterFence)
			w.appendText(cleaned)
		}
		w.copy(fs, fe)
		p = fe
	}
	if !track {
		return w.out.b, nil
	}
	return w.out.b, &OffsetMap{runs: w.out.runs}
}

// appendText appends a text whose runs hold source offsets.
func (w *builder) appendText(t *text) {
	if w.out.track {
		for _, r := range t.runs {
			if r.at < len(t.b) {
				w.out.addRun(len(w.out.b)+r.at, r.orig)
			}
		}
	}
	w.out.b = append(w.out.b, t.b...)
}

// nextFence returns the span of the first fenced code block at or after p
// (opening line to closing line, or to the end when unclosed), or
// len(src), len(src). Fences are found line by line at any indentation, as
// MDX writers nest them in components.
func nextFence(src []byte, p int) (int, int) {
	for i := p; i < len(src); {
		e := lineEndOf(src, i)
		line := bytes.TrimLeft(src[i:e], " \t")
		if c, n := fenceRun(line); n >= 3 && (c != '`' || bytes.IndexByte(line[n:], '`') < 0) {
			for j := e; j < len(src); {
				k := lineEndOf(src, j)
				l := bytes.TrimSpace(src[j:k])
				if cc, m := fenceRun(l); cc == c && m >= n && m == len(l) {
					return i, k
				}
				j = k
			}
			return i, len(src)
		}
		i = e
	}
	return len(src), len(src)
}

func fenceRun(line []byte) (byte, int) {
	if len(line) == 0 || line[0] != '`' && line[0] != '~' {
		return 0, 0
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	return line[0], n
}

// cleanRegion cleans text outside fences; afterFence says it follows a
// fence's closing line break, which counts in a run of line breaks.
func cleanRegion(t *text, afterFence bool) *text {
	t = cut(t, removeComments(t.b))
	t = cut(t, removeImports(t.b))
	t = cut(t, removeExports(t.b))
	t = cut(t, removeTags(t.b))
	return cut(t, collapseNewlines(t.b, afterFence))
}

// span is a byte range [start, end) that a cleaning step removes.
type span struct{ start, end int }

// cut returns t without the ranges cuts (in order, not overlapping), or t
// itself when there are none.
func cut(t *text, cuts []span) *text {
	if len(cuts) == 0 {
		return t
	}
	w := newBuilder(t, len(t.b))
	last := 0
	for _, c := range cuts {
		w.copy(last, c.start)
		last = c.end
	}
	w.copy(last, len(t.b))
	return &w.out
}

// removeComments returns the HTML comments of b.
func removeComments(b []byte) []span {
	var cuts []span
	for p := 0; ; {
		i := bytes.Index(b[p:], []byte("<!--"))
		if i < 0 {
			break
		}
		i += p
		j := bytes.Index(b[i+4:], []byte("-->"))
		if j < 0 {
			break
		}
		p = i + 4 + j + 3
		cuts = append(cuts, span{i, p})
	}
	return cuts
}

// removeImports returns the import statements of b: a line starting with
// "import " whose statement ends, on it or on a following non-blank line,
// with from '…' or from "…" (an optional semicolon).
func removeImports(b []byte) []span {
	var cuts []span
	for i := 0; i < len(b); {
		e := lineEndOf(b, i)
		if bytes.HasPrefix(b[i:e], []byte("import ")) || bytes.HasPrefix(b[i:e], []byte("import{")) {
			j := i
			for n := 0; j < len(b) && n < 64; n++ {
				k := lineEndOf(b, j)
				line := b[j:k]
				if len(bytes.TrimSpace(line)) == 0 {
					break
				}
				if endsWithFrom(line) {
					cuts = append(cuts, span{i, k})
					e = k
					break
				}
				j = k
			}
		}
		i = e
	}
	return cuts
}

// endsWithFrom reports whether line ends with from '…' (or "…"), an
// optional semicolon and whitespace.
func endsWithFrom(line []byte) bool {
	l := bytes.TrimRight(line, " \t\r\n;")
	if len(l) < 2 {
		return false
	}
	q := l[len(l)-1]
	if q != '\'' && q != '"' {
		return false
	}
	k := bytes.LastIndexByte(l[:len(l)-1], q)
	if k < 0 {
		return false
	}
	before := bytes.TrimRight(l[:k], " \t")
	return bytes.HasSuffix(before, []byte("from")) && (len(before) == 4 || before[len(before)-5] == ' ' || before[len(before)-5] == '\t' || before[len(before)-5] == '}')
}

var exportPrefixes = [][]byte{[]byte("export const "), []byte("export let "), []byte("export var "), []byte("export default ")}

// removeExports returns the export const|let|var|default blocks of b:
// from the line to the next blank line or header line.
func removeExports(b []byte) []span {
	var cuts []span
	for i := 0; i < len(b); {
		e := lineEndOf(b, i)
		if !slices.ContainsFunc(exportPrefixes, func(p []byte) bool { return bytes.HasPrefix(b[i:e], p) }) {
			i = e
			continue
		}
		from := i
		for i = e; i < len(b); {
			e = lineEndOf(b, i)
			if line := b[i:e]; len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
				break
			}
			i = e
		}
		cuts = append(cuts, span{from, i})
	}
	return cuts
}

// removeTags returns the PascalCase tag pairs of b with only whitespace
// inside and its self-closing PascalCase tags. A tag ends at its first
// '>', so attribute values holding '>' are not recognised.
func removeTags(b []byte) []span {
	var cuts []span
	gt := -1 // cached offset of the next '>' at or after the search point
	for i := 0; i < len(b)-1; i++ {
		if b[i] != '<' || b[i+1] < 'A' || b[i+1] > 'Z' {
			continue
		}
		n := i + 1
		for n < len(b) && (isNameByte(b[n])) {
			n++
		}
		name := b[i+1 : n]
		if n < len(b) && b[n] != '>' && b[n] != '/' && b[n] != ' ' && b[n] != '\t' && b[n] != '\n' && b[n] != '\r' {
			continue
		}
		if gt < n {
			gt = -1
			if k := bytes.IndexByte(b[n:], '>'); k >= 0 {
				gt = n + k
			}
		}
		if gt < 0 {
			break // no '>' anywhere after: no more tags
		}
		end := -1
		if b[gt-1] == '/' {
			end = gt + 1 // self-closing
		} else {
			j := gt + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if bytes.HasPrefix(b[j:], []byte("</")) && bytes.HasPrefix(b[j+2:], name) && j+2+len(name) < len(b) && b[j+2+len(name)] == '>' {
				end = j + 2 + len(name) + 1
			}
		}
		if end < 0 {
			continue
		}
		cuts = append(cuts, span{i, end})
		i = end - 1
	}
	return cuts
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// collapseNewlines returns the line breaks of b beyond the second of
// each run of three or more.
func collapseNewlines(b []byte, afterFence bool) []span {
	if !bytes.Contains(b, []byte("\n\n\n")) && !(afterFence && bytes.HasPrefix(b, []byte("\n\n"))) {
		return nil
	}
	var cuts []span
	run := 0
	if afterFence {
		run = 1
	}
	for i, c := range b {
		if c != '\n' {
			run = 0
			continue
		}
		if run++; run > 2 {
			if n := len(cuts); n > 0 && cuts[n-1].end == i {
				cuts[n-1].end = i + 1
			} else {
				cuts = append(cuts, span{i, i + 1})
			}
		}
	}
	return cuts
}
