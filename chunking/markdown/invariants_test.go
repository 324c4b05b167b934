// The invariants of the Markdown chunker (docs/chunkers.md), checked by its
// golden, unit, corpus and fuzz tests.

package markdown_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// ownKeys are the chunker's metadata keys, in their required order.
var ownKeys = []string{"h1", "h2", "h3", "index", "file", "oversize"}

// Size measures text in the unit of max_char: characters (code points),
// or tokens of the chunker's encoding.
type Size func(string) int

// SizeOf returns the Size of cfg: tokens of cfg.Tokenizer, or characters
// when it is empty.
func SizeOf(cfg markdown.Config) (Size, error) {
	if cfg.Tokenizer == "" {
		return utf8.RuneCountInString, nil
	}
	enc, err := tokens.Get(cfg.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("markdowntest: %w", err)
	}
	return enc.CountString, nil
}

// CheckDocument checks the chunks of doc by a Markdown chunker of
// configuration cfg, in cfg's unit (characters, or tokens of
// cfg.Tokenizer): Check on the text it cut (MDX cleaned), then
// CheckSpans, then CheckParts.
func CheckDocument(doc chunking.Document, chunks []chunking.Chunk, cfg markdown.Config) error {
	cfg = Effective(cfg)
	text := doc.Content
	if markdown.IsMDX(doc) {
		text = markdown.CleanMDX(doc.Content)
	}
	if err := Check(text, chunks, cfg); err != nil {
		return err
	}
	if err := CheckSpans(doc, chunks, cfg); err != nil {
		return err
	}
	return CheckParts(doc, chunks, cfg)
}

// Check returns the first violated invariant of chunks, the output of the
// Markdown chunker of configuration cfg for src (MDX-cleaned already), or
// nil. Sizes are in cfg's unit, max_char is cfg.MaxChar:
//   - content is valid UTF-8, not empty or whitespace-only, with no
//     leading blank line and no trailing whitespace;
//   - at most max_char in size unless metadata oversize is true (and
//     oversize only on chunks larger than max_char);
//   - metadata "index" is 0..n−1, the chunker's keys come first in the
//     order h1, h2, h3, index, file, oversize;
//   - every word of src appears in the chunks, in order (extra words —
//     overlap, inserted fences, repeated table header rows, "$$" wrappers —
//     are allowed); when some word is too long to survive whole, the check
//     is done on non-space characters instead;
//   - every top-level fenced code block, table and display math block that
//     fits in max_char lies whole in one chunk;
//   - a longer table is split sanely (checkTables): no row cut unless it
//     alone exceeds max_char, the header repeated exactly where it fits,
//     no part oversize but a header alone longer than max_char, parts as
//     few as the budget allows, and the parts within the table's size
//     plus one header per part;
//   - the header metadata of each chunk holds the headers in force at the
//     first source word the chunk adds (after a header-only section is
//     joined to the deeper section that follows it).
func Check(src []byte, chunks []chunking.Chunk, cfg markdown.Config) error {
	cfg = Effective(cfg)
	size, err := SizeOf(cfg)
	if err != nil {
		return err
	}
	maxChar := cfg.MaxChar
	for i, c := range chunks {
		s := c.Content()
		if !utf8.ValidString(s) {
			return fmt.Errorf("chunk %d: invalid UTF-8", i)
		}
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("chunk %d: empty or whitespace-only", i)
		}
		if strings.TrimRightFunc(s, unicode.IsSpace) != s {
			return fmt.Errorf("chunk %d: trailing whitespace", i)
		}
		if first, _, _ := strings.Cut(s, "\n"); strings.TrimSpace(first) == "" {
			return fmt.Errorf("chunk %d: leading blank line", i)
		}
		over := c.Get("oversize", false) == true
		if n := size(s); n > maxChar && !over {
			return fmt.Errorf("chunk %d: size %d > max_char %d and not oversize", i, n, maxChar)
		} else if over && n <= maxChar {
			return fmt.Errorf("chunk %d: oversize but only of size %d", i, n)
		}
		if got := c.Get("index", nil); got != i {
			return fmt.Errorf("chunk %d: index = %v", i, got)
		}
		keys := c.Metadata().Keys()
		k := 0
		for _, key := range ownKeys {
			if k < len(keys) && keys[k] == key {
				k++
			}
		}
		for _, key := range keys[k:] {
			if slices.Contains(ownKeys, key) {
				return fmt.Errorf("chunk %d: metadata keys %v out of order", i, keys)
			}
		}
	}
	// A leading byte-order mark is an encoding mark, not text.
	if pre := []byte("\uFEFF"); len(src) >= 3 && string(src[:3]) == string(pre) {
		src = src[3:]
	}
	firsts, err := coverage(src, chunks, maxChar, size)
	if err != nil {
		return err
	}
	blocks := mdblocks.Scan(src)
	if err := checkAtomic(src, blocks, chunks, maxChar, size); err != nil {
		return err
	}
	if err := checkTables(src, blocks, chunks, maxChar, size, cfg.Tokenizer != ""); err != nil {
		return err
	}
	return checkHeaders(src, blocks, chunks, firsts)
}

// checkAtomic checks that every top-level fenced code block, table and
// display math block of size at most maxChar lies whole in one chunk.
func checkAtomic(src []byte, blocks []mdblocks.Block, chunks []chunking.Chunk, maxChar int, size Size) error {
	j := 0
	for _, b := range blocks {
		if !b.Kind.Atomic() {
			continue
		}
		text := strings.TrimRightFunc(string(src[b.Start:b.End]), unicode.IsSpace)
		if size(text) > maxChar {
			continue
		}
		k := j
		for k < len(chunks) && !strings.Contains(chunks[k].Content(), text) {
			k++
		}
		if k == len(chunks) {
			return fmt.Errorf("%s block at offset %d (%q) is not whole in any chunk from chunk %d on", b.Kind, b.Start, text, j)
		}
		j = k
	}
	return nil
}

