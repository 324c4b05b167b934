package code

import (
	"bytes"
	"strings"
)

// scanGo reads Go source by the lexical rules of the Go specification
// (comments, interpreted and raw strings, runes, brackets, and which
// tokens end a statement at a line break) and records its lines. It
// reports lexical errors, unbalanced brackets and code outside a
// declaration at the top level.
func scanGo(src []byte) ([]line, []synErr) {
	lines := make([]line, 0, bytes.Count(src, []byte{'\n'})+1)
	var errs errList
	var stack []byte // open brackets
	var opens []int  // their offsets
	cur := line{start: 0}
	last := byte(0) // class of the last code token on the line: 'e' ends, 'o' other
	first := true   // no code token yet on the line
	n := len(src)
	newline := func(i int) { // src[i] == '\n'
		if last == 'e' {
			cur.flags |= ends
		}
		lines = append(lines, cur)
		cur = line{start: i + 1, depth: len(stack)}
		last, first = 0, true
	}
	token := func(i int, class byte) {
		cur.flags |= code
		if first {
			first = false
			cur.indent = i - cur.start
		}
		last = class
	}
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n':
			newline(i)
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < n && src[i+1] == '/':
			if first {
				cur.flags |= comment
			}
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			if first {
				cur.flags |= comment
			}
			j := bytes.Index(src[i+2:], []byte("*/"))
			end := n
			if j < 0 {
				errs.add(i, "comment not terminated")
			} else {
				end = i + 2 + j + 2
			}
			if bytes.IndexByte(src[i:end], '\n') >= 0 {
				if last == 'e' { // a comment holding a line break ends a statement
					cur.flags |= ends
				}
				i = multiLine(src, i, end, &lines, &cur, func(l *line) { l.flags |= inToken | comment; l.depth = len(stack) })
				last, first = 0, true
			} else {
				i = end
			}
		case c == '"' || c == '\'':
			token(i, 'e')
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n && src[j+1] != '\n' {
					j++
				}
				j++
			}
			if j >= n || src[j] != c {
				if c == '"' {
					errs.add(i, "string literal not terminated")
				} else {
					errs.add(i, "rune literal not terminated")
				}
				i = j
			} else {
				i = j + 1
			}
		case c == '`':
			token(i, 'e')
			j := bytes.IndexByte(src[i+1:], '`')
			end := n
			if j < 0 {
				errs.add(i, "raw string literal not terminated")
			} else {
				end = i + 1 + j + 1
			}
			i = multiLine(src, i, end, &lines, &cur, func(l *line) { l.flags |= inToken | code; l.depth = len(stack) })
			last, first = 'e', false
		case c == '(' || c == '[' || c == '{':
			token(i, 'o')
			stack = append(stack, c)
			opens = append(opens, i)
			i++
		case c == ')' || c == ']' || c == '}':
			token(i, 'e')
			if len(stack) == 0 {
				errs.add(i, "unexpected "+string(c))
			} else {
				if want := closer(stack[len(stack)-1]); want != c {
					errs.add(i, "unexpected "+string(c)+", expected "+string(want))
				}
				stack, opens = stack[:len(stack)-1], opens[:len(opens)-1]
			}
			i++
		case isIdentByte(c):
			j := i + 1
			for j < n && isIdentByte(src[j]) {
				j++
			}
			word := src[i:j]
			class := byte('e')
			if c >= 'a' && c <= 'z' {
				if k, ok := goKeyword(word); ok {
					class = 'o'
					if first && len(stack) == 0 {
						cur.kw = k
					}
					switch k {
					case kwBreak, kwReturn:
						class = 'e'
					}
				}
			}
			token(i, class)
			i = j
		case c == '+' || c == '-':
			if i+1 < n && src[i+1] == c {
				token(i, 'e')
				i += 2
			} else {
				token(i, 'o')
				i++
			}
		case c == ',' || c == ';':
			token(i, 'e')
			i++
		default:
			token(i, 'o')
			i++
		}
	}
	if last == 'e' {
		cur.flags |= ends
	}
	if cur.start < n || len(lines) == 0 {
		lines = append(lines, cur)
	}
	for k := range stack {
		errs.add(opens[k], "unclosed "+string(stack[k]))
	}
	checkGoTop(src, lines, &errs)
	return lines, errs.list()
}

// multiLine skips a token from i to end that may span lines, recording
// every line it crosses (mark sets the flags of the lines it starts
// inside), and returns end.
func multiLine(src []byte, i, end int, lines *[]line, cur *line, mark func(*line)) int {
	for {
		j := bytes.IndexByte(src[i:end], '\n')
		if j < 0 {
			return end
		}
		*lines = append(*lines, *cur)
		*cur = line{start: i + j + 1}
		mark(cur)
		i += j + 1
	}
}

// checkGoTop reports a statement at the top level that is not a
// declaration, as go/parser does.
func checkGoTop(src []byte, lines []line, errs *errList) {
	prevEnds := true
	for _, l := range lines {
		if !l.has(code) || l.has(inToken) {
			continue
		}
		if l.depth == 0 && prevEnds && l.kw == kwNone {
			errs.add(l.start+l.indent, "non-declaration statement outside function body")
		}
		prevEnds = l.has(ends)
	}
}

