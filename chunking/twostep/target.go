package twostep

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
)

// packTarget is pack in target mode (docs/chunkers.md, "Target mode"),
// the Markdown chunker's rule over the two-step chunker's units: the
// units of one paragraph (sentences not parted by a blank line) that fit
// in the ceiling together are one unit, packed whole with their
// neighbours into near-equal shares of the section; a paragraph longer
// than the ceiling becomes pieces of its own, near-equal shares of it,
// the last piece before it joining it when shorter than half the target.
// A table or code block longer than the ceiling is such a paragraph of
// its lines; a line longer than the ceiling, like any other unit longer
// than it (a sentence, display math), is a chunk of its own, oversize.
func (c *Chunker) packTarget(src string, units []unit, hdrs []header, m measure.Measure, dst []piece, pl *poll.Poller) []piece {
	var run []unit   // units of the run of paragraphs being gathered
	var lines []unit // scratch: the lines of a unit longer than the ceiling
	flushRun := func() {
		if len(run) > 0 {
			dst = c.packCost(src, run, hdrs, m, measure.Balanced(c.spanSize(src, run, m), c.target), dst, pl)
			run = run[:0]
		}
	}
	for i := 0; i < len(units) && !pl.Stopped(); {
		j := i + 1
		for j < len(units) && !units[j-1].heading && !units[j].heading && !paragraphEnd(src, units[j-1], units[j]) {
			j++
		}
		para, first := units[i:j], i
		i = j
		size := c.spanSize(src, para, m)
		if len(para) == 1 && size > c.maxWords && para[0].lines {
			// A table or code block longer than the ceiling is cut at
			// its line ends, as a long paragraph.
			if ls := lineUnits(src, para[0], m, lines[:0]); len(ls) > 1 {
				lines, para = ls, ls
			}
		}
		if len(para) == 1 || size <= c.maxWords {
			u := para[0]
			u.end, u.words = para[len(para)-1].end, size
			run = append(run, u)
			continue
		}
		// A paragraph longer than the ceiling: pieces of its own.
		n := len(dst)
		flushRun()
		var lead []unit
		if len(dst) > n && 2*dst[len(dst)-1].words < c.target {
			last := dst[len(dst)-1]
			dst = dst[:len(dst)-1]
			k := first // the units of the last piece end just before the paragraph
			for k > 0 && units[k-1].start >= last.start {
				k--
			}
			lead = append(lead, units[k:first]...)
		}
		own := append(lead, para...)
		dst = c.packCost(src, own, hdrs, m, measure.Balanced(c.spanSize(src, own, m), c.target), dst, pl)
	}
	flushRun()
	return dst
}

// packCost appends the pieces of units us, cut into chunks near budget
// where ending a chunk costs least, as the Markdown chunker's target mode
// cuts (measure.Cut): each chunk ends at the end of least cost among
// those that keep it within the ceiling, the cost of an end being the
// chunk's squared deviation from budget plus the cost of the boundary
// after it (a blank line, a list item's start, a line break or a
// sentence end), a heading never ending a chunk and a unit ending with a
// colon staying with the unit it introduces; the units that fit last
// are one chunk, or two where that costs less. Each chunk's units are
// then packed by pack, which keeps it within the ceiling in tokens.
func (c *Chunker) packCost(src string, us []unit, hdrs []header, m measure.Measure, budget int, dst []piece, pl *poll.Poller) []piece {
	gap := func(a, b unit) int {
		switch {
		case m.Unit() == measure.Chars:
			return utf8.RuneCountInString(src[a.end:b.start])
		case m.Exact() || strings.IndexByte(src[a.end:b.start], '\n') < 0:
			return 0
		}
		return 1
	}
	// end returns what ending a chunk after us[k] costs, beside its size.
	end := func(k int) float64 {
		cost := 0.0
		if k+1 < len(us) {
			cost = c.cutBefore(src, us[k], us[k+1]).Cost()
			if strings.HasSuffix(src[us[k].start:us[k].end], ":") {
				cost += measure.CutSentence.Cost()
			}
			if us[k].heading {
				cost += measure.HeadingEnd
			}
		}
		return cost
	}
	for i := 0; i < len(us) && !pl.Stopped(); {
		best, bestCost := i, math.Inf(1)
		n, k := 0, i
		for ; k < len(us); k++ {
			if k > i {
				n += gap(us[k-1], us[k])
			}
			if n += us[k].words; k > i && n > c.maxWords {
				break
			}
			if cost := measure.SizeCost(n, budget) + end(k); cost < bestCost && k+1 < len(us) {
				best, bestCost = k, cost
			}
		}
		if pl.Add(us[k-1].end - us[i].start) {
			return dst
		}
		if k == len(us) {
			// The rest fits: one chunk, or two where that costs less.
			whole := measure.SizeCost(n, budget)
			best, bestCost = len(us)-1, whole
			head := 0
			for j := i; j+1 < len(us); j++ {
				if j > i {
					head += gap(us[j-1], us[j])
				}
				head += us[j].words
				if cost := measure.SizeCost(head, budget) + end(j) + measure.SizeCost(n-head-gap(us[j], us[j+1]), budget); cost < bestCost {
					best, bestCost = j, cost
				}
			}
		}
		dst = c.pack(src, us[i:best+1], hdrs, m, c.maxWords, dst, pl)
		i = best + 1
	}
	return dst
}

