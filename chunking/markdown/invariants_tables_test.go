package markdown_test

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
)

// tablePart is one part of a split table as found in a chunk.
type tablePart struct {
	lines  []string // the part's lines as in the chunk, header included
	header bool     // the part starts with the header and delimiter rows
	// rows are its row lines (whole rows or pieces of a row) as the
	// chunker counts them: source text without the line break (with the
	// whitespace around a piece: an upper bound, as for the last row,
	// which the section end may trim).
	rows []string
	// firstWhole says rows[0] is a whole row, not a piece of one.
	firstWhole bool
}

// checkTables checks the rules of a table larger than maxChar (split
// into parts), sizes measured by size (byTokens: whether the unit is
// tokens). Let wrap be the size of the header and delimiter rows and fit
// = maxChar − wrap + 1 (in tokens maxChar − wrap): what a part with the
// header leaves for rows, its last line break dropped.
//   - The first part starts with the header (alone when its first row
//     does not fit with it); a later part repeats it exactly when fit is
//     at least a quarter of maxChar and the part's first row fits with
//     it (wrap + the row ≤ maxChar); the other parts are rows alone.
//   - No part is larger than maxChar but a header alone that is (in
//     tokens, give or take a token per line of the part: parts are
//     packed by the sum of their lines' tokens).
//   - A row is cut only when it alone is larger than maxChar.
//   - The parts are as few as the budget allows: the first row (or piece
//     of a row) of a part would not have fitted in the part before it:
//     that part's header (if any), its rows and the row, without its
//     line break (the part's last line break is dropped when the part
//     ends a chunk), are larger than maxChar. Rows are counted one by
//     one, as the chunker packs them, and a line break counts one:
//     exactly so in characters; in tokens at least what the break costs
//     the chunker, so the check never fails a part that could not take
//     the row, though it may pass one that could by a token.
//   - The parts hold, together, at most the table plus one header per
//     part (in tokens, give or take a token at each line of a part: the
//     tokens of a text are not the sum of its lines').
func checkTables(src []byte, blocks []mdblocks.Block, chunks []chunking.Chunk, maxChar int, size Size, byTokens bool) error {
	var from place // earlier tables' parts end before from
	for _, b := range blocks {
		if b.Kind != mdblocks.Table {
			continue
		}
		table := strings.TrimRightFunc(string(src[b.Start:b.End]), unicode.IsSpace)
		if size(table) <= maxChar || strings.TrimSpace(string(src[b.BodyStart:b.End])) == "" {
			// Emitted whole (a table without body rows too): the next
			// table's parts come after it.
			from = after(chunks, from, splitLines(table))
			continue
		}
		header := string(src[b.Start:b.BodyStart])
		wrap := size(header)
		fit := maxChar - wrap + 1
		if byTokens {
			fit = maxChar - wrap
		}
		repeat := fit >= max(maxChar/4, 1)
		hdr := splitLines(strings.TrimSuffix(header, "\n"))
		rows := splitLines(strings.TrimSuffix(string(src[b.BodyStart:b.End]), "\n"))
		parts, next, err := findParts(chunks, from, hdr, rows, maxChar, size)
		if err != nil {
			return fmt.Errorf("table at offset %d: %w", b.Start, err)
		}
		from = next
		total, lines := 0, 0
		for k, p := range parts {
			n := size(strings.Join(p.lines, "\n"))
			total += n
			lines += len(p.lines)
			slack := 0
			if byTokens {
				slack = len(p.lines) // a token per line where tokens merge across a line break
			}
			if n > maxChar+slack && (!p.header || len(p.rows) > 0) {
				return fmt.Errorf("table at offset %d: part %d (%q) is of size %d > max_char %d, though its rows would fit in parts of their own", b.Start, k, p.lines, n, maxChar)
			}
			if k == 0 {
				continue
			}
			if p.firstWhole {
				// The chunker sizes the row as in the source, or trimmed
				// when it ends the section; in tokens, with its line break
				// too: the least and the largest of these bound its view.
				row := p.rows[0]
				least, most := size(row), size(row)
				for _, v := range []string{trimRight(row), row + "\n", trimRight(row) + "\n"} {
					if n := size(v); byTokens || !strings.HasSuffix(v, "\n") {
						least = min(least, n)
						if !strings.HasSuffix(v, "\n") {
							most = max(most, n)
						}
					}
				}
				if p.header && !(repeat && wrap+least <= maxChar) {
					return fmt.Errorf("table at offset %d: part %d repeats the header (size %d), which leaves %d of max_char %d for rows, less than a quarter, or does not fit with its first row %q (size %d)",
						b.Start, k, wrap, fit, maxChar, row, least)
				}
				if !p.header && repeat && wrap+most <= maxChar {
					return fmt.Errorf("table at offset %d: part %d lacks the header, which fits with its first row %q (header %d + row %d ≤ max_char %d)",
						b.Start, k, row, wrap, most, maxChar)
				}
			}
			used := 0
			if parts[k-1].header {
				used = wrap
			}
			for _, r := range parts[k-1].rows {
				used += size(r) + 1
			}
			first := p.rows[0]
			if n := size(first) + 1; used+n-1 <= maxChar {
				return fmt.Errorf("table at offset %d: part %d starts with %q, which fits in part %d (header and rows %d + %d without its line break ≤ max_char %d): too many parts",
					b.Start, k, first, k-1, used, size(first), maxChar)
			}
		}
		limit := size(table) + len(parts)*wrap
		if byTokens {
			limit += lines
		}
		if total > limit {
			return fmt.Errorf("table at offset %d: %d parts of size %d in all, more than the table (%d) plus one header (%d) per part",
				b.Start, len(parts), total, size(table), wrap)
		}
	}
	return nil
}

