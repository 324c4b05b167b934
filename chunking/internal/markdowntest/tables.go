package markdowntest

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// tablePart is one part of a split table as found in a chunk.
type tablePart struct {
	lines []string // the part's lines as in the chunk, header included
	// rows are its row lines (whole rows or pieces of a row) as the
	// chunker counts them: source text without the line break (with the
	// whitespace around a piece: an upper bound, as for the last row,
	// which the section end may trim).
	rows []string
}

// checkTables checks the rules of a table larger than maxChar (split
// into parts, each repeating the header and delimiter rows), sizes
// measured by size (byTokens: whether the unit is tokens):
//   - a row is cut only when it alone is larger than maxChar;
//   - the parts are as few as the budget allows: the first row (or piece
//     of a row) of a part would not have fitted in the part before it:
//     the header, the rows before it and it, without its line break (the
//     part's last line break is dropped when the part ends a chunk), are
//     larger than maxChar, and the rows with it, line breaks included,
//     are larger than the floor of a quarter of maxChar. Rows are
//     counted one by one, as the chunker packs them, and a line break
//     counts one: exactly so in characters; in tokens at least what the
//     break costs the chunker, so the check never fails a part that
//     could not take the row, though it may pass one that could by a
//     token;
//   - the parts hold, together, at most the table plus one header per
//     part (in tokens, give or take a token at each line of a part: the
//     tokens of a text are not the sum of its lines').
func checkTables(src []byte, blocks []mdblocks.Block, chunks []chunking.Chunk, maxChar int, size Size, byTokens bool) error {
	var from place // earlier tables' parts end before from
	for _, b := range blocks {
		if b.Kind != mdblocks.Table {
			continue
		}
		table := strings.TrimRightFunc(string(src[b.Start:b.End]), unicode.IsSpace)
		if size(table) <= maxChar {
			continue
		}
		if strings.TrimSpace(string(src[b.BodyStart:b.End])) == "" {
			continue // no body rows: the table is emitted whole
		}
		header := string(src[b.Start:b.BodyStart])
		wrap := size(header)
		hdr := splitLines(strings.TrimSuffix(header, "\n"))
		rows := splitLines(strings.TrimSuffix(string(src[b.BodyStart:b.End]), "\n"))
		parts, next, err := findParts(chunks, from, hdr, rows, maxChar, size)
		if err != nil {
			return fmt.Errorf("table at offset %d: %w", b.Start, err)
		}
		from = next
		floor := max(maxChar/4, 1)
		total, lines := 0, 0
		for k, p := range parts {
			total += size(strings.Join(p.lines, "\n"))
			lines += len(p.lines)
			if k == 0 {
				continue
			}
			used := 0
			for _, r := range parts[k-1].rows {
				used += size(r) + 1
			}
			first := p.rows[0]
			if n := size(first) + 1; used+n <= floor || wrap+used+n-1 <= maxChar {
				return fmt.Errorf("table at offset %d: part %d starts with %q, which fits in part %d (header %d + rows %d + %d without its line break ≤ max_char %d, or rows %d + %d ≤ %d): too many parts",
					b.Start, k, p.lines[len(hdr)], k-1, wrap, used, size(first), maxChar, used, n, floor)
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

// findParts finds the parts of the table with header lines hdr and row
// lines rows (as in the source) in the chunks from from on, in order, and
// returns them with the place after the last one (the next table's parts
// may start in the same chunk, after it). A part is the
// header lines followed by rows (or pieces of rows) in order; every row
// must be found. A piece of a row may lose whitespace at either end (a
// cut can fall inside a run of spaces, and a chunk's end is trimmed), so
// its size counts the whitespace around it: an upper bound.
func findParts(chunks []chunking.Chunk, from place, hdr, rows []string, maxChar int, size Size) ([]tablePart, place, error) {
	var parts []tablePart
	r, pos := 0, 0 // the next row, and the offset in it where its rest starts
	for c := from.chunk; c < len(chunks) && r < len(rows); c++ {
		lines := splitLines(chunks[c].Content())
		i := 0
		if c == from.chunk {
			i = from.line
		}
		for ; i+len(hdr) <= len(lines) && r < len(rows); i++ {
			if !sameLines(lines[i:i+len(hdr)], hdr) {
				continue
			}
			var p tablePart
			j := i + len(hdr)
			for ; j < len(lines) && r < len(rows); j++ {
				row := rows[r]
				if pos == 0 && trimRight(lines[j]) == trimRight(row) {
					p.rows = append(p.rows, row)
					r++
					continue
				}
				piece := strings.TrimFunc(lines[j], isSpace)
				q := pos + len(row[pos:]) - len(strings.TrimLeftFunc(row[pos:], isSpace))
				if piece == "" || !strings.HasPrefix(row[q:], piece) {
					break
				}
				// A piece of a row.
				if t := trimRight(row); size(t) <= maxChar {
					return nil, place{}, fmt.Errorf("row %d (%q, of size %d) is cut although it fits max_char %d alone: chunk %d holds %q",
						r, t, size(t), maxChar, c, piece)
				}
				end := q + len(piece)
				if trimRight(row[end:]) == "" { // the last piece: the rest of the row
					p.rows = append(p.rows, strings.TrimRight(row[pos:], "\r"))
					r, pos = r+1, 0
					continue
				}
				after := end + len(row[end:]) - len(strings.TrimLeftFunc(row[end:], isSpace))
				p.rows = append(p.rows, row[pos:after])
				pos = end
			}
			if j == i+len(hdr) {
				continue // the header alone: not a part
			}
			p.lines = lines[i:j]
			parts = append(parts, p)
			i = j - 1
			from = place{c, j}
		}
	}
	if r < len(rows) {
		return nil, place{}, fmt.Errorf("row %d (%q) is in no part (%d parts found)", r, rows[r], len(parts))
	}
	return parts, from, nil
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

func trimRight(s string) string { return strings.TrimRightFunc(s, isSpace) }

func sameLines(a, b []string) bool {
	for i := range a {
		if trimRight(a[i]) != trimRight(b[i]) {
			return false
		}
	}
	return true
}
