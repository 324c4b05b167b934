package code

import (
	"bytes"
	"context"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// Scopes: the kind of the innermost open bracket at a line's start
// (line.scope), which says what a statement starting there may declare.
const (
	scopeTop      byte = 0
	scopeParen    byte = '('
	scopeBracket  byte = '['
	scopeBlock    byte = '{' // a block or a function, namespace or module body
	scopeClass    byte = 'c' // a class or interface body: its members are named
	scopeObject   byte = 'o' // an object literal (or type literal, enum body)
	scopeTemplate byte = '$' // a template literal's ${} substitution
	scopeJSXExpr  byte = 'x' // a JSX child expression container {…}
	scopeJSXAttr  byte = 'a' // a JSX attribute expression {…}
	scopeJSXTag   byte = 't' // inside a JSX tag, among its attributes
	scopeJSX      byte = 'j' // a JSX element's children
	// scopeAngle: TypeScript's type arguments or parameters <…>, opened
	// only where the '<' has a matching '>' (angleEnd).
	scopeAngle byte = '<'
)

// jsFrame is an open bracket, template substitution or JSX element.
type jsFrame struct {
	kind byte
	at   int // offset of its opening
	// ctl: a '(' after if, for, while or with, whose ')' does not end a
	// statement (a body follows); deco: a decorator's call.
	ctl, deco bool
	name      []byte // a JSX element's tag name
	end       int    // a scopeAngle frame's closing '>'
}

// Scanner modes: what the bytes at the cursor are.
const (
	modeCode = iota
	modeTemplate
	modeJSXTag
	modeJSXChildren
)

// jsScanner reads JavaScript, TypeScript and TSX by their lexical grammar
// (comments, strings, template literals with nested substitutions,
// regular expression literals told from division by the token before,
// numbers, identifiers; JSX elements, attributes and text) and records
// the lines with the brackets open at each line's start, whether a line
// may end a statement (the tokens after which a line break ends one, as
// automatic semicolon insertion has it) and whether its first token
// continues the line before.
type jsScanner struct {
	src   []byte
	jsx   bool
	ts    bool // TypeScript or TSX: '<' may open type arguments
	lines []line
	cur   line
	errs  errList
	stack []jsFrame
	mode  int

	first bool // no token yet on the line
	last  byte // the line's last token: 'e' may end a statement, 'o' may not
	// prev is the last token: 'v' a value (a name, a literal), ')', ']',
	// '}', ';', ',', '(', '[', '{' themselves, 'o' an operator, 'k' a
	// keyword a statement or body follows (else, if (…), …), 'r' one an
	// expression follows (return, typeof, default, …), 'A' "=>"; 0 none.
	prev    byte
	regexOK bool // a '/' here starts a regular expression (and '<' a JSX element)
	dot     bool // the last token was '.' or '?.': a word here is a property name
	// bodyAt is the depth of a class, interface or enum header waiting
	// for its body's '{', or -1; bodyKind the body's scope.
	bodyAt   int
	bodyKind byte
	// ctlNext: the next '(' follows if, for, while or with.
	ctlNext bool
	// decoAt is the depth of a decorator being read, -1 outside one;
	// decoEnd says the last token completed it (the line does not end a
	// statement: the declaration follows).
	decoAt  int
	decoEnd bool
	// fn: the last token was function or async: a '<' here opens type
	// parameters, not a JSX element.
	fn bool
	// caseAt is the depth of a case clause whose ':' is to come, or -1;
	// label: the line's only token so far is a name (a label, when ':'
	// follows). After either ':' a statement follows: '{' is a block.
	caseAt int
	label  bool
	// subst is the number of template substitutions ${…} open: a line
	// starting inside one starts inside its template literal.
	subst int
}

// scanJS reads JavaScript, TypeScript or TSX source (JSX elements read
// when jsx is set, type arguments when ts is) and returns its lines and
// lexical errors: unterminated strings, template literals, regular
// expressions and comments, unbalanced brackets, unclosed JSX elements.
func scanJS(src []byte, jsx, ts bool) ([]line, []synErr) {
	s := &jsScanner{src: src, jsx: jsx, ts: ts, regexOK: true, first: true, bodyAt: -1, decoAt: -1, caseAt: -1}
	s.lines = make([]line, 0, bytes.Count(src, []byte{'\n'})+1)
	s.run()
	return s.lines, s.errs.list()
}

// depth is the number of open frames.
func (s *jsScanner) depth() int { return len(s.stack) }

func (s *jsScanner) top() byte {
	if len(s.stack) == 0 {
		return scopeTop
	}
	return s.stack[len(s.stack)-1].kind
}

// newline ends the line whose break is at i.
func (s *jsScanner) newline(i int) {
	if s.last == 'e' && !s.decoEnd {
		s.cur.flags |= ends
	}
	if s.cur.kw == kwDecorator && !s.decoEnd && !(s.decoAt >= 0 && s.decoAt < len(s.stack) && s.stack[s.decoAt].deco) {
		s.cur.kw = kwNone // not a decorator alone (nor one whose call goes on): what it decorates starts here too
	}
	s.lines = append(s.lines, s.cur)
	s.cur = line{start: i + 1, depth: s.depth(), scope: s.top()}
	if s.subst > 0 {
		s.cur.flags |= inToken // no cut inside a template literal
	}
	s.last, s.first = 0, true
}

// crossLine records the line break at i inside a token (a string, a
// template literal's text, a comment): the next line starts inside it.
func (s *jsScanner) crossLine(i int, flags lineFlag) {
	s.lines = append(s.lines, s.cur)
	s.cur = line{start: i + 1, depth: s.depth(), scope: s.top(), flags: flags}
}

// token records a code token at i of class c ('e' or 'o') and what it
// was (prev).
func (s *jsScanner) token(i int, c, prev byte) {
	s.cur.flags |= code
	if s.first {
		s.first = false
		s.cur.indent = i - s.cur.start
	}
	s.last, s.prev = c, prev
	s.decoEnd = false
	s.dot = false
	s.fn = false
	s.label = false
}

// startsLine marks the line's first token as continuing the line before
// when cont says it cannot start a statement after it (no automatic
// semicolon: an operator, '.', or, after a value, '(', '[', '`' or '{').
// After ';', ',' or an opening bracket a statement or element starts
// whatever comes.
func (s *jsScanner) startsLine(cont bool) {
	if s.first && cont {
		switch s.prev {
		case 0, ';', ',', '(', '[', '{':
		default:
			s.cur.flags |= continues
		}
	}
}

// afterValue reports whether the last token was a value ('(', '[' or
// '`' after it call, index or tag it).
func (s *jsScanner) afterValue() bool { return s.prev == 'v' || s.prev == ')' || s.prev == ']' }

func (s *jsScanner) push(f jsFrame) { s.stack = append(s.stack, f) }

func (s *jsScanner) run() {
	src := s.src
	n := len(src)
	s.cur = line{start: 0}
	i := 0
	if bytes.HasPrefix(src, []byte("#!")) { // a hashbang line is a comment
		s.cur.flags |= comment
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			i = j
		} else {
			i = n
		}
	}
	for i < n {
		switch s.mode {
		case modeTemplate:
			i = s.template(i)
		case modeJSXTag:
			i = s.jsxTag(i)
		case modeJSXChildren:
			i = s.jsxChildren(i)
		default:
			i = s.code(i)
		}
	}
	if s.last == 'e' && !s.decoEnd {
		s.cur.flags |= ends
	}
	if s.cur.start < n || len(s.lines) == 0 {
		s.lines = append(s.lines, s.cur)
	}
	for _, f := range s.stack {
		switch f.kind {
		case scopeJSX, scopeJSXTag:
			s.errs.add(f.at, "unclosed <"+string(f.name)+">")
		case scopeTemplate:
			s.errs.add(f.at, "unclosed ${")
		case scopeAngle: // never left open: its '>' was found before it was opened
		default:
			s.errs.add(f.at, "unclosed "+string(opener(f.kind)))
		}
	}
}

