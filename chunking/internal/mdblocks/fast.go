package mdblocks

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The fast scanner reads the top-level blocks it can decide from one line
// at a time, exactly as goldmark's block parsers decide them (the rules
// below are theirs, line for line), and hands goldmark, from the start of
// the block concerned up to the next safe cut (nextSafeCut), whatever it
// cannot decide for certain: setext headings, display math, HTML blocks
// of type 1, and the lines of lists and block quotes whose place depends
// on what is open inside them. goldmark stays the specification:
// FuzzFastScan and TestFastCorpus hold the two to the same blocks.

// fastStopped is fast's stop value when the poller's context ended.
const fastStopped = -1

// fast scans body from pos, a line start where no block is open, and
// appends the blocks it reads to blocks (shifted by off). It stops at the
// first line start at or after limit where no block is open, at the end of
// body, or at the start of a block it does not handle (the start of the
// paragraph, list or block quote a line it does not handle would
// continue); it returns the blocks, where it stopped and whether goldmark
// must take over there. It returns stop = fastStopped when sc.pl stopped
// it.
func (sc scanner) fast(body []byte, pos, limit, off int, blocks []Block) (_ []Block, stop int, fallback bool) {
	const (
		none  = iota
		para  // a paragraph
		code  // indented code
		fence // fenced code
		list  // a list
		quote // a block quote
		html  // an HTML block
	)
	state, start := none, 0
	var fch byte                // fence character
	var flen int                // fence length
	var lm listMarker           // the list's first marker
	var offset int              // the column of the list's last item's content
	var afterBlank bool         // a blank line came last (list)
	var inPara bool             // a paragraph is surely the innermost open block (list, quote)
	var emptyItem bool          // the last line may hold an empty list item (list)
	var htype ast.HTMLBlockType // the HTML block's type
	var hfirst int              // the end of its first line
	var hopen htmlOpener
	since := pos // the work up to since is charged
	ls := pos
	for ls < len(body) {
		if ls-since >= 4<<10 { // charge the work every few kilobytes
			if sc.charge(ls - since) {
				return blocks, fastStopped, false
			}
			since = ls
		}
		le := lineEnd(body, ls)
		line := body[ls:le]
		w, p := indentWidth(line)
		blank := isBlank(line[p:])
		switch state {
		case fence:
			if w < 4 && closesFence(line[p:], fch, flen) {
				blocks = appendBlock(blocks, body, FencedCode, 0, start, le, off)
				state = none
			}
			ls = le
			continue
		case html:
			if htype >= ast.HTMLBlockType6 {
				if !blank {
					ls = le
					continue
				}
				blocks = appendBlock(blocks, body, HTML, 0, start, ls, off)
				state = none
				ls = le
				continue
			}
			// Types 2–5 end on the line holding their end condition; a
			// first line holding it is the whole block.
			if ls == hfirst && htmlEnds(htype, body[start:hfirst]) {
				blocks = appendBlock(blocks, body, HTML, 0, start, ls, off)
				state = none
				break // this line opens the next block
			}
			if htmlEnds(htype, line) {
				blocks = appendBlock(blocks, body, HTML, 0, start, le, off)
				state = none
			}
			ls = le
			continue
		case code:
			if blank || w >= 4 {
				ls = le
				continue
			}
			blocks = appendBlock(blocks, body, IndentedCode, 0, start, ls, off)
			state = none // this line opens the next block
		case list:
			if blank {
				if emptyItem {
					// An empty item before a blank line sets state in
					// goldmark that closes every list around it at the
					// next line, however indented.
					return sc.handOver(blocks, start, ls-since)
				}
				afterBlank, inPara = true, false
				ls = le
				continue
			}
			if emptyItem = mayHoldEmptyItem(line); emptyItem && bytes.IndexByte(line, '>') >= 0 {
				return sc.handOver(blocks, start, ls-since) // and a quote's blank line would not look blank here
			}
			if w >= offset { // the last item goes on
				afterBlank, inPara = false, inPara && plainText(line[p:])
				ls = le
				continue
			}
			if w < 4 {
				if m := parseMarker(line); m.ok {
					if m.marker != lm.marker || m.ordered != lm.ordered || m.blank || isThematicBreak(line[m.end-1:]) {
						return sc.handOver(blocks, start, ls-since) // another list, a break or an empty item
					}
					offset, inPara = m.offset(line), m.opensParagraph(line) // the next item
					afterBlank = false
					ls = le
					continue
				}
			}
			// The list closes here, unless the line lazily continues a
			// paragraph in it: text that opens no block, after a
			// paragraph line. Only a blank line before it or a block
			// opening on it surely closes it.
			if inPara && (w >= 4 || plainText(line[p:])) {
				ls = le
				continue
			}
			if !afterBlank {
				switch closes(line, p, w, &hopen, false) {
				case lazy:
					if inPara {
						ls = le
						continue
					}
					return sc.handOver(blocks, start, ls-since)
				case unknown:
					return sc.handOver(blocks, start, ls-since)
				}
			}
			blocks = appendBlock(blocks, body, List, 0, start, ls, off)
			state = none
		case quote:
			if w < 4 && p < len(line) && line[p] == '>' {
				inPara = inPara && quoteParagraph(line[p:])
				ls = le
				continue
			}
			if blank {
				blocks = appendBlock(blocks, body, Quote, 0, start, ls, off)
				state = none
				ls = le
				continue
			}
			if inPara && (w >= 4 || plainText(line[p:])) { // a lazy line
				ls = le
				continue
			}
			switch closes(line, p, w, &hopen, true) {
			case lazy:
				if inPara {
					ls = le
					continue
				}
				return sc.handOver(blocks, start, ls-since)
			case unknown:
				return sc.handOver(blocks, start, ls-since) // maybe a lazy line
			}
			blocks = appendBlock(blocks, body, Quote, 0, start, ls, off)
			state = none
		case para:
			if blank {
				blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
				state = none
				ls = le
				continue
			}
			if w >= 4 { // no block opens on an indented line inside a paragraph
				ls = le
				continue
			}
			switch c := line[p]; c {
			case '#':
				if level := atxLevel(line[p:]); level > 0 {
					blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
					blocks = appendBlock(blocks, body, Heading, level, ls, le, off)
					state = none
				}
			case '`', '~':
				if n := fenceOpens(line[p:]); n > 0 {
					blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
					state, start, fch, flen = fence, ls, c, n
				}
			case '>':
				blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
				state, start, inPara = quote, ls, quoteParagraph(line[p:])
			case '<':
				// HTML blocks of types 1–6 interrupt a paragraph, type 7
				// does not.
				if t := hopen.typ(line); t == ast.HTMLBlockType1 {
					return sc.handOver(blocks, start, ls-since)
				} else if t != 0 && t < ast.HTMLBlockType7 {
					blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
					state, start, htype, hfirst = html, ls, t, le
				}
			default:
				if mayEndParagraph(line[p:]) {
					return sc.handOver(blocks, start, ls-since)
				}
				// A list item interrupts a paragraph unless it is empty
				// or numbered other than 1.
				if m := parseMarker(line); m.ok && !m.blank && (!m.ordered || m.number == 1) {
					empty := mayHoldEmptyItem(line)
					if empty && bytes.IndexByte(line, '>') >= 0 {
						return sc.handOver(blocks, start, ls-since)
					}
					blocks = appendBlock(blocks, body, Paragraph, 0, start, ls, off)
					state, start, lm, offset, afterBlank, inPara = list, ls, m, m.offset(line), false, m.opensParagraph(line)
					emptyItem = empty
				}
			}
			ls = le
			continue
		}
		// No block is open: this line starts one, or is blank.
		if ls >= limit {
			break
		}
		if blank {
			ls = le
			continue
		}
		if w >= 4 {
			state, start = code, ls
			ls = le
			continue
		}
		switch c := line[p]; c {
		case '#':
			if level := atxLevel(line[p:]); level > 0 {
				blocks = appendBlock(blocks, body, Heading, level, ls, le, off)
				ls = le
				continue
			}
		case '`', '~':
			if n := fenceOpens(line[p:]); n > 0 {
				state, start, fch, flen = fence, ls, c, n
				ls = le
				continue
			}
		case '-', '*', '_', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if c != '+' && isThematicBreak(line[p:]) {
				blocks = appendBlock(blocks, body, ThematicBreak, 0, ls, le, off)
				ls = le
				continue
			}
			if m := parseMarker(line); m.ok {
				empty := mayHoldEmptyItem(line)
				if m.blank || empty && bytes.IndexByte(line, '>') >= 0 {
					return sc.handOver(blocks, ls, ls-since)
				}
				state, start, lm, offset, afterBlank, inPara = list, ls, m, m.offset(line), false, m.opensParagraph(line)
				emptyItem = empty
				ls = le
				continue
			}
		case '>':
			state, start, inPara = quote, ls, quoteParagraph(line[p:])
			ls = le
			continue
		case '<':
			if t := hopen.typ(line); t == ast.HTMLBlockType1 {
				// <script>, <pre>, <style>, <textarea>: goldmark folds
				// their end tags' case beyond ASCII.
				return sc.handOver(blocks, ls, ls-since)
			} else if t != 0 {
				state, start, htype, hfirst = html, ls, t, le
				ls = le
				continue
			}
		case '$', '\\':
			if mathOpener(line[p:]) {
				return sc.handOver(blocks, ls, ls-since)
			}
		}
		state, start = para, ls
		ls = le
	}
	switch state {
	case para:
		blocks = appendBlock(blocks, body, Paragraph, 0, start, len(body), off)
	case code:
		blocks = appendBlock(blocks, body, IndentedCode, 0, start, len(body), off)
	case fence:
		blocks = appendBlock(blocks, body, FencedCode, 0, start, len(body), off)
	case list:
		blocks = appendBlock(blocks, body, List, 0, start, len(body), off)
	case quote:
		blocks = appendBlock(blocks, body, Quote, 0, start, len(body), off)
	case html:
		blocks = appendBlock(blocks, body, HTML, 0, start, len(body), off)
	}
	if sc.charge(ls - since) {
		return blocks, fastStopped, false
	}
	return blocks, ls, false
}

