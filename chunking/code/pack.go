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

// packer packs the segments between cuts greedily into chunks of at most
// max_char (their ending whitespace not counted).
type packer struct {
	c    *Chunker
	src  []byte
	m    measure.Measure
	cuts []cut
	pl   *poll.Poller
}

// pack calls yield with each chunk's piece in order, until it returns
// false.
func (p *packer) pack(yield func(piece) bool) {
	src, cuts, limit := p.src, p.cuts, p.c.maxChar
	end := func(i int) int { // the end of segment i
		if i+1 < len(cuts) {
			return cuts[i+1].at
		}
		return len(src)
	}
	sizes := make([]int, len(cuts)) // each segment's size, whitespace included
	for i := range cuts {
		sizes[i] = p.m.Len(src[cuts[i].at:end(i)])
		if p.pl.Add(end(i) - cuts[i].at) {
			return
		}
	}
	for i := 0; i < len(cuts); {
		start := cuts[i].at
		sum, j := 0, i
		for j < len(cuts) {
			e := end(j)
			size := sum + sizes[j] - p.trailing(start, e)
			if j > i && size > limit {
				break
			}
			sum += sizes[j]
			j++
			if size > limit {
				break // one segment over the limit: alone, oversize
			}
		}
		if !p.m.Exact() { // tokens: the sum of the parts is not the whole
			for j > i+1 && p.m.LenLimit(src[start:trimEnd(src, start, end(j-1))], limit) > limit {
				j--
			}
		}
		e := end(j - 1)
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
			return
		}
		i = j
	}
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
