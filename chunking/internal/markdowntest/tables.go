package markdowntest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
)

// tablePart is one part of a split table as found in a chunk.
type tablePart struct {
	lines []string // the part's lines as in the chunk, header included
	// sizes of its row lines (whole rows or pieces of a row) as the
	// chunker counts them: source characters, line break included (an
	// upper bound for the last row, which the section end may trim).
	sizes []int
}

// checkTables checks the rules of a table longer than maxChar (split
// into parts, each repeating the header and delimiter rows):
//   - a row is cut only when it alone is longer than maxChar;
//   - the parts are as few as the budget allows: the first row (or piece
//     of a row) of a part would not have fitted in the part before it (the
//     budget is maxChar − header + 1 characters of rows, line breaks
//     included, or a quarter of maxChar when the header leaves less);
//   - the parts hold, together, at most the table plus one header per
//     part.
func checkTables(src []byte, blocks []mdblocks.Block, chunks []chunking.Chunk, maxChar int) error {
	from := 0 // chunks before from hold earlier tables' parts
	for _, b := range blocks {
		if b.Kind != mdblocks.Table {
			continue
		}
		table := strings.TrimRightFunc(string(src[b.Start:b.End]), unicode.IsSpace)
		if utf8.RuneCountInString(table) <= maxChar {
			continue
		}
		if strings.TrimSpace(string(src[b.BodyStart:b.End])) == "" {
			continue // no body rows: the table is emitted whole
		}
		header := string(src[b.Start:b.BodyStart])
		wrap := utf8.RuneCountInString(header)
		hdr := splitLines(strings.TrimSuffix(header, "\n"))
		rows := splitLines(strings.TrimSuffix(string(src[b.BodyStart:b.End]), "\n"))
		parts, next, err := findParts(chunks, from, hdr, rows, maxChar)
		if err != nil {
			return fmt.Errorf("table at offset %d: %w", b.Start, err)
		}
		from = next
		budget := max(maxChar-wrap+1, maxChar/4, 1)
		total := 0
		for k, p := range parts {
			total += utf8.RuneCountInString(strings.Join(p.lines, "\n"))
			if k == 0 {
				continue
			}
			if used := sum(parts[k-1].sizes); used+p.sizes[0] <= budget {
				return fmt.Errorf("table at offset %d: part %d starts with %q, which fits in part %d (%d + %d characters of rows ≤ budget %d): too many parts",
					b.Start, k, p.lines[len(hdr)], k-1, used, p.sizes[0], budget)
			}
		}
		if limit := utf8.RuneCountInString(table) + len(parts)*wrap; total > limit {
			return fmt.Errorf("table at offset %d: %d parts of %d characters in all, more than the table (%d) plus one header (%d) per part",
				b.Start, len(parts), total, utf8.RuneCountInString(table), wrap)
		}
	}
	return nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// findParts finds the parts of the table with header lines hdr and row
// lines rows (as in the source) in chunks[from:], in order, and returns
// them with the position of the chunk after the last one. A part is the
// header lines followed by rows (or pieces of rows) in order; every row
// must be found. A piece of a row may lose whitespace at either end (a
// cut can fall inside a run of spaces, and a chunk's end is trimmed), so
// its size counts the whitespace around it: an upper bound.
func findParts(chunks []chunking.Chunk, from int, hdr, rows []string, maxChar int) ([]tablePart, int, error) {
	var parts []tablePart
	r, pos := 0, 0 // the next row, and the offset in it where its rest starts
	for c := from; c < len(chunks) && r < len(rows); c++ {
		lines := splitLines(chunks[c].Content())
		for i := 0; i+len(hdr) <= len(lines) && r < len(rows); i++ {
			if !sameLines(lines[i:i+len(hdr)], hdr) {
				continue
			}
			var p tablePart
			j := i + len(hdr)
			for ; j < len(lines) && r < len(rows); j++ {
				row := rows[r]
				if pos == 0 && trimRight(lines[j]) == trimRight(row) {
					p.sizes = append(p.sizes, utf8.RuneCountInString(row)+1)
					r++
					continue
				}
				piece := strings.TrimFunc(lines[j], isSpace)
				q := pos + len(row[pos:]) - len(strings.TrimLeftFunc(row[pos:], isSpace))
				if piece == "" || !strings.HasPrefix(row[q:], piece) {
					break
				}
				// A piece of a row.
				if t := trimRight(row); utf8.RuneCountInString(t) <= maxChar {
					return nil, 0, fmt.Errorf("row %d (%q, %d characters) is cut although it fits max_char %d alone: chunk %d holds %q",
						r, t, utf8.RuneCountInString(t), maxChar, c, piece)
				}
				end := q + len(piece)
				if trimRight(row[end:]) == "" { // the last piece: the rest of the row
					p.sizes = append(p.sizes, utf8.RuneCountInString(strings.TrimRight(row[pos:], "\r"))+1)
					r, pos = r+1, 0
					continue
				}
				after := end + len(row[end:]) - len(strings.TrimLeftFunc(row[end:], isSpace))
				p.sizes = append(p.sizes, utf8.RuneCountInString(row[pos:after])+1)
				pos = end
			}
			if j == i+len(hdr) {
				continue // the header alone: not a part
			}
			p.lines = lines[i:j]
			parts = append(parts, p)
			i = j - 1
			from = c + 1
		}
	}
	if r < len(rows) {
		return nil, 0, fmt.Errorf("row %d (%q) is in no part (%d parts found)", r, rows[r], len(parts))
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