// How a line that does not continue a list or block quote as a container
// ends it.
const (
	unknown = iota // it may continue a paragraph inside lazily
	ends           // a block opens on it, at the top level
	lazy           // it continues a paragraph inside lazily, if one is open
)

// closes says how line, not blank, indented w columns (its text from p)
// and not continuing the list or block quote it follows as a container,
// ends it: a line that opens an ATX heading, a code fence, a thematic
// break, a block quote (after a list), a list item (after a block quote)
// or an HTML block of types 1 to 6 surely closes it, whatever is open in
// it; a line that can only be an HTML block of type 7 or text, which
// cannot interrupt a paragraph, continues one lazily if one is open.
func closes(line []byte, p, w int, h *htmlOpener, inQuote bool) int {
	if w >= 4 {
		return unknown
	}
	s := line[p:]
	switch {
	case atxLevel(s) > 0, isFence(s), isThematicBreak(s):
		return ends
	case s[0] == '>':
		return ends // (a quote's own lines are its container's)
	case inQuote && parseMarker(line).ok:
		return ends
	case s[0] == '<':
		if t := h.typ(line); t != 0 && t < ast.HTMLBlockType7 {
			return ends
		}
		return lazy
	}
	return unknown
}

// handOver returns fast's result when goldmark must take over at stop,
// charging the work not charged yet.
func (sc scanner) handOver(blocks []Block, stop, work int) ([]Block, int, bool) {
	if sc.charge(work) {
		return blocks, fastStopped, false
	}
	return blocks, stop, true
}