// place is a position in the chunks: a line of a chunk.
type place struct{ chunk, line int }

// after returns the place after the first run of lines equal to want in
// one chunk from from on, or from when there is none.
func after(chunks []chunking.Chunk, from place, want []string) place {
	for c := from.chunk; c < len(chunks); c++ {
		lines := splitLines(chunks[c].Content())
		i := 0
		if c == from.chunk {
			i = from.line
		}
		for ; i+len(want) <= len(lines); i++ {
			if sameLines(lines[i:i+len(want)], want) {
				return place{c, i + len(want)}
			}
		}
	}
	return from
}

// findParts finds the parts of the table with header lines hdr and row
// lines rows (as in the source) in the chunks from from on, in order, and
// returns them with the place after the last one (the next table's parts
// may start in the same chunk, after it). The first part starts with the
// header lines (it may be all of them when the next chunk starts with
// the first row); each later part follows the one before it, in the same
// chunk or at the start of the next, and is the header lines or not,
// followed by rows (or pieces of rows) in order; every row must be found
// but blank ones, which the chunker drops where they would start or end
// a part.
// A piece of a row may lose whitespace at either end (a cut can fall
// inside a run of spaces, and a chunk's end is trimmed), so its size
// counts the whitespace around it: an upper bound.
func findParts(chunks []chunking.Chunk, from place, hdr, rows []string, maxChar int, size Size) ([]tablePart, place, error) {
	chunkLines := func(c int) []string { return splitLines(chunks[c].Content()) }
	m := rowMatcher{rows: rows, maxChar: maxChar, size: size}
	// The first part: the header lines, then rows, or the header alone at
	// the end of a chunk whose next chunk starts with the first row.
	var parts []tablePart
	at := place{-1, 0}
	for c := from.chunk; c < len(chunks) && at.chunk < 0; c++ {
		lines := chunkLines(c)
		i := 0
		if c == from.chunk {
			i = from.line
		}
		for ; i+len(hdr) <= len(lines); i++ {
			if !sameLines(lines[i:i+len(hdr)], hdr) {
				continue
			}
			j := i + len(hdr)
			try := m
			p, end, err := try.part(lines, j, c)
			if err != nil {
				return nil, place{}, err
			}
			if end > j {
				m = try
				p.header, p.lines = true, lines[i:end]
				parts = append(parts, p)
				at = place{c, end}
				break
			}
			if j == len(lines) {
				// The header alone: the next chunk starts with the first
				// row, or every row is blank.
				try := m
				try.skipBlank()
				ok := try.r == len(rows)
				if !ok && c+1 < len(chunks) {
					_, end, err := try.part(chunkLines(c+1), 0, c+1)
					ok = err == nil && end > 0
				}
				if ok {
					parts = append(parts, tablePart{lines: lines[i:j], header: true})
					at = place{c, j}
					break
				}
			}
		}
	}
	if at.chunk < 0 {
		return nil, place{}, fmt.Errorf("row 0 (%q) is in no part (no header followed by it)", rows[0])
	}
	for m.skipBlank(); m.r < len(rows); m.skipBlank() {
		lines := chunkLines(at.chunk)
		if at.line == len(lines) {
			if at.chunk+1 == len(chunks) {
				break
			}
			at = place{at.chunk + 1, 0}
			continue
		}
		i, j := at.line, at.line
		header := j+len(hdr) <= len(lines) && sameLines(lines[j:j+len(hdr)], hdr)
		if header {
			j += len(hdr)
		}
		p, end, err := m.part(lines, j, at.chunk)
		if err != nil {
			return nil, place{}, err
		}
		if end == j {
			return nil, place{}, fmt.Errorf("row %d (%q) does not follow part %d: chunk %d line %d is %q", m.r, rows[m.r], len(parts)-1, at.chunk, j, lines[min(j, len(lines)-1)])
		}
		p.header, p.lines = header, lines[i:end]
		parts = append(parts, p)
		at = place{at.chunk, end}
	}
	if m.r < len(rows) {
		return nil, place{}, fmt.Errorf("row %d (%q) is in no part (%d parts found)", m.r, rows[m.r], len(parts))
	}
	return parts, at, nil
}