// opener is the bracket that opens a frame of kind k.
func opener(k byte) byte {
	switch k {
	case scopeParen:
		return '('
	case scopeBracket:
		return '['
	}
	return '{'
}

// resume sets the mode by the frame now on top (after a frame closed).
func (s *jsScanner) resume() {
	switch s.top() {
	case scopeJSX:
		s.mode = modeJSXChildren
	case scopeJSXTag:
		s.mode = modeJSXTag
	default:
		s.mode = modeCode
	}
}

// code reads one token of code (or the whitespace and comments before
// one) at i and returns the offset after it.
func (s *jsScanner) code(i int) int {
	src := s.src
	n := len(src)
	c := src[i]
	switch {
	case c == '\n':
		s.newline(i)
		return i + 1
	case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
		return i + 1
	case c == '/' && i+1 < n && src[i+1] == '/':
		if s.first {
			s.cur.flags |= comment
		}
		if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
			return i + j
		}
		return n
	case c == '/' && i+1 < n && src[i+1] == '*':
		if s.first {
			s.cur.flags |= comment
		}
		end := n
		if j := bytes.Index(src[i+2:], []byte("*/")); j >= 0 {
			end = i + 2 + j + 2
		} else {
			s.errs.add(i, "comment not terminated")
		}
		crossed := false
		for k := i; ; {
			j := bytes.IndexByte(src[k:end], '\n')
			if j < 0 {
				break
			}
			if s.last == 'e' && !s.decoEnd { // a line break in a comment ends a statement as one outside
				s.cur.flags |= ends
			}
			s.crossLine(k+j, inToken|comment)
			crossed = true
			k += j + 1
		}
		if crossed {
			s.last, s.first = 0, true
		}
		return end
	case c == '"' || c == '\'':
		s.startsLine(false)
		s.token(i, 'e', 'v')
		s.regexOK = false
		return s.str(i, c)
	case c == '`':
		s.startsLine(s.afterValue())
		s.token(i, 'e', 'v')
		s.regexOK = false
		s.mode = modeTemplate
		return i + 1
	case c == '/':
		if s.regexOK && !s.dot {
			s.startsLine(false)
			s.token(i, 'e', 'v')
			s.regexOK = false
			return s.regex(i)
		}
		s.startsLine(true)
		s.token(i, 'o', 'o')
		s.regexOK = true
		if i+1 < n && src[i+1] == '=' {
			return i + 2
		}
		return i + 1
	case c == '<' && s.jsx && s.regexOK && !s.dot && !s.fn && s.top() != scopeAngle && i+1 < n && (src[i+1] == '>' || isJSXNameStart(src[i+1])):
		if j, ok := s.jsxOpen(i); ok {
			return j
		}
		s.startsLine(true)
		s.token(i, 'o', 'o')
		s.regexOK = true
		return i + 1
	case c == '<' && s.ts && !s.dot:
		if end := angleEnd(src, i, !s.regexOK); end > 0 { // type arguments or parameters: a bracket
			s.startsLine(true)
			s.token(i, 'o', 'o')
			s.regexOK = true
			s.push(jsFrame{kind: scopeAngle, at: i, end: end})
			return i + 1
		}
	case c == '>' && s.top() == scopeAngle && s.stack[len(s.stack)-1].end == i:
		s.stack = s.stack[:len(s.stack)-1]
		s.startsLine(true)
		s.token(i, 'e', 'v') // Map<K, V>: a value's end, as ')' is
		s.regexOK = false
		return i + 1
	case c == '(' || c == '[' || c == '{':
		return s.open(i, c)
	case c == ')' || c == ']' || c == '}':
		return s.close(i, c)
	case c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
		s.startsLine(false)
		s.token(i, 'e', 'v')
		s.regexOK = false
		return number(src, i)
	case c == '.':
		spread := i+2 < n && src[i+1] == '.' && src[i+2] == '.'
		s.startsLine(!spread)
		s.token(i, 'o', 'o')
		if spread {
			s.regexOK = true
			return i + 3
		}
		s.dot = true
		s.regexOK = false
		return i + 1
	case c >= '0' && c <= '9':
		s.startsLine(false)
		s.token(i, 'e', 'v')
		s.regexOK = false
		return number(src, i)
	case isIdentByte(c) || c == '$' || c == '#' || c == '\\':
		return s.word(i)
	case c == '@':
		return s.decorator(i)
	case c == ';':
		s.token(i, 'e', ';')
		s.regexOK = true
		s.bodyAt = -1
		return i + 1
	case c == ',':
		cl := byte('o')
		switch s.top() {
		case scopeParen, scopeBracket, scopeObject:
			cl = 'e' // a list's element ends at a line break after ','
		}
		s.startsLine(true)
		s.token(i, cl, ',')
		s.regexOK = true
		return i + 1
	case (c == '+' || c == '-') && i+1 < n && src[i+1] == c:
		s.startsLine(true)
		s.token(i, 'e', 'v')
		s.regexOK = false
		return i + 2
	case c == '?' && i+1 < n && src[i+1] == '.' && !(i+2 < n && src[i+2] >= '0' && src[i+2] <= '9'):
		s.startsLine(true)
		s.token(i, 'o', 'o')
		s.dot = true
		s.regexOK = false
		return i + 2
	case c == '!' && s.afterValue() && i > 0 && !isSpaceByte(src[i-1]) && !(i+1 < n && src[i+1] == '='):
		s.token(i, 'e', 'v') // TypeScript's non-null assertion: x!, f()!, a[i]!
		s.regexOK = false
		return i + 1
	case c == '!' || c == '~':
		// unary at a statement's start; "!=" continues
		s.startsLine(i+1 < n && src[i+1] == '=')
		s.token(i, 'o', 'o')
		s.regexOK = true
		return i + 1
	case c == ':' && !s.first && (s.label || s.caseAt == s.depth()):
		// a label's or a case clause's ':' (on their line): a statement follows
		s.caseAt = -1
		s.token(i, 'o', 'k')
		s.regexOK = true
		return i + 1
	case c == '*' && s.top() == scopeClass && s.first:
		s.token(i, 'o', 'o') // a generator method
		s.regexOK = true
		return i + 1
	}
	// Any other punctuation is an operator: it continues the line before.
	s.startsLine(true)
	if c == '=' && i+1 < n && src[i+1] == '>' { // =>: a body follows, never a statement end
		s.token(i, 'o', 'A')
		s.regexOK = true
		return i + 2
	}
	s.token(i, 'o', 'o')
	s.regexOK = true
	return i + 1
}