// charge counts n bytes of the fast scanner's work on the test counter and
// the poller; it reports whether the poller's context has ended.
func (sc scanner) charge(n int) bool {
	if sc.peeked != nil {
		*sc.peeked += n
	}
	return sc.pl != nil && sc.pl.Add(n)
}

// indentWidth returns the width of line's leading spaces and tabs (a tab
// advances to the next multiple of 4) and the offset after them, as
// goldmark's util.IndentWidth at the start of a line.
func indentWidth(line []byte) (w, p int) {
	for ; p < len(line); p++ {
		switch line[p] {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w, p
		}
	}
	return w, p
}

// isSpace is goldmark's util.IsSpace: a space, tab, line feed or carriage
// return.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// atxLevel returns the level of the ATX heading that s, a line after its
// indentation of at most 3 columns, opens, or 0 (goldmark's
// atxHeadingParser.Open).
func atxLevel(s []byte) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(s) && !isSpace(s[n]) {
		return 0
	}
	return n
}

// fenceOpens returns the length of the code fence that s, a line after
// its indentation of at most 3 columns, opens, or 0 (goldmark's
// fencedCodeBlockParser.Open).
func fenceOpens(s []byte) int {
	c := s[0]
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 {
		return 0
	}
	if c == '`' && n < len(s)-1 {
		rest := s[n:]
		l, r := 0, len(rest)
		for l < r && isSpace(rest[l]) {
			l++
		}
		for r > l && isSpace(rest[r-1]) {
			r--
		}
		if bytes.IndexByte(rest[l:r], '`') >= 0 {
			return 0
		}
	}
	return n
}