// cutBefore returns the kind of the boundary between units a and b: a
// blank line, a line break at the start of a list item, another line
// break, or a sentence end.
func (c *Chunker) cutBefore(src string, a, b unit) measure.Cut {
	gap := src[a.end:b.start]
	switch {
	case strings.IndexByte(gap, '\n') < 0:
		return measure.CutSentence
	case paragraphEnd(src, a, b):
		return measure.CutParagraph
	case mdblocks.ListItemAt(src, strings.LastIndexByte(src[:b.start], '\n')+1):
		return measure.CutItem
	}
	return measure.CutLine
}

// spanSize returns the size of the source from the first unit's start to
// the last one's end, in the chunker's unit.
func (c *Chunker) spanSize(src string, us []unit, m measure.Measure) int {
	return m.LenString(src[us[0].start:us[len(us)-1].end])
}

// paragraphEnd reports whether a blank line (a line of whitespace
// alone) parts units a and b.
func paragraphEnd(src string, a, b unit) bool {
	gap := src[a.end:b.start]
	for {
		i := strings.IndexByte(gap, '\n')
		if i < 0 {
			return false
		}
		gap = gap[i+1:]
		if j := strings.IndexByte(gap, '\n'); j >= 0 && strings.TrimSpace(gap[:j]) == "" {
			return true
		}
	}
}

// lineUnits appends the lines of u to dst, each without its surrounding
// whitespace, blank lines left out. In a table, a row that closes math an
// earlier row opened ("$$", \[ or \begin{X} left open) joins that row's
// unit: math is never cut, even across rows.
func lineUnits(src string, u unit, m measure.Measure, dst []unit) []unit {
	first := len(dst)
	var math mathOpen
	for p := u.start; p < u.end; {
		q := strings.IndexByte(src[p:u.end], '\n')
		e := u.end
		if q >= 0 {
			e = p + q + 1
		}
		if a, b := sentences.TrimSpace(src, p, e); a < b {
			if math.open() && len(dst) > first {
				dst[len(dst)-1].end = b
			} else {
				dst = append(dst, unit{start: a, end: b})
			}
			if u.table {
				math.add(src[a:b])
			}
		}
		p = e
	}
	for i := first; i < len(dst); i++ {
		dst[i].words = m.LenString(src[dst[i].start:dst[i].end])
	}
	return dst
}

// mathOpen counts the math delimiters of the lines seen so far: "$$"
// (open while odd), \[ against \], \begin{ against \end{.
type mathOpen struct{ dollars, brackets, envs int }

// add counts the delimiters of line.
func (o *mathOpen) add(line string) {
	o.dollars += strings.Count(line, "$$")
	o.brackets = max(0, o.brackets+strings.Count(line, `\[`)-strings.Count(line, `\]`))
	o.envs = max(0, o.envs+strings.Count(line, `\begin{`)-strings.Count(line, `\end{`))
}

// open reports whether math opened by the lines seen is still open.
func (o *mathOpen) open() bool { return o.dollars%2 != 0 || o.brackets > 0 || o.envs > 0 }