// open reads the bracket c at i.
func (s *jsScanner) open(i int, c byte) int {
	f := jsFrame{kind: c, at: i}
	switch c {
	case '(':
		s.startsLine(s.afterValue())
		f.ctl = s.ctlNext
		f.deco = s.decoEnd && s.decoAt == s.depth()
	case '[':
		s.startsLine(s.afterValue() && s.top() != scopeClass)
	case '{':
		s.startsLine(s.afterValue())
		switch s.prev {
		case 'o', '(', ',', '[', 'r': // after an operator, in a list, after return: an object literal
			f.kind = scopeObject
		}
		if s.bodyAt == s.depth() {
			f.kind = s.bodyKind
			s.bodyAt = -1
		}
	}
	s.ctlNext = false
	s.token(i, 'o', c)
	s.regexOK = true
	s.push(f)
	return i + 1
}

// close reads the closing bracket c at i.
func (s *jsScanner) close(i int, c byte) int {
	for len(s.stack) > 0 && s.top() == scopeAngle { // a '<' read as type arguments whose '>' was not met
		s.stack = s.stack[:len(s.stack)-1]
	}
	if len(s.stack) == 0 {
		s.errs.add(i, "unexpected "+string(c))
		s.token(i, 'e', c)
		s.regexOK = c == '}'
		return i + 1
	}
	f := s.stack[len(s.stack)-1]
	want := byte(')')
	switch f.kind {
	case scopeBracket:
		want = ']'
	case scopeParen:
	default:
		want = '}'
	}
	if c != want {
		s.errs.add(i, "unexpected "+string(c)+", expected "+string(want))
	}
	s.stack = s.stack[:len(s.stack)-1]
	if f.kind == scopeTemplate {
		s.subst--
	}
	switch {
	case f.kind == scopeTemplate && c == '}':
		s.token(i, 'e', 'v')
		s.mode = modeTemplate
		return i + 1
	case f.kind == scopeJSXExpr || f.kind == scopeJSXAttr:
		s.token(i, 'e', 'v')
		s.resume()
		return i + 1
	}
	cl, prev := byte('e'), c
	if f.ctl {
		cl, prev = 'o', 'k' // if (…), for (…), while (…): a body follows
	}
	s.token(i, cl, prev)
	s.regexOK = c == '}' && f.kind != scopeObject || f.ctl // after a block a regular expression may start a statement, not after an object
	if f.deco {
		s.decoEnd = true
	}
	s.resume()
	return i + 1
}

