package markdown

import (
	"fmt"
	"unsafe"

	"github.com/chunkstream/chunkstream/chunking"
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
	switch {
	case cfg.TargetChar < 0:
		return bad("target_char must be ≥ 0 (0: off), got %d", cfg.TargetChar)
	case cfg.TargetTokens < 0:
		return bad("target_tokens must be ≥ 0 (0: off), got %d", cfg.TargetTokens)
	case cfg.TargetChar > 0 && cfg.TargetTokens > 0:
		return bad("target_char and target_tokens are one target in two units: set one")
	case cfg.TargetChar > 0 && cfg.Tokenizer != "":
		return bad("target_char counts characters, but tokenizer %s counts tokens: use target_tokens", cfg.Tokenizer)
	case cfg.TargetTokens > 0 && cfg.Tokenizer == "":
		return bad("target_tokens needs tokenizer (cl100k_base or o200k_base); target_char counts characters")
	case cfg.target() == 0:
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
// start of another: the chunk being built is closed first, unless it is
// shorter than half the target, in which case it joins the unit's first
// piece; the unit's pieces get their own budget, and the last of them is
// closed when the unit ends (it reports false, and split goes on cutting
// the unit into its pieces).
func (sp *splitter) wholeInTarget(s, e, level int, over bool) bool {
	if !over {
		if n, ok := sp.fits(sp.src[s:e]); ok {
			sp.emit(piece{start: s, end: e, chars: n})
			return true
		}
	}
	if level == levelPara {
		return false // the section itself: its budget is set already
	}
	lead := 0
	if 2*sp.curSize < sp.target {
		lead = sp.curSize
	} else {
		sp.flushAll()
	}
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

// flushAll closes the chunk being built, and the chunks of the pieces a
// token-mode back-off carries over.
func (sp *splitter) flushAll() {
	for len(sp.cur) > 0 && !sp.pl.Stopped() {
		sp.flush()
	}
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
		}
	}
	if from < e && !sp.pl.Stopped() {
		sp.split(from, e, levelSpace, false)
	}
}
