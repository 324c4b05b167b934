package code

import (
	"strings"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// line is what the Go and Python scanners record of one physical line:
// enough to find statement boundaries without a full syntax tree.
type line struct {
	start int // offset of the line's first byte
	// depth is the bracket depth at the line's start; indent is the
	// column of its first character (Python: tabs to the next multiple of
	// 8), -1 for a blank or comment-only line.
	depth, indent int
	flags         lineFlag
	kw            keyword // the first token's keyword, when it matters
	// scope (JavaScript) is the kind of the innermost bracket open at the
	// line's start (scopeTop, scopeClass, …).
	scope byte
}

type lineFlag uint8

const (
	// inToken: the line starts inside a token (a raw or triple-quoted
	// string, a block comment): no cut may fall at its start.
	inToken lineFlag = 1 << iota
	// code: the line holds code (not only whitespace and comments).
	code
	// comment: the line holds a comment and no code.
	comment
	// ends (Go): the line's last code token may end a statement or list
	// element (an identifier, a literal, break, continue, fallthrough,
	// return, ++, --, ), ], }, "," or ";").
	ends
	// logical (Python): the line starts a logical line.
	logical
	// colon (Python): the logical line starting here ends with ":" (a
	// compound statement's header).
	colon
	// continues (JavaScript): the line's first token continues the line
	// before (an operator, '.', a call's '(' after a value: no automatic
	// semicolon there), so no statement starts at it.
	continues
)

func (l line) has(f lineFlag) bool { return l.flags&f != 0 }

// keyword is the first token of a line where it names a declaration.
type keyword uint8

const (
	kwNone keyword = iota
	kwPackage
	kwImport
	kwFunc
	kwType
	kwVar
	kwConst
	kwDef       // Python def, async def
	kwClass     // Python class
	kwDecorator // Python @decorator
	kwFrom      // Python from ... import
	kwBreak     // Go break, continue, fallthrough (they end a statement)
	kwReturn    // Go return
)

// synErr is a syntax error the scanner found, at a byte offset.
type synErr struct {
	off int
	msg string
}

// maxErrors bounds the syntax errors listed per document; when there are
// more, the last place counts the rest.
const maxErrors = 50

// errList collects syntax errors up to maxErrors.
type errList struct {
	errs    []synErr
	dropped int
}

func (e *errList) add(off int, msg string) {
	if len(e.errs) < maxErrors {
		e.errs = append(e.errs, synErr{off, msg})
		return
	}
	e.dropped++
}

// list returns at most maxErrors errors in offset order, the last one
// counting the errors not listed when there are more.
func (e *errList) list() []synErr {
	out := e.errs
	if e.dropped > 0 {
		last := out[maxErrors-1].off
		out = append(out[:maxErrors-1], synErr{last, "and " + itoa(e.dropped+1) + " more syntax errors"})
	}
	sortErrs(out)
	return out
}

// lineOutline finds the cuts of a document described by its lines (Go
// and Python): statement starts at the innermost level of a range,
// recursively inside statements that do not fit.
type lineOutline struct {
	src   []byte
	lines []line
	py    bool
	js    bool
	fits  func(start, end int) bool
	name  func(o *lineOutline, l int, parent string, group bool) (string, bool)
	pl    *poll.Poller
	cuts  []cut
	depth int // of the statements split is cutting
}

// off returns the offset of line l's start (len(src) past the last line).
func (o *lineOutline) off(l int) int {
	if l >= len(o.lines) {
		return len(o.src)
	}
	return o.lines[l].start
}

// isStart reports whether line l may start a statement.
func (o *lineOutline) isStart(l int) bool {
	ln := o.lines[l]
	if o.py {
		return ln.has(logical)
	}
	return ln.has(code) && !ln.has(inToken) && !ln.has(continues)
}

// level is the level a statement starting at line l is on.
func (o *lineOutline) level(l int) int {
	if o.py {
		return o.lines[l].indent
	}
	return o.lines[l].depth
}

// prevEnds reports whether the statement before line l ended: for Go the
// last code line before it ended a statement; for Python always (logical
// lines are statements), unless that logical line was a decorator.
func (o *lineOutline) prevEnds(l, a int) bool {
	for p := l - 1; p >= a; p-- {
		ln := o.lines[p]
		if o.py {
			if ln.has(logical) {
				return ln.kw != kwDecorator
			}
			continue
		}
		if ln.has(code) {
			return ln.has(ends)
		}
		if ln.has(inToken) && !(o.js && ln.has(comment)) {
			return false // a block comment or raw string runs into it (JavaScript: a doc comment's lines are passed over)
		}
	}
	return true
}

// cutLine moves a cut before statement line s up over the comment lines
// directly above it (no blank line between), not above line a, and never
// into a block comment.
func (o *lineOutline) cutLine(s, a int) int {
	c := s
	for c > a {
		p := o.lines[c-1]
		if !p.has(comment) || p.has(code) {
			break
		}
		c--
	}
	for c < s && o.lines[c].has(inToken) {
		c++
	}
	return c
}

// maxSplitLevel is the deepest level split cuts at (bracket depth in Go
// and JavaScript, indentation column in Python): each level walks the
// lines below it, so capping the levels keeps the work linear in the
// document's size; a statement deeper than this is one piece.
const maxSplitLevel = 512

// split emits the cuts of lines [a, b), the inside of a statement (or,
// at the top, the whole document) whose path is path: one cut at every
// statement start of the range's outermost level, and cuts inside each
// statement that does not fit. At the top (top true) the first cut is
// the document's start. group says the statements are a declaration
// group's specs (Go: type, var and const groups).
func (o *lineOutline) split(a, b int, path string, top, group bool) {
	if o.pl.Add(b - a) {
		return
	}
	lvl := -1
	for l := a; l < b; l++ {
		if o.isStart(l) && (lvl < 0 || o.level(l) < lvl) {
			lvl = o.level(l)
		}
	}
	if lvl < 0 || lvl > maxSplitLevel {
		return
	}
	var starts []int
	for l := a; l < b; l++ {
		if !o.isStart(l) || o.level(l) != lvl || len(starts) > 0 && !o.prevEnds(l, a) {
			continue
		}
		starts = append(starts, l)
	}
	for i, s := range starts {
		from := o.cutLine(s, a)
		if i == 0 && top {
			from = a
		}
		to := b
		if i+1 < len(starts) {
			to = o.cutLine(starts[i+1], a)
		}
		end := to // the statement ends with its last code line; comment lines after it are not its
		for end > s+1 && !o.lines[end-1].has(code) {
			end--
		}
		p, decl := o.name(o, s, path, group)
		o.cuts = append(o.cuts, cut{at: o.off(from), path: p, depth: o.depth})
		body := s + 1
		if o.py && o.lines[s].kw == kwDecorator { // past the decorated definition's line
			for body < end && !(o.lines[body].has(logical) && o.lines[body].kw != kwDecorator) {
				body++
			}
			body++
		}
		if o.js && o.lines[s].kw == kwDecorator { // past the decorated declaration's first line
			for body < end && !(o.lines[body].depth == o.lines[s].depth && o.lines[body].has(code) &&
				!o.lines[body].has(inToken) && o.lines[body].kw != kwDecorator) {
				body++
			}
			body++
		}
		switch {
		case body >= end || o.fits(o.off(from), o.off(end)):
		case from < s && o.fits(o.off(s), o.off(end)):
			// it fits without the comment lines above it: cut them off rather than cut it
			o.cuts = append(o.cuts, cut{at: o.off(s), path: p, depth: o.depth, detach: true})
		default:
			if from < s && !o.fits(o.off(from), o.off(body)) {
				// its header does not fit with the comments above it: cut them off
				o.cuts = append(o.cuts, cut{at: o.off(s), path: p, depth: o.depth, detach: true})
			}
			o.depth++
			o.split(body, end, p, false, decl && !o.py && !o.js && o.lines[s].kw != kwFunc && o.groupOpens(s))
			o.depth--
		}
		o.trailing(end, to, path)
	}
}

// trailing emits the cuts of lines [a, b), blank and comment lines after
// a statement: one before the first comment, and, when they do not fit,
// one before every comment line that does not continue a block comment.
func (o *lineOutline) trailing(a, b int, path string) {
	for a < b && !o.lines[a].has(comment) {
		a++
	}
	if a == b || o.lines[a].has(inToken) {
		return
	}
	o.cuts = append(o.cuts, cut{at: o.off(a), path: path, depth: o.depth})
	if o.fits(o.off(a), o.off(b)) {
		return
	}
	for l := a + 1; l < b; l++ {
		if o.lines[l].has(comment) && !o.lines[l].has(inToken) {
			o.cuts = append(o.cuts, cut{at: o.off(l), path: path, depth: o.depth + 1, detach: true})
		}
	}
}

// groupOpens reports whether Go line s opens a parenthesised declaration
// group ("var (", "type (", "const (").
func (o *lineOutline) groupOpens(s int) bool {
	text := strings.TrimRight(string(o.src[o.off(s):min(o.off(s+1), len(o.src))]), " \t\r\n")
	return strings.HasSuffix(text, "(")
}
