package code

import (
	"bytes"
	"path"
	"strings"
)

// pyScanner reads Python source by the lexical rules of the language
// reference (line structure: logical lines, indentation, explicit and
// implicit line joining; comments; string and bytes literals with their
// prefixes, triple quotes and f-string replacement fields) and records
// its lines.
type pyScanner struct {
	src     []byte
	lines   []line
	cur     line
	errs    errList
	stack   []byte
	opens   []int
	contin  bool // the line ends with a backslash: the next one continues it
	logical int  // index of the current logical line's first line, -1 before any
	lastTok byte // ':' when the logical line's last token is a colon
	indents []int
	expect  bool // the last logical line ended with ':'
}

func scanPython(src []byte) ([]line, []synErr) {
	s := &pyScanner{src: src, logical: -1, indents: []int{0}}
	s.lines = make([]line, 0, bytes.Count(src, []byte{'\n'})+1)
	s.run()
	return s.lines, s.errs.list()
}

func (s *pyScanner) run() {
	src := s.src
	n := len(src)
	s.beginLine(0)
	first := true
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n':
			s.endLine(i)
			first = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
			continue
		case c == '#':
			if first {
				s.cur.flags |= comment
			}
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j
			}
			continue
		case c == '\\' && (i+1 < n && src[i+1] == '\n' || i+2 < n && src[i+1] == '\r' && src[i+2] == '\n'):
			s.contin = true
			i++
			continue
		}
		if first {
			first = false
			s.startCode(i)
		}
		switch {
		case c == '"' || c == '\'':
			i = s.str(i, i, false, false)
			s.lastTok = 's'
		case c == '(' || c == '[' || c == '{':
			s.stack = append(s.stack, c)
			s.opens = append(s.opens, i)
			s.lastTok = c
			i++
		case c == ')' || c == ']' || c == '}':
			s.close(i, c)
			s.lastTok = c
			i++
		case isIdentByte(c):
			var str bool
			i, str = s.word(i)
			s.lastTok = 'w'
			if str {
				s.lastTok = 's'
			}
		default:
			s.lastTok = c
			i++
		}
	}
	s.endLine(n)
	if s.cur.start < n {
		s.lines = append(s.lines, s.cur)
	}
	for k := range s.stack {
		s.errs.add(s.opens[k], "'"+string(s.stack[k])+"' was never closed")
	}
	if s.expect {
		s.errs.add(n, "expected an indented block")
	}
}

// beginLine starts the line at offset at.
func (s *pyScanner) beginLine(at int) {
	s.cur = line{start: at, depth: len(s.stack), indent: -1}
}

// endLine ends the line whose break is at i (or the text's end, n).
func (s *pyScanner) endLine(i int) {
	joined := len(s.stack) > 0 || s.contin
	if !joined && s.logical >= 0 { // the logical line ends here
		if s.lastTok == ':' {
			if s.logical == len(s.lines) {
				s.cur.flags |= colon
			} else {
				s.lines[s.logical].flags |= colon
			}
			s.expect = true
		}
		s.logical = -1
	}
	s.contin = false
	if i < len(s.src) {
		s.lines = append(s.lines, s.cur)
		s.beginLine(i + 1)
		if joined {
			s.cur.flags |= inToken // a continuation line: no cut at its start
		}
	}
}

// startCode is the first code token of the current line, at offset i.
func (s *pyScanner) startCode(i int) {
	s.cur.flags |= code
	if s.cur.has(inToken) || len(s.stack) > 0 || s.cur.depth > 0 {
		return // a continuation of a logical line
	}
	col := 0
	for _, c := range s.src[s.cur.start:i] {
		switch c {
		case '\t':
			col = col/8*8 + 8
		case '\f':
			col = 0
		default:
			col++
		}
	}
	s.cur.indent = col
	s.cur.flags |= logical
	s.logical = len(s.lines)
	s.lastTok = 0
	s.cur.kw = pyKeyword(s.src[i:])
	s.indent(i, col)
}

// indent checks the indentation of a logical line starting at offset i
// in column col against the open blocks.
func (s *pyScanner) indent(i, col int) {
	top := s.indents[len(s.indents)-1]
	switch {
	case s.expect:
		s.expect = false
		if col <= top {
			s.errs.add(i, "expected an indented block")
			s.dedent(i, col)
			return
		}
		s.indents = append(s.indents, col)
	case col > top:
		s.errs.add(i, "unexpected indent")
		s.indents = append(s.indents, col)
	case col < top:
		s.dedent(i, col)
	}
}