// closesFence reports whether s, a line after its indentation of at most 3
// columns, closes a fence of n characters c (goldmark's
// fencedCodeBlockParser.Continue).
func closesFence(s []byte, c byte, n int) bool {
	k := 0
	for k < len(s) && s[k] == c {
		k++
	}
	return k >= n && isBlank(s[k:])
}

// isThematicBreak reports whether s, a line after its indentation of at
// most 3 columns, is a thematic break (goldmark's isThematicBreak).
func isThematicBreak(s []byte) bool {
	mark, count := byte(0), 0
	for _, c := range s {
		switch {
		case isSpace(c):
		case mark == 0:
			if c != '*' && c != '-' && c != '_' {
				return false
			}
			mark, count = c, 1
		case c != mark:
			return false
		default:
			count++
		}
	}
	return count > 2
}

// listMarker is a list item marker at the start of a line, as goldmark's
// parseListItem reads it.
type listMarker struct {
	ok      bool
	ordered bool
	marker  byte // '-', '+', '*', '.' or ')'
	end     int  // the offset after the marker
	number  int  // an ordered item's number
	blank   bool // nothing but spaces after the marker
}

// parseMarker reads the list item marker line starts with (goldmark's
// parseListItem): up to 3 spaces, '-', '+' or '*' or one to nine digits
// and '.' or ')', then the end of the line or a space or tab.
func parseMarker(line []byte) (m listMarker) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i > 3 || i >= len(line) {
		return m
	}
	switch c := line[i]; {
	case c == '-' || c == '*' || c == '+':
		i++
	case c >= '0' && c <= '9':
		d := i
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			m.number = 10*m.number + int(line[i]-'0')
			i++
		}
		if i-d > 9 || i >= len(line) || line[i] != '.' && line[i] != ')' {
			return m
		}
		m.ordered = true
		i++
	default:
		return m
	}
	if i < len(line) && line[i] != '\n' && line[i] != ' ' && line[i] != '\t' {
		return m
	}
	m.ok, m.marker, m.end, m.blank = true, line[i-1], i, isBlank(line[i:])
	return m
}

// offset returns the column of the content of the item m starts on line
// (goldmark's ListItem.Offset): the marker's end and the spaces after it,
// or one space when they are more than 4 (indented code).
func (m listMarker) offset(line []byte) int {
	w := 0
	for i := m.end; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
		if line[i] == ' ' {
			w++
		} else {
			w += 4 - (m.end+w)%4
		}
	}
	if w > 4 {
		w = 1
	}
	return m.end + w
}