// maxAngle bounds how far angleEnd looks for the '>' matching a '<', so
// that a document of comparisons is read in linear time.
const maxAngle = 4096

// angleEnd returns the offset of the '>' that closes TypeScript type
// arguments or parameters opened by the '<' at i, or -1 when what
// follows cannot be a type's (an operator a type has not, such as "&&",
// "+" or ";" outside braces, a template literal, a bracket closed
// before, nothing within maxAngle bytes). After a value (expr) the '<'
// may be a comparison: as TypeScript's parser has it, it opens type
// arguments only when the token after the '>' cannot start an
// expression (a name, a literal, a unary operator) on the same line.
func angleEnd(src []byte, i int, expr bool) int {
	end := min(len(src), i+maxAngle)
	depth := 0
	var br []byte // the brackets open inside
	for j := i; j < end; j++ {
		switch c := src[j]; c {
		case '<':
			depth++
		case '>':
			if depth--; depth == 0 {
				if len(br) > 0 {
					return -1
				}
				if expr && !typeArgsEnd(src, j+1) {
					return -1
				}
				return j
			}
		case '(', '[', '{':
			br = append(br, c)
		case ')', ']', '}':
			if len(br) == 0 || br[len(br)-1] != opener(closerKind(c)) {
				return -1
			}
			br = br[:len(br)-1]
		case '"', '\'':
			k := j + 1
			for k < end && src[k] != c && src[k] != '\n' {
				if src[k] == '\\' {
					k++
				}
				k++
			}
			if k >= end || src[k] != c {
				return -1
			}
			j = k
		case '/':
			switch {
			case j+1 < end && src[j+1] == '/':
				k := bytes.IndexByte(src[j:end], '\n')
				if k < 0 {
					return -1
				}
				j += k
			case j+1 < end && src[j+1] == '*':
				k := bytes.Index(src[j+2:end], []byte("*/"))
				if k < 0 {
					return -1
				}
				j += 2 + k + 1
			default:
				return -1
			}
		case '=':
			if j+1 < end && src[j+1] == '=' {
				return -1
			}
			if j+1 < end && src[j+1] == '>' { // a function type's "=>"
				j++
			}
		case '&', '|':
			if j+1 < end && src[j+1] == c {
				return -1
			}
		case ';':
			if len(br) == 0 || br[len(br)-1] != '{' {
				return -1
			}
		case '-':
			if j+1 >= end || src[j+1] < '0' || src[j+1] > '9' { // only a negative number's sign
				return -1
			}
		case '`', '+', '*', '%', '^', '!', '~', '@', '#':
			return -1
		}
	}
	return -1
}

// closerKind returns the frame kind a closing bracket c closes.
func closerKind(c byte) byte {
	switch c {
	case ')':
		return scopeParen
	case ']':
		return scopeBracket
	}
	return scopeBlock
}