func (s *pyScanner) dedent(i, col int) {
	for len(s.indents) > 1 && s.indents[len(s.indents)-1] > col {
		s.indents = s.indents[:len(s.indents)-1]
	}
	if s.indents[len(s.indents)-1] != col {
		s.errs.add(i, "unindent does not match any outer indentation level")
		s.indents = append(s.indents, col)
	}
}

func (s *pyScanner) close(i int, c byte) {
	if len(s.stack) == 0 {
		s.errs.add(i, "unmatched '"+string(c)+"'")
		return
	}
	if want := closer(s.stack[len(s.stack)-1]); want != c {
		s.errs.add(i, "closing parenthesis '"+string(c)+"' does not match opening parenthesis '"+string(s.stack[len(s.stack)-1])+"'")
	}
	s.stack, s.opens = s.stack[:len(s.stack)-1], s.opens[:len(s.opens)-1]
}

// word scans the name, keyword or number at i, or the string literal it
// prefixes (r"…", b'…', f"…"), and returns the offset after it and
// whether it was a string.
func (s *pyScanner) word(i int) (int, bool) {
	src := s.src
	j := i + 1
	for j < len(src) && isIdentByte(src[j]) {
		j++
	}
	if j < len(src) && (src[j] == '"' || src[j] == '\'') && j-i <= 2 {
		if raw, f, ok := strPrefix(src[i:j]); ok {
			return s.str(i, j, raw, f), true
		}
	}
	return j, false
}

// strPrefix reports whether p is a string prefix, and whether it makes
// the string raw or formatted (f and t strings have replacement fields).
func strPrefix(p []byte) (raw, f, ok bool) {
	for _, c := range p {
		switch c | 0x20 {
		case 'r':
			if raw {
				return false, false, false
			}
			raw = true
		case 'f', 't':
			if f {
				return false, false, false
			}
			f = true
		case 'b', 'u':
		default:
			return false, false, false
		}
	}
	return raw, f, true
}

// str scans a string literal whose prefix starts at start and quote at
// q; it returns the offset after it.
//
// A backslash escapes the next character even in a raw string, as far as
// where the string ends is concerned, so raw needs no case of its own.
func (s *pyScanner) str(start, q int, _, f bool) int {
	src := s.src
	n := len(src)
	quote := src[q]
	triple := q+2 < n && src[q+1] == quote && src[q+2] == quote
	i := q + 1
	if triple {
		i = q + 3
	}
	for i < n {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 < n && src[i+1] == '\n' {
				s.crossLine(i + 1)
			}
			i += 2
			continue
		case c == '\n':
			if !triple {
				s.errs.add(start, "unterminated string literal")
				return i
			}
			s.crossLine(i)
		case c == quote:
			if !triple {
				return i + 1
			}
			if i+2 < n && src[i+1] == quote && src[i+2] == quote {
				return i + 3
			}
		case f && c == '{':
			if i+1 < n && src[i+1] == '{' {
				i += 2
				continue
			}
			i = s.field(i+1, triple)
			continue
		}
		i++
	}
	if triple {
		s.errs.add(start, "unterminated triple-quoted string literal")
	} else {
		s.errs.add(start, "unterminated string literal")
	}
	return n
}

// field scans an f-string replacement field from i (after its "{") to
// after its "}": an expression, which may hold strings, then an optional
// format spec, which may hold nested fields.
func (s *pyScanner) field(i int, triple bool) int {
	src := s.src
	n := len(src)
	depth := 0
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			if !triple && depth == 0 {
				return i // the string's scan reports it
			}
			s.crossLine(i)
			i++
		case c == '"' || c == '\'':
			i = s.str(i, i, false, false)
		case isIdentByte(c):
			i, _ = s.word(i)
		case c == '(' || c == '[' || c == '{':
			depth++
			i++
		case c == ')' || c == ']':
			depth--
			i++
		case c == '}':
			if depth == 0 {
				return i + 1
			}
			depth--
			i++
		case c == ':' && depth == 0:
			return s.spec(i+1, triple)
		case c == '!' && depth == 0 && i+1 < n && src[i+1] != '=':
			i++ // a conversion: !r, !s, !a
		default:
			i++
		}
	}
	return n
}