// Equal reports the first difference between two runs' chunks.
func Equal(a, b []chunking.Chunk) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d chunks, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Content() != b[i].Content() || a[i].Hash() != b[i].Hash() {
			return fmt.Errorf("chunk %d differs: %q / %v, then %q / %v", i, a[i].Content(), a[i].Metadata(), b[i].Content(), b[i].Metadata())
		}
		if !reflect.DeepEqual(a[i].Span(), b[i].Span()) {
			return fmt.Errorf("chunk %d: span %+v, then %+v", i, a[i].Span(), b[i].Span())
		}
	}
	return nil
}

type word struct {
	text string
	off  int // offset in src
}

func words(s string) []word {
	var out []word
	start := -1
	for i, r := range s {
		if spantest.IsSpace(r) {
			if start >= 0 {
				out = append(out, word{s[start:i], start})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, word{s[start:], start})
	}
	return out
}

// coverage checks that src's words (or, when a word may be cut, its
// non-space characters) are a subsequence of the chunks' and returns, per
// chunk, the source offset of the first word it adds (-1 when none).
func coverage(src []byte, chunks []chunking.Chunk, maxChar int, size Size) ([]int, error) {
	sw := words(string(src))
	longest := 0
	for _, w := range sw {
		longest = max(longest, utf8.RuneCountInString(w.text))
	}
	if longest >= maxChar/4-1 {
		// In tokens, a word is cut only when its tokens are too many.
		longest = 0
		for _, w := range sw {
			longest = max(longest, size(w.text))
		}
	}
	firsts := make([]int, len(chunks))
	p := 0
	if longest < maxChar/4-1 {
		for i, c := range chunks {
			firsts[i] = -1
			for _, w := range words(c.Content()) {
				if p < len(sw) && w.text == sw[p].text {
					if firsts[i] < 0 {
						firsts[i] = sw[p].off
					}
					p++
				}
			}
		}
		if p < len(sw) {
			return nil, fmt.Errorf("source word %d %q (offset %d) missing from the chunks or out of order", p, sw[p].text, sw[p].off)
		}
		return firsts, nil
	}
	// Characters: a word longer than a part may have been cut.
	type char struct {
		r   rune
		off int
	}
	var sc []char
	for i, r := range string(src) {
		if !spantest.IsSpace(r) {
			sc = append(sc, char{r, i})
		}
	}
	for i, c := range chunks {
		firsts[i] = -1
		for _, r := range c.Content() {
			if p < len(sc) && r == sc[p].r {
				if firsts[i] < 0 {
					firsts[i] = sc[p].off
				}
				p++
			}
		}
	}
	if p < len(sc) {
		return nil, fmt.Errorf("source character %q at offset %d missing from the chunks or out of order", sc[p].r, sc[p].off)
	}
	return firsts, nil
}

// inForce is the header state from one top-level H1–H3 heading on.
type inForce struct {
	start int
	hdr   [3]*string
}

// checkHeaders checks each chunk's h1–h3 against the headers in force at
// the first source word it adds.
func checkHeaders(src []byte, blocks []mdblocks.Block, chunks []chunking.Chunk, firsts []int) error {
	var states []inForce
	var cur [3]*string
	var headerOnly []bool
	for i, b := range blocks {
		if b.Kind != mdblocks.Heading || b.Level > 3 {
			continue
		}
		t := b.Title
		cur[b.Level-1] = &t
		for d := b.Level; d < 3; d++ {
			cur[d] = nil
		}
		states = append(states, inForce{start: b.Start, hdr: cur})
		only := i+1 == len(blocks) || blocks[i+1].Kind == mdblocks.Heading && blocks[i+1].Level <= 3
		headerOnly = append(headerOnly, only)
	}
	level := func(s inForce) int {
		for l := 2; l >= 0; l-- {
			if s.hdr[l] != nil {
				return l + 1
			}
		}
		return 0
	}
	base := -1 // firsts only grow: the state index moves forward
	for i, c := range chunks {
		if firsts[i] < 0 {
			continue
		}
		for base+1 < len(states) && states[base+1].start <= firsts[i] {
			base++
		}
		k := base
		if k < 0 {
			continue // preamble: no headers in force
		}
		// Header-only sections take the deeper section's headers.
		for headerOnly[k] && k+1 < len(states) && level(states[k+1]) > level(states[k]) {
			k++
		}
		for l, key := range []string{"h1", "h2", "h3"} {
			want := states[k].hdr[l]
			got, ok := c.Metadata().Get(key)
			switch {
			case want != nil && (!ok || got != *want):
				return fmt.Errorf("chunk %d: %s = %v, want %q (headers in force at offset %d)", i, key, got, *want, firsts[i])
			}
		}
	}
	return nil
}

// Effective returns cfg with the sizes the chunker uses: in target mode,
// min_char, max_char (the ceiling) and chunk_overlap set by the target,
// which the invariants then hold.
func Effective(cfg markdown.Config) markdown.Config {
	if n := max(cfg.TargetChar, cfg.TargetTokens); n > 0 {
		cfg.MinChar, cfg.MaxChar, cfg.ChunkOverlap = markdown.TargetSizes(n)
		cfg.TargetChar, cfg.TargetTokens = 0, 0
	}
	return cfg
}