// opensParagraph reports whether the content of the item m starts on line
// surely opens a paragraph: it is indented less than code and starts with
// plain text.
func (m listMarker) opensParagraph(line []byte) bool {
	i := m.end
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i-m.end <= 4 && i < len(line) && plainText(line[i:])
}

// quoteParagraph reports whether s, a line from its '>', surely holds a
// paragraph line of the block quote: '>', at most 4 spaces, plain text. It
// opens a paragraph or continues one (lazily, when the line closes a
// container inside the quote).
func quoteParagraph(s []byte) bool {
	i := 1
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i <= 5 && i < len(s) && plainText(s[i:])
}

// plainText reports whether s, a line from its first byte after its
// indentation, surely opens no block but a paragraph, wherever it stands
// (and so continues one, lazily or not): its first byte triggers no block
// parser, or the parsers it triggers surely open nothing (an emphasis
// "**", a number, a "#" without a space).
func plainText(s []byte) bool {
	switch c := s[0]; c {
	case '*', '-', '+':
		return !markerEnds(s, 1) && !onlyMarks(s)
	case '_', '=':
		return !onlyMarks(s)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return !orderedMarker(s)
	case '#':
		return atxLevel(s) == 0
	case '`', '~':
		return fenceOpens(s) == 0
	case '$', '\\':
		return !mathOpener(s)
	}
	return plain(s[0])
}

// onlyMarks reports whether s holds nothing but '-', '*', '_', '=' and
// spaces: a thematic break or setext underline, or close to one.
func onlyMarks(s []byte) bool {
	for _, c := range s {
		if c != '-' && c != '*' && c != '_' && c != '=' && !isSpace(c) {
			return false
		}
	}
	return true
}

// markerEnds reports whether a list marker ending before line[i] could be
// one: the line ends there or a space follows.
func markerEnds(line []byte, i int) bool {
	return i >= len(line) || isSpace(line[i])
}

// orderedMarker reports whether s could start an ordered list item: one
// to nine digits, '.' or ')', then the end of the line or a space.
func orderedMarker(s []byte) bool {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n >= 1 && n <= 9 && n < len(s) && (s[n] == '.' || s[n] == ')') && markerEnds(s, n+1)
}

// plain reports whether a line whose first byte after its indentation is
// c opens no block but a paragraph, wherever it stands: c triggers none
// of the block parsers (and is no space or control character).
func plain(c byte) bool {
	if c >= 0x80 {
		return true
	}
	if c <= ' ' || c == 0x7f {
		return false
	}
	switch c {
	case '#', '`', '~', '>', '<', '-', '*', '_', '+', '=', '$', '\\':
		return false
	}
	return c < '0' || c > '9'
}

// mayHoldEmptyItem reports whether line might hold an empty list item (a
// marker and nothing after it) at any depth: a list whose last item is
// empty at a blank line sets a flag in goldmark that closes the lists
// around it, which the fast scanner leaves to goldmark.
func mayHoldEmptyItem(line []byte) bool {
	e := len(line)
	for e > 0 && isSpace(line[e-1]) {
		e--
	}
	if e == 0 {
		return false
	}
	i := e - 1
	switch line[i] {
	case '-', '+', '*':
	case '.', ')':
		for i > 0 && line[i-1] >= '0' && line[i-1] <= '9' {
			i--
		}
		if i == e-1 {
			return false
		}
	default:
		return false
	}
	// Only container markers can come before it.
	for _, c := range line[:i] {
		if !(c == ' ' || c == '\t' || c == '>' || c == '-' || c == '*' || c == '+' || c == '.' || c == ')' || c >= '0' && c <= '9') {
			return false
		}
	}
	return i == 0 || line[i-1] == ' ' || line[i-1] == '\t' || line[i-1] == '>'
}

