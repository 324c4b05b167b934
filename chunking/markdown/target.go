package markdown

import (
	"bytes"
	"fmt"
	"math"
	"unicode"
	"unsafe"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
)

// Target mode (docs/chunkers.md, "Target mode"): the caller names the
// mean chunk size it wants and the chunker sets its own sizes from it.
// The functions here are the whole of what target mode changes; with the
// target off none of them is called and the chunks are the reference
// mode's, byte for byte.

// Ceiling returns the largest chunk of target mode with target n
// (measure.Ceiling): one and a half times the target, rounded up. A
// section or unit up to the ceiling stays whole, a longer one is cut
// into near-equal pieces near n.
func Ceiling(n int) int { return measure.Ceiling(n) }

// TargetSizes returns min_char, max_char and chunk_overlap of target mode
// with target n: sections shorter than n absorb the next while both fit
// in the ceiling, no chunk is longer than the ceiling, and there is no
// overlap (docs/chunkers.md has the measurements behind each).
func TargetSizes(n int) (minChar, maxChar, overlap int) {
	return n, Ceiling(n), 0
}

// target returns the configured target, in either unit, or 0.
func (cfg Config) target() int { return max(cfg.TargetChar, cfg.TargetTokens) }

// validateTarget checks the target options.
func (cfg Config) validateTarget() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", chunking.ErrInvalidOptions, fmt.Sprintf(format, args...))
	}
	if opt, problem := chunking.CheckTarget(cfg.TargetChar, cfg.TargetTokens, cfg.Tokenizer); opt != "" {
		return bad("%s", problem)
	}
	if cfg.target() == 0 {
		return nil
	}
	name := "target_char"
	if cfg.TargetTokens > 0 {
		name = "target_tokens"
	}
	if d := DefaultConfig(); cfg.MinChar != d.MinChar || cfg.MaxChar != d.MaxChar || cfg.ChunkOverlap != d.ChunkOverlap {
		return bad("%s sets min_char, max_char and chunk_overlap itself: leave them out (got min_char %d, max_char %d, chunk_overlap %d)",
			name, cfg.MinChar, cfg.MaxChar, cfg.ChunkOverlap)
	}
	return nil
}

// wholeInTarget is the first step of splitting src[s:e] at level in
// target mode. A unit that fits in the ceiling stays one piece, packed
// with its neighbours (it reports true). A unit inside a section
// (a paragraph or finer) that does not fit becomes chunks of its own,
// near-equal, so that no chunk holds the end of a long unit with the
// start of another: the chunks before it are closed first, except a last
// one shorter than half the target, which joins the unit's first piece;
// the unit's pieces get their own budget, and the last of them is
// closed when the unit ends (it reports false, and split goes on cutting
// the unit into its pieces).
func (sp *splitter) wholeInTarget(s, e, level int, over bool) bool {
	if !over && level > levelPara {
		if n, ok := sp.fits(sp.src[s:e]); ok {
			sp.emit(piece{start: s, end: e, chars: n})
			return true
		}
	}
	if level == levelPara {
		return false // the section itself: its budget is set already
	}
	cut := sp.cut
	lead := sp.packRun(true)
	sp.cut = cut
	sp.isolated = append(sp.isolated, sp.budget)
	sp.budget = measure.Balanced(lead+sp.m.Len(sp.src[s:e]), sp.target)
	return false
}

// endIsolated closes the chunks of a unit wholeInTarget isolated and
// restores the budget around it.
func (sp *splitter) endIsolated() {
	sp.flushAll()
	n := len(sp.isolated) - 1
	sp.budget, sp.isolated = sp.isolated[n], sp.isolated[:n]
}

// flushAll closes the chunks of the pieces not yet packed (target mode),
// or the chunk being built and the chunks of the pieces a token-mode
// back-off carries over.
func (sp *splitter) flushAll() {
	if sp.target > 0 {
		sp.packRun(false)
		return
	}
	for len(sp.cur) > 0 && !sp.pl.Stopped() {
		sp.flush()
	}
}

// cutKind is the kind of a boundary between pieces (measure.Cut).
type cutKind = measure.Cut

const (
	cutPara     = measure.CutParagraph
	cutItem     = measure.CutItem
	cutLine     = measure.CutLine
	cutSentence = measure.CutSentence
	cutSpace    = measure.CutSpace
	cutChar     = measure.CutChar
)

// cutAt returns the kind of the boundary at p, the start of a unit of
// level.
func (sp *splitter) cutAt(level, p int) cutKind {
	switch level {
	case levelPara:
		return cutPara
	case levelLine:
		if mdblocks.ListItemAt(sp.src, p) {
			return cutItem
		}
		return cutLine
	case levelSentence:
		return cutSentence
	case levelSpace:
		return cutSpace
	}
	return cutChar
}

