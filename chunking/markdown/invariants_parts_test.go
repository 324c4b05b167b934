package markdown_test

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

// splitBlock is a top-level code block, table or math block larger than
// max_char, with the sizes the chunker splits it by, derived from the
// rules of the package documentation.
type splitBlock struct {
	mdblocks.Block
	bodyStart, bodyEnd int    // the lines the parts hold (a math block not on "$$" lines: all of it)
	header             string // a table's header and delimiter rows, line break included
	// cutLimit is the largest size of a piece of a line too long for a
	// part: the part's budget less the piece's line break (rules in
	// newSplitBlock).
	cutLimit int
	// mayOversize says a part of a code or math block may be larger than
	// max_char: its wrapper leaves less than the floor for the body (fit
	// < floor), or the wrapper alone is at least max_char (the block is
	// emitted whole).
	mayOversize bool
}

// newSplitBlock returns b as the chunker splits it (b is larger than
// maxChar). The wrapper of a code part is its opening fence line and
// closing fence (the last part's: the block's own closing line, the
// longer of the two counting), of a math part two "$$" lines, of a table
// part the header rows; its size is wrap. A part's body may take fit =
// max_char − wrap + saved, saved being what the part's last line break
// weighs (one character; in tokens what the closing line loses without
// it, none for a table), and for code and math at least a quarter of
// max_char (the floor). A cut piece takes the budget less its line break
// (in tokens a table row's piece takes it whole). A table's header is
// repeated only when fit is at least a quarter of max_char; otherwise
// parts after the first are rows alone, with the whole budget.
func newSplitBlock(text []byte, b mdblocks.Block, maxChar int, size Size, byTokens bool) splitBlock {
	sb := splitBlock{Block: b, bodyStart: b.BodyStart, bodyEnd: b.BodyEnd}
	line := func(s string) string {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return s
	}
	saved := func(s string) int {
		if !byTokens {
			return 1
		}
		return size(s) - size(strings.TrimSuffix(s, "\n"))
	}
	floor := max(maxChar/4, 1)
	switch b.Kind {
	case mdblocks.Table:
		sb.bodyEnd = b.End
		sb.header = line(string(text[b.Start:b.BodyStart]))
		wrap := size(sb.header)
		s := 1
		if byTokens {
			s = 0
		}
		if maxChar-wrap+s >= floor {
			sb.cutLimit = maxChar - wrap
		} else {
			sb.cutLimit = maxChar
		}
		return sb
	case mdblocks.FencedCode:
		open := line(string(text[b.Start:b.BodyStart]))
		closing := strings.Repeat(string(b.FenceChar), b.FenceLen) + "\n"
		wrap, sv := size(open)+size(closing), saved(closing)
		if b.Closed && b.BodyEnd < b.End {
			// The chunker takes the closing line trimmed when the block
			// ends its section: the larger wrapper and the smaller saving
			// of the two bound its budget from below.
			for _, last := range []string{line(string(text[b.BodyEnd:b.End])), line(strings.TrimRightFunc(string(text[b.BodyEnd:b.End]), unicode.IsSpace))} {
				wrap, sv = max(wrap, size(open)+size(last)), min(sv, saved(last))
			}
		}
		sb.cutLimit = max(maxChar-wrap+sv, floor) - 1
		sb.mayOversize = maxChar-wrap+sv < floor || wrap >= maxChar
	case mdblocks.Math:
		if b.BodyStart == b.Start || b.BodyEnd == b.End ||
			strings.TrimSpace(string(text[b.Start:b.BodyStart])) != "$$" ||
			strings.TrimSpace(string(text[b.BodyEnd:b.End])) != "$$" {
			sb.bodyStart, sb.bodyEnd = b.Start, b.End
		}
		fit := maxChar - 2*size("$$\n") + saved("$$\n")
		sb.cutLimit = max(fit, floor) - 1
		sb.mayOversize = fit < floor || 2*size("$$\n") >= maxChar
	}
	return sb
}

// splitBlocks returns the top-level code blocks, tables and math blocks
// of text larger than maxChar, as the chunker splits them.
func splitBlocks(text []byte, blocks []mdblocks.Block, maxChar int, size Size, byTokens bool) []splitBlock {
	var split []splitBlock
	for _, b := range blocks {
		if b.Kind.Atomic() && size(strings.TrimRightFunc(string(text[b.Start:b.End]), unicode.IsSpace)) > maxChar {
			split = append(split, newSplitBlock(text, b, maxChar, size, byTokens))
		}
	}
	return split
}

