package mdblocks

import "bytes"

// splitTable looks for a GFM table in the paragraph block b. When found,
// b becomes the table, and the paragraph lines before the header, if
// any, are returned as a paragraph block to emit first.
func splitTable(src []byte, b *Block) *Block {
	prevStart, prevEnd := -1, -1
	for i := b.Start; i < b.End; {
		e := lineEnd(src, i)
		if e > b.End {
			e = b.End
		}
		if prevStart >= 0 {
			if cells := delimiterCells(src[i:e]); cells > 0 && headerMatches(src[prevStart:prevEnd], cells) {
				var before *Block
				if prevStart > b.Start {
					before = &Block{Kind: Paragraph, Start: b.Start, End: prevStart, BodyStart: b.Start, BodyEnd: prevStart}
				}
				b.Kind, b.Start, b.BodyStart, b.BodyEnd = Table, prevStart, e, b.End
				return before
			}
		}
		prevStart, prevEnd = i, e
		i = e
	}
	return nil
}

// delimiterCells returns the number of cells of a table delimiter row, or 0
// when line is not one. A delimiter row needs at least one pipe.
func delimiterCells(line []byte) int {
	i := 0
	for i < len(line) && isSpace(line[i]) { // the bytes Trim takes
		i++
	}
	if i == len(line) || line[i] != '|' && line[i] != '-' && line[i] != ':' {
		return 0 // most lines: no row of the kind
	}
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 || bytes.IndexByte(line, '|') < 0 {
		return 0
	}
	switch line[0] {
	case '|', '-', ':':
	default:
		return 0
	}
	line = trimPipes(line)
	cells := 0
	for cell := range bytes.SplitSeq(line, []byte("|")) {
		if !isDelimCell(cell) {
			return 0
		}
		cells++
	}
	return cells
}

// isDelimCell reports whether cell is spaces, an optional colon, one or
// more hyphens, an optional colon, spaces.
func isDelimCell(cell []byte) bool {
	cell = bytes.Trim(cell, " \t")
	if len(cell) > 0 && cell[0] == ':' {
		cell = cell[1:]
	}
	if len(cell) > 0 && cell[len(cell)-1] == ':' {
		cell = cell[:len(cell)-1]
	}
	if len(cell) == 0 {
		return false
	}
	for _, c := range cell {
		if c != '-' {
			return false
		}
	}
	return true
}

// trimPipes removes one leading and one trailing unescaped pipe.
func trimPipes(line []byte) []byte {
	if len(line) > 0 && line[0] == '|' {
		line = line[1:]
	}
	if n := len(line); n > 0 && line[n-1] == '|' && (n < 2 || line[n-2] != '\\') {
		line = line[:n-1]
	}
	return line
}

// headerMatches reports whether a header row has cells cells, pipes in
// code spans counted (as GFM does) or not (as many writers expect).
func headerMatches(line []byte, cells int) bool {
	line = trimPipes(bytes.Trim(line, " \t\r\n"))
	if len(line) == 0 {
		return false
	}
	plain, code := countCells(line)
	return plain == cells || code == cells
}

// countCells returns the number of cells split by unescaped pipes,
// counting every such pipe, then ignoring those in code spans.
func countCells(line []byte) (plain, code int) {
	// A backtick run opens a code span closed by the next run as long.
	type run struct{ start, n, next int }
	var runs []run
	for i := 0; i < len(line); {
		if line[i] == '\\' {
			i += 2
			continue
		}
		if line[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		runs = append(runs, run{i, j - i, -1})
		i = j
	}
	if len(runs) > 0 {
		last := map[int]int{}
		for k := len(runs) - 1; k >= 0; k-- {
			if nx, ok := last[runs[k].n]; ok {
				runs[k].next = nx
			}
			last[runs[k].n] = k
		}
	}
	plain, code = 1, 1
	r := 0
	inCodeUntil := -1 // offset where the current code span ends
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if r < len(runs) && runs[r].start == i {
			if i >= inCodeUntil && runs[r].next >= 0 {
				cl := runs[runs[r].next]
				inCodeUntil = cl.start + cl.n
				nr := runs[r].next + 1
				i += runs[r].n - 1
				r = nr
				continue
			}
			i += runs[r].n - 1
			r++
			continue
		}
		if c == '|' {
			plain++
			if i >= inCodeUntil {
				code++
			}
		}
	}
	return plain, code
}