// typeArgsEnd reports whether what follows a '>' at i lets it close type
// arguments after a value: a line break, the end, punctuation that
// continues an expression or a declaration ("(", ")", ",", "=", "{",
// ".", "|", …), or extends, implements, as, satisfies or is; not a
// name, a literal or a unary operator, which would make the '<' and
// '>' comparisons.
func typeArgsEnd(src []byte, i int) bool {
	i = skipSpace(src, i)
	if i >= len(src) {
		return true
	}
	switch c := src[i]; {
	case c == '\n' || c == '\r':
		return true
	case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
		return true
	case isIdentByte(c) || c == '$':
		j := i
		for j < len(src) && (isIdentByte(src[j]) || src[j] == '$') {
			j++
		}
		switch string(src[i:j]) {
		case "extends", "implements", "as", "satisfies", "is":
			return true
		}
		return false
	case c == '"' || c == '\'' || c == '+' || c == '-' || c == '!' || c == '~' || c == '<':
		return false
	case c == '=':
		return !(i+1 < len(src) && src[i+1] == '=')
	}
	return true
}

// str reads a string literal quoted by q from i; a line break ends it,
// unless escaped.
func (s *jsScanner) str(i int, q byte) int {
	src := s.src
	n := len(src)
	j := i + 1
	for j < n {
		switch src[j] {
		case q:
			return j + 1
		case '\\':
			if j+1 < n && src[j+1] == '\n' {
				s.crossLine(j+1, inToken|code)
				s.first = false
			} else if j+2 < n && src[j+1] == '\r' && src[j+2] == '\n' {
				s.crossLine(j+2, inToken|code)
				s.first = false
				j++
			}
			j += 2
			continue
		case '\n':
			s.errs.add(i, "unterminated string literal")
			return j
		}
		j++
	}
	s.errs.add(i, "unterminated string literal")
	return n
}

// template reads a template literal's text from i, up to its closing
// '`' or a "${" substitution.
func (s *jsScanner) template(i int) int {
	src := s.src
	n := len(src)
	for j := i; j < n; j++ {
		switch src[j] {
		case '`':
			s.mode = modeCode
			s.last, s.prev = 'e', 'v'
			s.regexOK = false
			return j + 1
		case '\\':
			if j+1 < n && src[j+1] == '\n' {
				s.crossLine(j+1, inToken|code)
				s.first = false
			}
			j++
		case '$':
			if j+1 < n && src[j+1] == '{' {
				s.push(jsFrame{kind: scopeTemplate, at: j})
				s.subst++
				s.mode = modeCode
				s.regexOK = true
				s.prev = 'o'
				return j + 2
			}
		case '\n':
			s.crossLine(j, inToken|code)
			s.first = false
		}
	}
	s.errs.add(i, "unterminated template literal")
	s.mode = modeCode
	return n
}

// regex reads a regular expression literal from i: up to an unescaped
// '/' outside a character class, then its flags. A line break ends it.
func (s *jsScanner) regex(i int) int {
	src := s.src
	n := len(src)
	class := false
	for j := i + 1; j < n; j++ {
		switch src[j] {
		case '\\':
			if j+1 < n && src[j+1] != '\n' {
				j++
			}
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				j++
				for j < n && isIdentByte(src[j]) {
					j++
				}
				return j
			}
		case '\n':
			s.errs.add(i, "unterminated regular expression")
			return j
		}
	}
	s.errs.add(i, "unterminated regular expression")
	return n
}

// number returns the offset after the number at i (digits, letters,
// '_', '.', and an exponent's sign).
func number(src []byte, i int) int {
	j := i + 1
	hex := j < len(src) && (src[j] == 'x' || src[j] == 'X')
	for j < len(src) {
		c := src[j]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '.':
		case (c == '+' || c == '-') && !hex && (src[j-1] == 'e' || src[j-1] == 'E'):
		default:
			return j
		}
		j++
	}
	return j
}

// jsKeyword classes: how a keyword ends a line and whether a regular
// expression may follow it.
const (
	jkNone    = iota // not a keyword: a name, which may end a statement
	jkEnds           // may end a statement (return, break, this, …)
	jkOperand        // an expression follows (typeof, new, in, …): no statement end, '/' is a regex
	jkCtl            // if, for, while, with: a '(' and a body follow
	jkCont           // continues the line before when first on a line (else, catch, …)
	jkOther          // any other keyword
)

// jsKeywordClass returns the class of the word w.
func jsKeywordClass(w []byte) int {
	if len(w) < 2 || len(w) > 10 || w[0] < 'a' || w[0] > 'z' {
		return jkNone
	}
	switch string(w) {
	case "return", "break", "continue", "this", "super", "null", "true", "false", "yield", "debugger":
		return jkEnds
	case "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "await":
		return jkOperand
	case "if", "for", "while", "with":
		return jkCtl
	case "else", "catch", "finally", "extends", "implements", "as", "satisfies":
		return jkCont
	case "class", "function", "const", "let", "var", "export", "import", "default", "switch", "try",
		"interface", "enum", "async":
		return jkOther
	}
	return jkNone
}