// checkOversize checks that no part is oversize where its rows or lines
// would fit: a chunk marked oversize that lies within a split block (its
// span does) is a table's header alone (or a table without rows), or a
// part of a code or math block whose wrapper leaves less than a quarter
// of max_char for the body or is itself at least max_char long. In
// tokens a part is packed by the sum of its lines' tokens and counted
// whole for the flag, so it may also be oversize by a token per line,
// where tokens merge across its line breaks.
func checkOversize(text []byte, split []splitBlock, chunks []chunking.Chunk, toText func(start, end int) (int, int, bool), maxChar int, size Size, byTokens bool) error {
	for i, c := range chunks {
		if c.Get("oversize", false) != true {
			continue
		}
		if byTokens && size(c.Content()) <= maxChar+strings.Count(c.Content(), "\n")+1 {
			continue
		}
		sp := c.Span()
		s, e, ok := toText(sp.Start, sp.End)
		if !ok {
			return fmt.Errorf("chunk %d is oversize, and its span %d to %d maps to no range of the text", i, sp.Start, sp.End)
		}
		k := sort.Search(len(split), func(k int) bool { return split[k].End >= e })
		if k == len(split) || s < split[k].Start {
			continue // not a part of a split block
		}
		b := split[k]
		switch {
		case b.Kind == mdblocks.Table:
			whole := strings.TrimRightFunc(string(text[b.Start:b.End]), unicode.IsSpace)
			if c.Content() != strings.TrimRightFunc(b.header, unicode.IsSpace) && c.Content() != whole {
				return fmt.Errorf("chunk %d is an oversize part of the table at offset %d, but not its header alone: its rows would fit in parts of their own", i, b.Start)
			}
		case !b.mayOversize && b.bodyStart < b.bodyEnd:
			return fmt.Errorf("chunk %d is an oversize part of the %s block at offset %d, whose wrapper leaves at least a quarter of max_char for its lines: they would fit", i, b.Kind, b.Start)
		}
	}
	return nil
}

// checkCuts checks that a line too long for a part is cut into pieces as
// long as the budget allows: when a chunk ends inside a line of a split
// block (the span of a part holding a cut piece ends where the piece
// does), the piece with the rest of the word that follows (or, cut inside
// a word, with the next character) is larger than the block's cutLimit.
// text is the text the chunker cut; toText maps a span to it.
func checkCuts(text []byte, split []splitBlock, chunks []chunking.Chunk, toText func(start, end int) (int, int, bool), size Size) error {
	for i, c := range chunks {
		sp := c.Span()
		_, e, ok := toText(sp.Start, sp.End)
		if !ok || e <= 0 || e >= len(text) {
			continue
		}
		k := sort.Search(len(split), func(k int) bool { return split[k].End >= e })
		if k == len(split) || e <= split[k].bodyStart || e >= split[k].bodyEnd {
			continue
		}
		b := split[k]
		lineEnd := e + strings.IndexByte(string(text[e:b.bodyEnd])+"\n", '\n')
		if strings.TrimFunc(string(text[e:lineEnd]), spantest.IsSpace) == "" {
			continue // the chunk ends with the rest of the line
		}
		// The piece is the part's last line: the chunk's last line, or for
		// code and math the line before the closing fence.
		lines := strings.Split(c.Content(), "\n")
		last := len(lines) - 1
		if b.Kind != mdblocks.Table {
			last--
		}
		if last < 0 {
			return fmt.Errorf("chunk %d ends inside line %q of the %s block at offset %d but holds no piece of it", i, text[e:lineEnd], b.Kind, b.Start)
		}
		piece := lines[last]
		if piece == "" || len(piece) > e || string(text[e-len(piece):e]) != piece {
			return fmt.Errorf("chunk %d ends inside a line of the %s block at offset %d, but its piece %q is not the source before its end (%q)", i, b.Kind, b.Start, piece, text[max(0, e-len(piece)):e])
		}
		r, n := utf8.DecodeRune(text[e:])
		ext := e + n
		if spantest.IsSpace(r) {
			// Cut at a word end: the piece with the next word.
			for ext < lineEnd {
				r, n := utf8.DecodeRune(text[ext:])
				if !spantest.IsSpace(r) {
					break
				}
				ext += n
			}
			for ext < lineEnd {
				r, n := utf8.DecodeRune(text[ext:])
				if spantest.IsSpace(r) {
					break
				}
				ext += n
			}
		}
		longer := string(text[e-len(piece) : ext])
		if n := size(longer); n <= b.cutLimit {
			return fmt.Errorf("chunk %d: a line of the %s block at offset %d is cut after %q, but %q (size %d) fits the piece's budget %d: the cut is short",
				i, b.Kind, b.Start, piece, longer, n, b.cutLimit)
		}
	}
	return nil
}

// sourceOf returns the text the chunker cut from doc (MDX: cleaned), and
// a function mapping a span of doc.Content to the range of that text it
// came from.
func sourceOf(doc chunking.Document) ([]byte, func(start, end int) (int, int, bool)) {
	if !markdown.IsMDX(doc) {
		return doc.Content, func(start, end int) (int, int, bool) { return start, end, true }
	}
	clean, m := markdown.CleanMDXMap(doc.Content)
	return clean, func(start, end int) (int, int, bool) {
		s := sort.Search(len(clean), func(c int) bool { return m.Start(c) >= start })
		e := sort.Search(len(clean)+1, func(c int) bool { return c > 0 && m.End(c) >= end })
		return s, e, s < e && e <= len(clean) && m.Start(s) == start && m.End(e) == end
	}
}

// CheckParts checks, by their spans, the parts of the code blocks, tables
// and math blocks of doc that the chunker split (in cfg's unit): no part
// is oversize where its rows or lines would fit (checkOversize), and a
// line too long for a part is cut into pieces as long as the budget
// allows (checkCuts).
func CheckParts(doc chunking.Document, chunks []chunking.Chunk, cfg markdown.Config) error {
	cfg = Effective(cfg)
	size, err := SizeOf(cfg)
	if err != nil {
		return err
	}
	text, toText := sourceOf(doc)
	split := splitBlocks(text, mdblocks.Scan(text), cfg.MaxChar, size, cfg.Tokenizer != "")
	if err := checkOversize(text, split, chunks, toText, cfg.MaxChar, size, cfg.Tokenizer != ""); err != nil {
		return err
	}
	return checkCuts(text, split, chunks, toText, size)
}