// isFence reports whether s, a line after its indentation of at most 3
// columns, opens a code fence.
func isFence(s []byte) bool {
	return (s[0] == '`' || s[0] == '~') && fenceOpens(s) > 0
}

// mathOpener reports whether s starts as a display math block does.
func mathOpener(s []byte) bool {
	return bytes.HasPrefix(s, []byte("$$")) || bytes.HasPrefix(s, []byte(`\[`)) || bytes.HasPrefix(s, []byte(`\begin{`))
}

// mayEndParagraph reports whether s, a line after its indentation of at
// most 3 columns inside a paragraph, might be a setext underline, a
// thematic break or display math: it may say yes where
// goldmark would not (goldmark then decides), never no where goldmark
// would. (ATX headings, code fences, block quotes, list items and HTML
// blocks are decided by the caller.)
func mayEndParagraph(s []byte) bool {
	switch c := s[0]; c {
	case '-', '*', '=', '_':
		return onlyMarks(s) // a setext underline or a thematic break
	case '$', '\\':
		return mathOpener(s)
	}
	return false
}

// nextSafeCut returns the start of the first line after p that follows a
// blank line and starts at column 0 with a byte that opens no block but a
// paragraph, an ATX heading or a code fence (no list marker, no
// indentation, no block quote, HTML or math opener), or len(body). At such
// a line every container goldmark has open (a list, a block quote, an HTML
// block of types 6 and 7) and every paragraph has closed; only a
// top-level fenced code block, HTML block of types 1–5 or display math can
// still be open, which closedAtEnd checks.
func nextSafeCut(body []byte, p int) int {
	if p >= len(body) {
		return len(body)
	}
	p = lineEnd(body, p)
	prevBlank := isBlank(body[lineStart(body, p-1):p])
	for p < len(body) {
		e := lineEnd(body, p)
		if prevBlank && safeStart(body[p:e]) {
			return p
		}
		prevBlank = isBlank(body[p:e])
		p = e
	}
	return len(body)
}

// safeStart reports whether line, at column 0, starts with a byte no block
// parser but the paragraph's, the ATX heading's and the code fence's is
// triggered by.
func safeStart(line []byte) bool {
	switch c := line[0]; {
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		return true
	case c == '#' || c == '`' || c == '~' || c == '|' || c == '[' || c == '!' || c == '(' || c == '"' || c == '\'' || c == ':' || c == '@' || c == '&' || c == '{' || c == '}' || c == '/' || c == '.' || c == ',':
		return true
	}
	return false
}

// htmlOpener asks goldmark's HTML block parser whether a line opens an
// HTML block, and of which type: its start conditions are seven regular
// expressions and a list of tags, which the fast scanner does not copy.
type htmlOpener struct {
	pc  parser.Context
	doc ast.Node
}

// typ returns the type of the HTML block line opens where no paragraph is
// open, or 0. (Where one is, the same line opens the same block unless it
// is of type 7, which cannot interrupt a paragraph.)
func (h *htmlOpener) typ(line []byte) ast.HTMLBlockType {
	if h.pc == nil {
		h.pc, h.doc = parser.NewContext(), ast.NewDocument()
	}
	n, _ := htmlBlockParser.Open(h.doc, text.NewReader(line), h.pc)
	if b, ok := n.(*ast.HTMLBlock); ok {
		return b.HTMLBlockType
	}
	return 0
}

var htmlBlockParser = parser.NewHTMLBlockParser()

// htmlEnds reports whether line holds the end condition of an HTML block
// of type t, 2 to 5 (goldmark's htmlBlockParser.Continue).
func htmlEnds(t ast.HTMLBlockType, line []byte) bool {
	switch t {
	case ast.HTMLBlockType2:
		return bytes.Contains(line, []byte("-->"))
	case ast.HTMLBlockType3:
		return bytes.Contains(line, []byte("?>"))
	case ast.HTMLBlockType4:
		return bytes.Contains(line, []byte(">"))
	case ast.HTMLBlockType5:
		return bytes.Contains(line, []byte("]]>"))
	}
	return false
}