// word reads an identifier, keyword or private name at i.
func (s *jsScanner) word(i int) int {
	src := s.src
	j := i + 1
	for j < len(src) && (isIdentByte(src[j]) || src[j] == '$' || src[j] == '\\') {
		j++
	}
	w := src[i:j]
	if s.dot { // a property name
		s.startsLine(false)
		s.token(i, 'e', 'v')
		s.regexOK = false
		return j
	}
	k := jsKeywordClass(w)
	if s.ts && k == jkOperand && string(w) == "void" && voidType(src, j) {
		k = jkNone // the type void (f(): void), not the operator
	}
	// else, catch, as, … continue the line before, but not as a class
	// member's or an object's method's name (satisfies (x) {…}).
	s.startsLine(k == jkCont && s.top() != scopeClass && s.top() != scopeObject)
	if s.first && s.depth() == 0 && string(w) == "import" && !followedBy(src, j, '(', '.') {
		s.cur.kw = kwImport
	}
	cl, prev := byte('e'), byte('v')
	switch k {
	case jkOperand, jkCont, jkOther, jkCtl:
		cl, prev = 'o', 'k'
	}
	switch string(w) {
	case "return", "yield", "default", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "await":
		if k != jkNone {
			prev = 'r' // an expression follows: '{' opens an object literal
		}
	}
	first := s.first
	s.token(i, cl, prev)
	s.label = first && k == jkNone && (s.top() == scopeTop || s.top() == scopeBlock)
	if s.top() == scopeBlock && (string(w) == "case" || string(w) == "default" && first && followedBy(src, j, ':')) {
		s.caseAt = s.depth()
	}
	s.regexOK = k == jkOperand || k == jkCont || k == jkOther || k == jkCtl || string(w) == "return" || string(w) == "yield"
	s.ctlNext = k == jkCtl
	s.fn = string(w) == "function" || string(w) == "async"
	switch string(w) {
	case "class", "interface", "enum":
		if !followedBy(src, j, ':', '=', ',', ')', ';') {
			s.bodyAt, s.bodyKind = s.depth(), scopeClass
			if w[0] == 'e' {
				s.bodyKind = scopeObject // its members are no declarations
			}
		}
	}
	return j
}

// voidType reports whether the word void ending at i is TypeScript's
// type rather than the operator, which has an operand after it on its
// line: the line, or the text, ends after it, or punctuation follows
// that ends or continues a type ("{", ";", ",", ")", "]", "}", "|",
// "&", ">", "=").
func voidType(src []byte, i int) bool {
	i = skipSpace(src, i)
	return i >= len(src) || bytes.IndexByte([]byte("\r\n{;,)]}|&>="), src[i]) >= 0 ||
		src[i] == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*')
}

// followedBy reports whether the first byte after i that is not a space
// or tab is one of cs.
func followedBy(src []byte, i int, cs ...byte) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i < len(src) && bytes.IndexByte(cs, src[i]) >= 0
}