// rowMatcher finds the table's rows in order: r is the next row, pos the
// offset in it where its rest starts.
type rowMatcher struct {
	rows    []string
	r, pos  int
	maxChar int
	size    Size
}

// blank reports whether the next row is whitespace only.
func (m *rowMatcher) blank() bool {
	return m.pos == 0 && m.r < len(m.rows) && strings.TrimFunc(m.rows[m.r], spantest.IsSpace) == ""
}

// skipBlank moves past the blank rows that come next.
func (m *rowMatcher) skipBlank() {
	for m.blank() {
		m.r++
	}
}

// part matches rows (or pieces of rows) against lines from j on, as long
// as they follow, and returns the part they make (rows only) and the line
// after it. Chunk c is for messages.
func (m *rowMatcher) part(lines []string, j, c int) (tablePart, int, error) {
	var p tablePart
	for ; j < len(lines) && m.r < len(m.rows); j++ {
		row := m.rows[m.r]
		if m.pos == 0 && trimRight(lines[j]) != trimRight(row) && m.blank() {
			m.r++ // a blank row, which the chunker drops where it would start or end a part
			j--
			continue
		}
		if m.pos == 0 && trimRight(lines[j]) == trimRight(row) {
			if len(p.rows) == 0 {
				p.firstWhole = true
			}
			p.rows = append(p.rows, row)
			m.r++
			continue
		}
		piece := strings.TrimFunc(lines[j], spantest.IsSpace)
		q := m.pos + len(row[m.pos:]) - len(strings.TrimLeftFunc(row[m.pos:], spantest.IsSpace))
		if piece == "" || !strings.HasPrefix(row[q:], piece) {
			break
		}
		// A piece of a row.
		if t := trimRight(row); m.size(t) <= m.maxChar {
			return p, 0, fmt.Errorf("row %d (%q, of size %d) is cut although it fits max_char %d alone: chunk %d holds %q",
				m.r, t, m.size(t), m.maxChar, c, piece)
		}
		end := q + len(piece)
		if trimRight(row[end:]) == "" { // the last piece: the rest of the row
			p.rows = append(p.rows, strings.TrimRight(row[m.pos:], "\r"))
			m.r, m.pos = m.r+1, 0
			continue
		}
		after := end + len(row[end:]) - len(strings.TrimLeftFunc(row[end:], spantest.IsSpace))
		p.rows = append(p.rows, row[m.pos:after])
		m.pos = end
	}
	return p, j, nil
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

func trimRight(s string) string { return strings.TrimRightFunc(s, spantest.IsSpace) }

func sameLines(a, b []string) bool {
	for i := range a {
		if trimRight(a[i]) != trimRight(b[i]) {
			return false
		}
	}
	return true
}