// spec scans a format spec from i to after the field's "}".
func (s *pyScanner) spec(i int, triple bool) int {
	src := s.src
	for i < len(src) {
		switch src[i] {
		case '}':
			return i + 1
		case '{':
			i = s.field(i+1, triple)
			continue
		case '\n':
			if !triple {
				return i
			}
			s.crossLine(i)
		}
		i++
	}
	return len(src)
}

// crossLine records the line break at i inside a token.
func (s *pyScanner) crossLine(i int) {
	s.lines = append(s.lines, s.cur)
	s.cur = line{start: i + 1, depth: len(s.stack), indent: -1, flags: inToken | code}
}

// pyKeyword returns the declaration keyword b starts with.
func pyKeyword(b []byte) keyword {
	word := func(w string) bool {
		return len(b) > len(w) && string(b[:len(w)]) == w && !isIdentByte(b[len(w)])
	}
	switch {
	case len(b) > 0 && b[0] == '@':
		return kwDecorator
	case word("def"), word("class"):
		if b[0] == 'c' {
			return kwClass
		}
		return kwDef
	case word("async"):
		rest := bytes.TrimLeft(b[5:], " \t")
		if len(rest) > 3 && string(rest[:3]) == "def" && !isIdentByte(rest[3]) {
			return kwDef
		}
	case word("import"):
		return kwImport
	case word("from"):
		return kwFrom
	}
	return kwNone
}

// pyName returns the symbol path of the Python statement at line l under
// parent: parent.name for def and class.
func pyName(o *lineOutline, l int, parent string, _ bool) (string, bool) {
	ln := o.lines[l]
	if ln.kw != kwDef && ln.kw != kwClass {
		if ln.kw == kwDecorator { // the definition it decorates
			for k := l + 1; k < len(o.lines); k++ {
				if o.lines[k].has(logical) {
					if o.lines[k].kw == kwDecorator {
						continue
					}
					if o.lines[k].kw == kwDef || o.lines[k].kw == kwClass {
						return pyName(o, k, parent, false)
					}
					break
				}
			}
		}
		return parent, false
	}
	// past the indentation: indent is a column (a tab to the next
	// multiple of 8), not a length
	b := bytes.TrimLeft(o.src[ln.start:], " \t\f")
	b = b[bytes.IndexAny(b, " \t")+1:] // after def, class or async
	b = bytes.TrimLeft(b, " \t")
	if ln.kw == kwDef && len(b) > 3 && string(b[:3]) == "def" { // async def
		b = bytes.TrimLeft(b[3:], " \t")
	}
	n := 0
	for n < len(b) && isIdentByte(b[n]) {
		n++
	}
	if n == 0 {
		return parent, false
	}
	return join(parent, string(b[:n])), true
}

// pyModule returns the dotted module name of a file path: its folders
// and stem joined by dots, __init__ dropped, starting after the last
// folder that cannot be a package name ("python3.11", "site-packages").
func pyModule(p string) string {
	p = strings.TrimSuffix(p, path.Ext(p))
	parts := strings.Split(p, "/")
	start := 0
	for i, part := range parts {
		if !isPyIdent(part) {
			start = i + 1
		}
	}
	parts = parts[start:]
	if len(parts) > 0 && parts[len(parts)-1] == "__init__" {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, ".")
}

func isPyIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// pyImports returns the top-level import statements, each a whole
// logical line, joined by line breaks.
func pyImports(src []byte, lines []line) string {
	var b strings.Builder
	for i, l := range lines {
		if !l.has(logical) || l.indent != 0 || l.kw != kwImport && l.kw != kwFrom {
			continue
		}
		end := i + 1
		for end < len(lines) && !lines[end].has(logical) && (lines[end].has(inToken) || lines[end].depth > 0) {
			end++
		}
		stop := len(src)
		if end < len(lines) {
			stop = lines[end].start
		}
		text := src[l.start:stop]
		if k := bytes.IndexByte(text, '#'); k >= 0 && !bytes.ContainsAny(text, "'\"") {
			text = text[:k]
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(string(text), " \t\r\n\\"))
	}
	return b.String()
}