func closer(open byte) byte {
	switch open {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

// isIdentByte reports whether c may be part of an identifier, keyword or
// number (bytes of non-ASCII letters included).
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// goKeyword reports whether w is one of Go's keywords, and its kind:
// the declaration keywords, kwBreak for break, continue and fallthrough,
// kwReturn for return, kwNone for the others.
func goKeyword(w []byte) (keyword, bool) {
	if len(w) < 2 || len(w) > 11 {
		return kwNone, false
	}
	switch string(w) {
	case "package":
		return kwPackage, true
	case "import":
		return kwImport, true
	case "func":
		return kwFunc, true
	case "type":
		return kwType, true
	case "var":
		return kwVar, true
	case "const":
		return kwConst, true
	case "break", "continue", "fallthrough":
		return kwBreak, true
	case "return":
		return kwReturn, true
	case "case", "chan", "default", "defer", "else", "for", "go", "goto", "if", "interface", "map", "range",
		"select", "struct", "switch":
		return kwNone, true
	}
	return kwNone, false
}

// goTok returns the token of Go text b at or after i (an identifier or
// keyword, else one byte of punctuation) and the offset after it; nil at
// the end, or at a comment or literal, past which no header is read.
func goTok(b []byte, i int) ([]byte, int) {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	if i >= len(b) {
		return nil, i
	}
	switch c := b[i]; {
	case isIdentByte(c):
		j := i + 1
		for j < len(b) && isIdentByte(b[j]) {
			j++
		}
		return b[i:j], j
	case c == '\n', c == '"', c == '`', c == '\'', c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
		return nil, i
	}
	return b[i : i+1], i + 1
}

// goName returns the symbol path of the Go statement at line l under
// parent (the package), and whether it declares a name: pkg.F, pkg.T.M
// for a method of T, pkg.T for a type, var or const; inside a group, the
// spec's first name.
func goName(o *lineOutline, l int, parent string, group bool) (string, bool) {
	ln := o.lines[l]
	if !group && (ln.depth != 0 || ln.kw == kwNone || ln.kw == kwPackage || ln.kw == kwImport) {
		return parent, false
	}
	b := o.src[ln.start:o.off(l+1)]
	t, i := goTok(b, 0)
	if group {
		if isName(t) {
			return join(parent, string(t)), true
		}
		return parent, false
	}
	t, i = goTok(b, i)
	switch {
	case t == nil:
	case ln.kw == kwFunc && string(t) == "(": // a method: the receiver's type
		var recv []byte
		for depth := 0; depth >= 0; {
			t, i = goTok(b, i)
			switch {
			case t == nil:
				return parent, false
			case string(t) == "(" || string(t) == "[":
				depth++
			case string(t) == ")" || string(t) == "]":
				depth--
			case depth == 0 && isName(t):
				recv = t
			}
		}
		if name, _ := goTok(b, i); isName(name) && recv != nil {
			return join(join(parent, string(recv)), string(name)), true
		}
	case isName(t):
		return join(parent, string(t)), true
	case ln.kw != kwFunc && string(t) == "(":
		return parent, true // a group: its specs are named
	}
	return parent, false
}

// goPackage returns the package name of the package clause on the first
// line whose first keyword is package.
func goPackage(src []byte, lines []line) string {
	for i, l := range lines {
		if l.kw == kwPackage && l.depth == 0 {
			end := len(src)
			if i+1 < len(lines) {
				end = lines[i+1].start
			}
			_, i := goTok(src[l.start:end], 0)
			if t, _ := goTok(src[l.start:end], i); isName(t) {
				return string(t)
			}
			return ""
		}
		if l.has(code) && !l.has(inToken) {
			return "" // the first code line is not a package clause
		}
	}
	return ""
}

// goImports returns the package clause and import declarations, each
// from its first line to its last code line, joined by line breaks.
func goImports(src []byte, lines []line) string {
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.depth != 0 || !l.has(code) || l.has(inToken) || l.kw != kwPackage && l.kw != kwImport {
			continue
		}
		end := i + 1 // the statement runs to the next line at depth 0 that starts a statement
		for end < len(lines) && !(lines[end].depth == 0 && lines[end].has(code) && !lines[end].has(inToken) && stmtEnded(lines, end)) {
			end++
		}
		last := i
		for k := i; k < end; k++ {
			if lines[k].has(code) {
				last = k
			}
		}
		stop := len(src)
		if last+1 < len(lines) {
			stop = lines[last+1].start
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(string(src[l.start:stop]), " \t\r\n"))
		i = end - 1
	}
	return b.String()
}

// stmtEnded reports whether the last code line before line l ended a
// statement.
func stmtEnded(lines []line, l int) bool {
	for p := l - 1; p >= 0; p-- {
		if lines[p].has(code) {
			return lines[p].has(ends)
		}
	}
	return true
}

func isName(s []byte) bool {
	if len(s) == 0 || s[0] >= '0' && s[0] <= '9' || !isIdentByte(s[0]) {
		return false
	}
	_, kw := goKeyword(s)
	return !kw
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
