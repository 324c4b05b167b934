package code

import (
	"slices"

	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// piece is one chunk to be: a byte range of the document and the symbol
// paths of what it holds.
type piece struct {
	start, end int
	symbols    []any // strings, in order, each once
	oversize   bool
}

// packer packs the segments between cuts into chunks: greedily, of at
// most max_char (their ending whitespace not counted), or in target mode
// into near-equal shares of the target (packTarget).
type packer struct {
	c    *Chunker
	src  []byte
	m    measure.Measure
	cuts []cut
	pl   *poll.Poller

	sizes []int // each segment's size, whitespace included
}

// end returns the end of segment i.
func (p *packer) end(i int) int {
	if i+1 < len(p.cuts) {
		return p.cuts[i+1].at
	}
	return len(p.src)
}

// pack calls yield with each chunk's piece in order, until it returns
// false.
func (p *packer) pack(yield func(piece) bool) {
	cuts := p.cuts
	p.sizes = make([]int, len(cuts))
	for i := range cuts {
		p.sizes[i] = p.m.Len(p.src[cuts[i].at:p.end(i)])
		if p.pl.Add(p.end(i) - cuts[i].at) {
			return
		}
	}
	if p.c.target > 0 {
		p.packTarget(yield)
		return
	}
	limit := p.c.maxChar
	for i := 0; i < len(cuts); {
		start := cuts[i].at
		sum, j := 0, i
		for j < len(cuts) {
			size := sum + p.sizes[j] - p.trailing(start, p.end(j))
			if j > i && size > limit {
				break
			}
			sum += p.sizes[j]
			j++
			if size > limit {
				break // one segment over the limit: alone, oversize
			}
		}
		if j = p.emit(i, j, yield); j < 0 {
			return
		}
		i = j
	}
}

// emit yields the chunk of segments [i, j), or, in tokens, of its
// longest prefix within the limit (the sum of the parts is not the
// whole), and returns where the next chunk starts, or -1 to stop.
func (p *packer) emit(i, j int, yield func(piece) bool) int {
	src, cuts, limit := p.src, p.cuts, p.c.limit()
	start := cuts[i].at
	if !p.m.Exact() {
		for j > i+1 && p.m.LenLimit(src[start:trimEnd(src, start, p.end(j-1))], limit) > limit {
			j--
		}
	}
	e := p.end(j - 1)
	pc := piece{start: start, end: e}
	for k := i; k < j; k++ {
		if !slices.Contains(pc.symbols, any(cuts[k].path)) {
			pc.symbols = append(pc.symbols, cuts[k].path)
		}
	}
	if j == i+1 {
		t := trimEnd(src, start, e)
		pc.oversize = t-start > limit && p.m.LenLimit(src[start:t], limit) > limit
	}
	if !yield(pc) || p.pl.Add(e-start) {
		return -1
	}
	return j
}

// packTarget packs in target mode. The segments are grouped into units,
// each a top-level statement with the cuts inside it. A run of units that
// fit the ceiling is packed into near-equal shares of the target
// (measure.Balanced of the run's size); a unit over it (a declaration
// split at its statements) is packed on its own the same way, so that no
// chunk holds the end of one long declaration with the start of the
// next, except that a run before it shorter than half the target joins
// its first chunk. Each chunk ends where that costs least among the ends
// that keep it within the ceiling: its deviation from the share, squared
// (measure.SizeCost), plus the cost of the cut after it (cutCost).
func (p *packer) packTarget(yield func(piece) bool) {
	cuts, sizes, limit, target := p.cuts, p.sizes, p.c.limit(), p.c.target
	type run struct{ lo, hi, budget int }
	var runs []run
	lo, acc := 0, 0 // the run of fitting units so far: its first segment and size
	for a := 0; a < len(cuts); {
		b, size := a+1, sizes[a]
		for b < len(cuts) && (cuts[b].depth > 0 || cuts[b].detach) {
			size += sizes[b]
			b++
		}
		if b-a > 1 && size > limit {
			from := a
			if acc < target/2 {
				from, size = lo, size+acc
			} else if lo < a {
				runs = append(runs, run{lo, a, measure.Balanced(acc, target)})
			}
			runs = append(runs, run{from, b, measure.Balanced(size, target)})
			lo, acc = b, 0
		} else {
			acc += size
		}
		a = b
	}
	if lo < len(cuts) {
		runs = append(runs, run{lo, len(cuts), measure.Balanced(acc, target)})
	}
	for _, r := range runs {
		for i := r.lo; i < r.hi; {
			start := cuts[i].at
			best, bestCost, sum := i+1, 0.0, 0
			for k := i; k < r.hi; k++ {
				size := sum + sizes[k] - p.trailing(start, p.end(k))
				if size > limit {
					break // k == i: one segment over the ceiling, alone, oversize
				}
				sum += sizes[k]
				cost := measure.SizeCost(size, r.budget)
				if k+1 < r.hi {
					cost += cutCost(cuts[k+1])
				}
				if k == i || cost <= bestCost {
					best, bestCost = k+1, cost
				}
			}
			if i = p.emit(i, best, yield); i < 0 {
				return
			}
		}
	}
}

// cutCost is what ending a chunk at cut c costs in target mode, in the
// unit of measure.SizeCost: nothing between top-level statements; inside
// a statement split at its statements, what a line break costs in the
// Markdown chunker's target mode (a 20% deviation) for each level of
// nesting, up to four; and what a sentence end costs there more for a cut
// that parts a statement from the comment lines above it, or parts
// comment lines. At most 0.32, so a chunk is never closed at less than
// about half its share where a nearer end exists, which keeps the work
// linear.
func cutCost(c cut) float64 {
	cost := float64(min(c.depth, 4)) * measure.CutLine.Cost()
	if c.detach {
		cost += measure.CutSentence.Cost()
	}
	return cost
}

// trailing returns the size of the whitespace that ends src[s:e], in
// the measure's unit (characters: one per byte; tokens: the difference).
func (p *packer) trailing(s, e int) int {
	t := trimEnd(p.src, s, e)
	if p.m.Exact() {
		return e - t
	}
	return 0 // tokens: checked on the whole chunk, trimmed
}