// decorator reads '@' and the decorator's name at i.
func (s *jsScanner) decorator(i int) int {
	src := s.src
	if i+1 >= len(src) || !(isIdentByte(src[i+1]) || src[i+1] == '$') {
		s.startsLine(true)
		s.token(i, 'o', 'o')
		s.regexOK = true
		return i + 1
	}
	if s.first {
		s.cur.kw = kwDecorator
	}
	s.token(i, 'o', 'o')
	j := i + 1
	for j < len(src) && (isIdentByte(src[j]) || src[j] == '$' || src[j] == '.') {
		j++
	}
	s.decoAt, s.decoEnd = s.depth(), true
	s.last, s.prev = 'e', 'v'
	s.regexOK = false
	return j
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isJSXNameStart reports whether c may start a JSX tag name.
func isJSXNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

func isJSXNameByte(c byte) bool {
	return isIdentByte(c) || c == '$' || c == '.' || c == ':' || c == '-'
}

// jsxOpen reads the start of a JSX element at i ('<' then a name or
// '>'): it pushes the element's tag and returns the offset after its
// name, or false when what follows is a TSX type parameter list
// ("<T,>" or "<T extends …>") rather than an element.
func (s *jsScanner) jsxOpen(i int) (int, bool) {
	src := s.src
	j := i + 1
	for j < len(src) && isJSXNameByte(src[j]) {
		j++
	}
	name := src[i+1 : j]
	if k := skipSpace(src, j); k < len(src) && src[k] == ',' || bytes.HasPrefix(src[k:], []byte("extends ")) {
		return 0, false
	}
	s.startsLine(false)
	s.token(i, 'e', 'v')
	if len(name) == 0 { // a fragment: <>
		s.push(jsFrame{kind: scopeJSX, at: i})
		s.mode = modeJSXChildren
		return j + 1, true
	}
	s.push(jsFrame{kind: scopeJSXTag, at: i, name: name})
	s.mode = modeJSXTag
	if j < len(src) && src[j] == '<' { // type arguments: <Select<Option> …>
		for d := 0; j < len(src); j++ {
			switch src[j] {
			case '<':
				d++
			case '>':
				d--
			case '\n':
				s.newline(j)
				continue
			}
			if d == 0 {
				j++
				break
			}
		}
	}
	return j, true
}

// skipSpace returns the offset of the first byte at or after i that is
// not a space or tab.
func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// jsxTag reads inside a JSX tag at i: attributes, their string values
// and {…} expressions, up to '>' (children follow) or "/>".
func (s *jsScanner) jsxTag(i int) int {
	src := s.src
	n := len(src)
	c := src[i]
	switch {
	case c == '\n':
		s.newline(i)
		return i + 1
	case c == ' ' || c == '\t' || c == '\r' || c == '\f':
		return i + 1
	case c == '/' && i+1 < n && src[i+1] == '>':
		s.stack = s.stack[:len(s.stack)-1]
		s.elementDone(i)
		return i + 2
	case c == '>':
		s.stack[len(s.stack)-1].kind = scopeJSX
		s.token(i, 'e', 'v')
		s.mode = modeJSXChildren
		return i + 1
	case c == '"' || c == '\'':
		s.token(i, 'e', 'v')
		j := i + 1
		for j < n && src[j] != c {
			if src[j] == '\n' {
				s.crossLine(j, inToken|code)
				s.first = false
			}
			j++
		}
		if j >= n {
			s.errs.add(i, "unterminated string literal")
			return n
		}
		return j + 1
	case c == '{':
		s.token(i, 'o', '{')
		s.push(jsFrame{kind: scopeJSXAttr, at: i})
		s.mode = modeCode
		s.regexOK = true
		return i + 1
	case c == '/' && i+1 < n && (src[i+1] == '/' || src[i+1] == '*'):
		return s.code(i) // a comment among the attributes
	}
	s.token(i, 'e', 'v')
	return i + 1
}

// jsxChildren reads a JSX element's children at i: text, {…}
// expressions, child elements and the closing tag.
func (s *jsScanner) jsxChildren(i int) int {
	src := s.src
	n := len(src)
	switch c := src[i]; {
	case c == '\n':
		s.newline(i)
		return i + 1
	case c == ' ' || c == '\t' || c == '\r' || c == '\f':
		return i + 1
	case c == '{':
		s.token(i, 'o', '{')
		s.push(jsFrame{kind: scopeJSXExpr, at: i})
		s.mode = modeCode
		s.regexOK = true
		return i + 1
	case c == '<' && i+1 < n && src[i+1] == '/':
		j := i + 2
		for j < n && isJSXNameByte(src[j]) {
			j++
		}
		name := src[i+2 : j]
		j = skipSpace(src, j)
		if j < n && src[j] == '>' {
			j++
		} else {
			s.errs.add(i, "unterminated closing tag")
		}
		f := s.stack[len(s.stack)-1]
		if !bytes.Equal(name, f.name) {
			s.errs.add(i, "unexpected </"+string(name)+">, expected </"+string(f.name)+">")
		}
		s.stack = s.stack[:len(s.stack)-1]
		s.elementDone(i)
		return j
	case c == '<' && i+1 < n && (src[i+1] == '>' || isJSXNameStart(src[i+1])):
		s.regexOK = true
		j, _ := s.jsxOpen(i)
		if j == 0 { // not a type parameter list among children: text
			s.token(i, 'e', 'v')
			return i + 1
		}
		return j
	}
	// Text, up to a line break, '{' or '<'.
	s.token(i, 'e', 'v')
	j := i + 1
	for j < n && src[j] != '\n' && src[j] != '{' && src[j] != '<' {
		j++
	}
	return j
}

// elementDone ends a JSX element whose last token is at i: the children
// of the element around it go on, or code does.
func (s *jsScanner) elementDone(i int) {
	s.token(i, 'e', 'v')
	s.regexOK = false
	s.resume()
}

// parseJS returns the parse of JavaScript, TypeScript or TSX (JSX read
// in JavaScript and TSX).
func parseJS(lang string) func(context.Context, []byte, string, func(int, int) bool, *poll.Poller) (outline, error) {
	jsx, ts := lang != "typescript", lang != "javascript"
	return func(_ context.Context, src []byte, module string, fits func(int, int) bool, pl *poll.Poller) (outline, error) {
		lines, errs := scanJS(src, jsx, ts)
		pl.Add(len(src))
		o := &lineOutline{src: src, lines: lines, fits: fits, name: jsName, pl: pl, js: true}
		o.split(0, len(lines), "", true, false) // paths are Class.method, without the module
		for i := range o.cuts {
			if o.cuts[i].path == "" { // outside any declaration: the module
				o.cuts[i].path = module
			}
		}
		return outline{cuts: atZero(o.cuts, module), errs: errs, imports: goImports(src, lines)}, nil
	}
}

// jsTok returns the token of JavaScript text b at or after i on its line
// (a name, a quoted string, a bracketed computed name, else one byte of
// punctuation) and the offset after it; nil at the line's end or at a
// comment.
func jsTok(b []byte, i int) ([]byte, int) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return nil, i
	}
	switch c := b[i]; {
	case isIdentByte(c) || c == '$' || c == '#':
		j := i + 1
		for j < len(b) && (isIdentByte(b[j]) || b[j] == '$') {
			j++
		}
		return b[i:j], j
	case c == '"' || c == '\'':
		j := bytes.IndexByte(b[i+1:], c)
		if j < 0 {
			return nil, i
		}
		return b[i : i+j+2], i + j + 2
	case c == '[':
		d := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '[':
				d++
			case ']':
				d--
				if d == 0 {
					return b[i : j+1], j + 1
				}
			case '\n':
				return nil, i
			}
		}
		return nil, i
	case c == '\n', c == '\r', c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
		return nil, i
	}
	return b[i : i+1], i + 1
}

