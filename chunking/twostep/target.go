package twostep

import (
	"strings"

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
			dst = c.pack(src, run, hdrs, m, measure.Balanced(c.spanSize(src, run, m), c.target), dst, pl)
			run = run[:0]
		}
	}
	for i := 0; i < len(units) && !pl.Stopped(); {
		j := i + 1
		for j < len(units) && !units[j-1].heading && !units[j].heading && !paragraphEnd(src, units[j-1], units[j]) {
			j++
		}
		para := units[i:j]
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
			for _, u := range units {
				if u.start >= last.start && u.end <= last.end {
					lead = append(lead, u)
				}
			}
		}
		own := append(lead, para...)
		dst = c.pack(src, own, hdrs, m, measure.Balanced(c.spanSize(src, own, m), c.target), dst, pl)
	}
	flushRun()
	return dst
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
// whitespace, blank lines left out.
func lineUnits(src string, u unit, m measure.Measure, dst []unit) []unit {
	for p := u.start; p < u.end; {
		q := strings.IndexByte(src[p:u.end], '\n')
		e := u.end
		if q >= 0 {
			e = p + q + 1
		}
		if a, b := sentences.TrimSpace(src, p, e); a < b {
			dst = append(dst, unit{start: a, end: b, words: m.LenString(src[a:b])})
		}
		p = e
	}
	return dst
}