// queue adds a piece to the run (target mode) and packs the chunks that
// can no longer grow: while the run is longer than the ceiling, its first
// chunk is closed where it costs least (packOne).
func (sp *splitter) queue(p piece) {
	p.cut, sp.cut = sp.cut, cutChar
	sp.run = append(sp.run, p)
	sp.runSize += p.chars
	for len(sp.run) > 1 && sp.runSize > sp.max && !sp.pl.Stopped() {
		sp.packOne()
	}
}

// unqueue puts pieces a token-mode back-off carried over back at the
// start of the run.
func (sp *splitter) unqueue(ps []piece) {
	n := 0
	for _, p := range ps {
		n += p.chars
	}
	sp.run = append(ps, sp.run...)
	sp.runSize += n
}

// ends calls f with each place the run's first chunk may end: after k
// pieces of size n in all, k from 1 while the chunk fits in the ceiling
// (one piece always may), with the cost of ending there; the work is
// counted in bytes of the pieces looked at.
func (sp *splitter) ends(f func(k, n int, cost float64)) {
	n, work := 0, 0
	for k, p := range sp.run {
		if k > 0 && n+p.chars > sp.max {
			break
		}
		n += p.chars
		work += max(p.end-p.start, len(p.text))
		cost := measure.SizeCost(n, sp.budget)
		if k+1 < len(sp.run) {
			cost += sp.run[k+1].cut.Cost()
			if sp.introduces(p) {
				cost += cutSentence.Cost()
			}
		}
		if sp.isHeading(p) {
			cost += measure.HeadingEnd
		}
		f(k+1, n, cost)
	}
	sp.pl.Add(work)
}

// packOne closes the run's first chunk at the end that costs least, the
// run going on past the ceiling.
func (sp *splitter) packOne() {
	best, bestCost := 1, math.Inf(1)
	sp.ends(func(k, _ int, cost float64) {
		if k < len(sp.run) && cost < bestCost {
			best, bestCost = k, cost
		}
	})
	sp.closeRun(best)
}

// packRun closes the chunks of the run, which ends here and fits in the
// ceiling: as one chunk, or as two where that costs less. With keepTail,
// a last chunk shorter than half the target stays in the run (it joins
// what comes next), and packRun returns its size.
func (sp *splitter) packRun(keepTail bool) int {
	for len(sp.run) > 1 && sp.runSize > sp.max && !sp.pl.Stopped() {
		sp.packOne()
	}
	if len(sp.run) == 0 || sp.pl.Stopped() {
		return 0
	}
	best, bestCost := len(sp.run), measure.SizeCost(sp.runSize, sp.budget)
	if sp.isHeading(sp.run[len(sp.run)-1]) {
		bestCost += measure.HeadingEnd
	}
	sp.ends(func(k, n int, cost float64) {
		if k < len(sp.run) {
			if c := cost + measure.SizeCost(sp.runSize-n, sp.budget); c < bestCost {
				best, bestCost = k, c
			}
		}
	})
	if best < len(sp.run) {
		sp.closeRun(best)
	}
	if keepTail && 2*sp.runSize < sp.target {
		return sp.runSize
	}
	for len(sp.run) > 0 && !sp.pl.Stopped() {
		sp.closeRun(len(sp.run))
	}
	return 0
}

// closeRun makes the run's first k pieces a chunk.
func (sp *splitter) closeRun(k int) {
	sp.cur = append(sp.cur[:0], sp.run[:k]...)
	sp.curSize = 0
	for _, p := range sp.cur {
		sp.curSize += p.chars
	}
	sp.runSize -= sp.curSize
	sp.run = sp.run[:copy(sp.run, sp.run[k:])]
	sp.ovStart = -1
	sp.flush() // a back-off puts the pieces it drops back in the run
}

// splitSentences appends the pieces of src[s:e] cut at the sentence ends
// the two-step chunker's segmenter finds (chunking/internal/sentences:
// abbreviations, decimals and initials are no ends), each sentence with
// the whitespace after it; a sentence still too long is cut at
// whitespace.
func (sp *splitter) splitSentences(s, e int) {
	text := unsafe.String(unsafe.SliceData(sp.src), e)
	spans := sentences.Append(nil, text, s, e, nil, sp.pl)
	from := s
	for i, sent := range spans {
		if i > 0 && sent.Start > from {
			sp.split(from, sent.Start, levelSpace, false)
			from = sent.Start
			sp.cut = cutSentence
		}
	}
	if from < e && !sp.pl.Stopped() {
		sp.split(from, e, levelSpace, false)
	}
}

// introduces reports whether a text piece ends with a colon: it
// introduces what follows.
func (sp *splitter) introduces(p piece) bool {
	if p.kind != pieceText {
		return false
	}
	t := bytes.TrimRightFunc(sp.src[p.start:p.end], unicode.IsSpace)
	return len(t) > 0 && t[len(t)-1] == ':'
}