// jsName returns the symbol path of the statement at line l under
// parent, and whether it names one: a class or interface member's name;
// an object literal's method; a function, class, interface, type alias,
// enum or namespace declared at the top or in a block (exported or not);
// a variable declared at the top.
func jsName(o *lineOutline, l int, parent string, _ bool) (string, bool) {
	ln := o.lines[l]
	b := o.src[ln.start:o.off(l+1)]
	t, i := jsTok(b, 0)
	for string(t) == "@" { // decorators: the name follows them, here or on a later line
		t, i = jsTok(b, i)
		for jsIsWord(t) || string(t) == "." {
			t, i = jsTok(b, i)
		}
		if string(t) == "(" {
			for d := 1; d > 0; {
				if t, i = jsTok(b, i); t == nil {
					break
				}
				switch string(t) {
				case "(":
					d++
				case ")":
					d--
				}
			}
			t, i = jsTok(b, i)
		}
		if t == nil { // the decorated statement is on a later line
			for k := l + 1; k < len(o.lines) && k < l+64; k++ {
				if lk := o.lines[k]; lk.depth == ln.depth && lk.has(code) && !lk.has(inToken) && lk.kw != kwDecorator {
					return jsName(o, k, parent, false)
				}
			}
			return parent, false
		}
	}
	name := func(n []byte) (string, bool) {
		if len(n) == 0 {
			return parent, false
		}
		return join(parent, string(n)), true
	}
	switch ln.scope {
	case scopeClass:
		return name(memberName(b, t, i, true))
	case scopeObject:
		return name(memberName(b, t, i, false))
	case scopeTop, scopeBlock:
	default:
		return parent, false // an expression's function or class is no declaration
	}
	for { // modifiers
		switch string(t) {
		case "export", "default", "declare", "abstract", "async":
			t, i = jsTok(b, i)
			continue
		}
		break
	}
	n, j := jsTok(b, i)
	switch string(t) {
	case "function":
		if string(n) == "*" {
			n, _ = jsTok(b, j)
		}
		if jsIsName(n) {
			return name(n)
		}
	case "class", "interface", "enum":
		if jsIsName(n) && string(n) != "extends" && string(n) != "implements" {
			return name(n)
		}
	case "type": // a type alias: type Name = or type Name<
		if nx, _ := jsTok(b, j); jsIsName(n) && (string(nx) == "=" || string(nx) == "<") {
			return name(n)
		}
	case "namespace", "module":
		if len(n) > 0 && (n[0] == '"' || n[0] == '\'') {
			return name(n)
		}
		if !jsIsName(n) {
			break
		}
		full := string(n)
		for { // A.B.C
			dot, k := jsTok(b, j)
			more, k2 := jsTok(b, k)
			if string(dot) != "." || !jsIsName(more) {
				break
			}
			full += "." + string(more)
			j = k2
		}
		return join(parent, full), true
	case "const", "let", "var":
		if string(n) == "enum" { // const enum Name
			n, _ = jsTok(b, j)
			return name(n)
		}
		if ln.depth == 0 && jsIsName(n) { // a local variable is no symbol
			return name(n)
		}
	}
	return parent, false
}

// memberName returns the name of the class member (class) or object
// literal method starting with token t (then b from i), or nil: the
// modifiers are passed over, unless one is the name itself (followed by
// '(', '=', ':', ';', '?', '!', '<', ',', '}' or nothing). An object
// literal's member is named only when it is a method; an index
// signature ("[key: string]: T") and a static block have no name.
func memberName(b, t []byte, i int, class bool) []byte {
	for {
		switch string(t) {
		case "public", "private", "protected", "static", "readonly", "abstract", "override", "declare",
			"async", "get", "set", "accessor", "*":
			nx, j := jsTok(b, i)
			if string(t) != "*" && (nx == nil || bytes.IndexByte([]byte("(=:;?!<,}"), nx[0]) >= 0) {
				break // the modifier's word is the name
			}
			t, i = nx, j
			continue
		}
		break
	}
	if len(t) == 0 {
		return nil
	}
	switch c := t[0]; {
	case jsIsWord(t) || c == '#' || c == '"' || c == '\'':
	case c == '[':
		if nx, _ := jsTok(b, i); string(nx) == ":" {
			return nil // an index signature
		}
	default:
		return nil
	}
	if !class {
		if nx, _ := jsTok(b, i); string(nx) != "(" && string(nx) != "<" {
			return nil // a property, not a method
		}
	}
	return t
}

// jsIsWord reports whether t is a name or keyword (not a number).
func jsIsWord(t []byte) bool {
	return len(t) > 0 && (isIdentByte(t[0]) || t[0] == '$') && !(t[0] >= '0' && t[0] <= '9')
}

// jsIsName reports whether t is a name a declaration may have: a word
// that is not a reserved word.
func jsIsName(t []byte) bool {
	if !jsIsWord(t) {
		return false
	}
	switch string(t) {
	case "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
		"else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
		"instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try",
		"typeof", "var", "void", "while", "with":
		return false
	}
	return true
}
