package twostep

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/sentences"
)

// span is a half-open byte range of the document text.
type span = sentences.Span

// maxCodeTicks bounds the backtick runs read as code span delimiters;
// longer runs are literal text.
const maxCodeTicks = 16

// regionScan finds, in the text region s[a:b] (paragraphs, lists, quotes:
// everything that is neither a heading nor an atomic Markdown block), the
// display units that become atomic units of their own and the inline
// spans that sentences may not be split inside, as the package
// documentation defines them. Every search that fails records how far it
// looked, so that no later opener repeats it: the scan is linear in b-a.
type regionScan struct {
	s       string
	a, b    int
	display []span
	inline  []span

	pairs    []span // closed environments, by start
	pi       int
	unclosed []int // offsets of \begin{X} that nothing closes

	blank int // the next paragraph end at or after the cursor (or b)

	noDollarUntil, noDDUntil, noBracketUntil, noParenUntil int
	noTicksUntil                                           [maxCodeTicks + 1]int
	// noFence holds, per fence character, the shortest fence length whose
	// closing search failed (0: none yet); longer fences fail too.
	noFenceTicks, noFenceTildes int

	// pl counts the bytes every scan and search looks at (the linearity
	// tests read the count) and stops the scan when its context ends.
	pl *poll.Poller
}

// scanRegionUnclosed appends the display units and inline spans of s[a:b]
// to display and inline, in order, and the offsets of the region's
// unclosed \begin{X} to unclosed, and returns the extended slices; it
// counts its work on pl and stops early when pl sees its context end.
func scanRegionUnclosed(s string, a, b int, display, inline []span, unclosed []int, pl *poll.Poller) ([]span, []span, []int) {
	r := regionScan{s: s, a: a, b: b, display: display, inline: inline, blank: -1, unclosed: unclosed, pl: pl}
	n := len(unclosed)
	r.pairs, r.unclosed = matchEnvironments(s, a, b, r.unclosed)
	pl.Add(b - a)
	r.run()
	// A \begin inside a code span or inline math is not an environment.
	kept, k := r.unclosed[:n], 0
	for _, off := range r.unclosed[n:] {
		for k < len(r.inline) && r.inline[k].End <= off {
			k++
		}
		if k < len(r.inline) && r.inline[k].Start <= off {
			continue
		}
		kept = append(kept, off)
	}
	return r.display, r.inline, kept
}

// paraEnd returns the offset of the first blank line (the '\n' ending the
// paragraph) at or after i, or b.
func (r *regionScan) paraEnd(i int) int {
	if r.blank >= i {
		return r.blank
	}
	j := i
	for {
		k := strings.IndexByte(r.s[j:r.b], '\n')
		if k < 0 {
			r.pl.Add(r.b - i)
			r.blank = r.b
			return r.b
		}
		j += k + 1
		m := j
		for m < r.b && (r.s[m] == ' ' || r.s[m] == '\t' || r.s[m] == '\r') {
			m++
		}
		if m >= r.b || r.s[m] == '\n' {
			r.pl.Add(m - i)
			r.blank = j - 1
			return r.blank
		}
	}
}

// scanStop marks the bytes at which regionScan.run looks closer.
var scanStop = [256]bool{'\\': true, '$': true, '`': true, '~': true, '|': true, 'F': true, 'f': true, 'T': true, 't': true, 'E': true, 'e': true}

func (r *regionScan) run() {
	s, b := r.s, r.b
	for i := r.a; i < b; {
		if r.pl.Stopped() {
			return
		}
		from := i
		for i < b && !scanStop[s[i]] {
			i++
		}
		r.pl.Add(i - from + 1)
		if i >= b {
			return
		}
		switch s[i] {
		case '\\':
			i = r.backslash(i)
		case '$':
			i = r.dollar(i)
		case '`':
			if end := r.fence(i); end > i {
				i = end
				continue
			}
			i = r.ticks(i)
		case '~':
			if end := r.fence(i); end > i {
				i = end
				continue
			}
			i++
		case '|':
			if end := r.table(i); end > i {
				i = end
				continue
			}
			i++
		default: // a possible reference keyword
			if i > r.a && isAlnum(s[i-1]) {
				i++
				continue
			}
			if end := referenceEnd(s, i, b); end > i {
				i = r.addInline(i, end)
				continue
			}
			i++
		}
	}
}

func (r *regionScan) backslash(i int) int {
	s, b := r.s, r.b
	if i+1 >= b {
		return i + 1
	}
	switch s[i+1] {
	case 'b':
		for r.pi < len(r.pairs) && r.pairs[r.pi].Start < i {
			r.pi++
		}
		if r.pi < len(r.pairs) && r.pairs[r.pi].Start == i {
			return r.addDisplay(i, r.pairs[r.pi].End)
		}
	case '[':
		if i >= r.noBracketUntil {
			pe := r.paraEnd(i)
			if k := strings.Index(s[i+2:pe], `\]`); k >= 0 {
				r.pl.Add(k + 4)
				return r.addDisplay(i, i+2+k+2)
			}
			r.pl.Add(pe - i)
			r.noBracketUntil = pe
		}
	case '(':
		if i >= r.noParenUntil {
			pe := r.paraEnd(i)
			if k := strings.Index(s[i+2:pe], `\)`); k >= 0 {
				r.pl.Add(k + 4)
				return r.addInline(i, i+2+k+2)
			}
			r.pl.Add(pe - i)
			r.noParenUntil = pe
		}
	}
	// An escaped character (\$, \\, \`) is literal.
	return i + 2
}

func (r *regionScan) dollar(i int) int {
	s, b := r.s, r.b
	if i+1 < b && s[i+1] == '$' {
		if i >= r.noDDUntil {
			pe := r.paraEnd(i)
			if k := strings.Index(s[i+2:pe], "$$"); k >= 0 {
				r.pl.Add(k + 4)
				return r.addDisplay(i, i+2+k+2)
			}
			r.pl.Add(pe - i)
			r.noDDUntil = pe
		}
		j := i
		for j < b && s[j] == '$' {
			j++
		}
		return j
	}
	if i < r.noDollarUntil || i+1 >= b {
		return i + 1
	}
	if sp, _ := sentences.SpaceAt(s, i+1); sp {
		return i + 1
	}
	pe := r.paraEnd(i)
	for k := i + 1; k < pe; k++ {
		switch s[k] {
		case '\\':
			k++
		case '$':
			if k+1 < pe && s[k+1] == '$' {
				// A run of dollars neither closes inline math here nor
				// opens it.
				for k+1 < pe && s[k+1] == '$' {
					k++
				}
				continue
			}
			if prevSpace(s, k) || k+1 < b && s[k+1] >= '0' && s[k+1] <= '9' {
				continue
			}
			r.pl.Add(k + 1 - i)
			return r.addInline(i, k+1)
		}
	}
	// No closer before the paragraph ends: no later '$' of this
	// paragraph can open math either, since closers do not depend on
	// their opener.
	r.pl.Add(pe - i)
	r.noDollarUntil = pe
	return i + 1
}

// fence returns the end of a fenced code block nested in a list item or
// block quote (as the package documentation defines it) whose opening
// fence starts at s[i], after recording it as a display unit from its line
// start; or i when s[i] opens none.
func (r *regionScan) fence(i int) int {
	s, b := r.s, r.b
	c := s[i]
	j := i
	for j < b && s[j] == c {
		j++
	}
	n := j - i
	if n < 3 {
		return i
	}
	failed := &r.noFenceTicks
	if c == '~' {
		failed = &r.noFenceTildes
	}
	if *failed != 0 && n >= *failed {
		return i
	}
	ls := r.linePrefix(i)
	if ls < 0 {
		return i
	}
	if c == '`' {
		if k := strings.IndexByte(s[j:b], '\n'); strings.IndexByte(s[j:j+max(k, 0)], '`') >= 0 || k < 0 {
			return i // a backtick in the info string, or no body
		}
	}
	line := j
	defer func() { r.pl.Add(line - i) }()
	for line < b {
		k := strings.IndexByte(s[line:b], '\n')
		if k < 0 {
			line = b
			break
		}
		line += k + 1
		e := line
		for e < b && (s[e] == ' ' || s[e] == '\t' || s[e] == '>') {
			e++
		}
		f := e
		for f < b && s[f] == c {
			f++
		}
		if f-e < n {
			continue
		}
		g := f
		for g < b && (s[g] == ' ' || s[g] == '\t' || s[g] == '\r') {
			g++
		}
		if g < b && s[g] != '\n' {
			continue
		}
		return r.addDisplay(ls, g)
	}
	*failed = n
	return i
}

// linePrefix returns the start of the line holding s[i] when only
// indentation, list markers and '>' precede s[i] on it, else -1.
func (r *regionScan) linePrefix(i int) int {
	ls := i
	for ls > r.a && r.s[ls-1] != '\n' {
		switch p := r.s[ls-1]; {
		case p == ' ' || p == '\t' || p == '>' || p == '-' || p == '*' || p == '+' || p == '.' || p == ')' || p >= '0' && p <= '9':
			ls--
			continue
		}
		return -1
	}
	return ls
}

// table returns the end of a pipe table nested in a list item or block
// quote (as the package documentation defines it) whose header row starts
// at s[i], after recording it as a display unit from its line start; or i
// when there is none. Each line is visited once: a failed header line is
// not revisited as a table start.
func (r *regionScan) table(i int) int {
	s, b := r.s, r.b
	ls := r.linePrefix(i)
	if ls < 0 {
		return i
	}
	next := func(p int) (start, pipe, end int) {
		// The line after the one holding p: its start, the offset of its
		// first '|' after the prefix (-1 when none), its end.
		k := strings.IndexByte(s[p:b], '\n')
		if k < 0 {
			return b, -1, b
		}
		start = p + k + 1
		q := start
		for q < b && (s[q] == ' ' || s[q] == '\t' || s[q] == '>') {
			q++
		}
		end = b
		if e := strings.IndexByte(s[q:b], '\n'); e >= 0 {
			end = q + e
		}
		if q < b && s[q] == '|' {
			return start, q, end
		}
		return start, -1, end
	}
	_, pipe, dend := next(i)
	r.pl.Add(dend - i)
	if pipe < 0 || !delimiterRow(s[pipe:dend]) {
		return i
	}
	end := dend
	defer func() { r.pl.Add(end - dend) }()
	for {
		_, p, e := next(end)
		if p < 0 {
			break
		}
		end = e
	}
	for end > ls && (s[end-1] == '\r' || s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return r.addDisplay(ls, end)
}

// delimiterRow reports whether line is a table delimiter row: pipes,
// dashes, colons and blanks, with at least one dash.
func delimiterRow(line string) bool {
	dash := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '-':
			dash = true
		case '|', ':', ' ', '\t', '\r':
		default:
			return false
		}
	}
	return dash
}

func (r *regionScan) ticks(i int) int {
	s := r.s
	j := i
	for j < r.b && s[j] == '`' {
		j++
	}
	n := j - i
	if n > maxCodeTicks || i < r.noTicksUntil[n] {
		return j
	}
	pe := r.paraEnd(i)
	for k := j; k < pe; {
		m := strings.IndexByte(s[k:pe], '`')
		if m < 0 {
			break
		}
		k += m
		e := k
		for e < pe && s[e] == '`' {
			e++
		}
		if e-k == n {
			r.pl.Add(e - i)
			return r.addInline(i, e)
		}
		k = e
	}
	r.pl.Add(pe - i)
	r.noTicksUntil[n] = pe
	return j
}

// addInline records the inline span s[start:end] and returns the new scan
// position. A closed environment beginning inside it makes it a display
// unit instead, so that the environment is never cut.
func (r *regionScan) addInline(start, end int) int {
	for r.pi < len(r.pairs) && r.pairs[r.pi].Start < start {
		r.pi++
	}
	if r.pi < len(r.pairs) && r.pairs[r.pi].Start < end {
		return r.addDisplay(start, end)
	}
	r.inline = append(r.inline, span{Start: start, End: end})
	return end
}

// addDisplay records the display unit s[start:end], widened to whole
// words (a unit never splits a word between chunks) and merged with the
// previous unit when they touch; it returns the new scan position.
func (r *regionScan) addDisplay(start, end int) int {
	floor := r.a
	n := len(r.display)
	if n > 0 {
		floor = r.display[n-1].End
	}
	for start > floor {
		c, size := utf8.DecodeLastRuneInString(r.s[:start])
		if sentences.IsSpace(c) {
			break
		}
		start -= size
	}
	for {
		for end < r.b {
			sp, size := sentences.SpaceAt(r.s, end)
			if sp {
				break
			}
			end += size
		}
		// Closed environments that begin inside the unit (of another
		// name, crossing it, or inside $$…$$) join it, so that none is
		// cut.
		grown := false
		for r.pi < len(r.pairs) && r.pairs[r.pi].Start < end {
			if r.pairs[r.pi].End > end {
				end = r.pairs[r.pi].End
				grown = true
			}
			r.pi++
		}
		if !grown {
			break
		}
	}
	r.pl.Add(end - start)
	if n > 0 && start <= floor && floor > r.a && !prevSpace(r.s, floor) {
		r.display[n-1].End = end
		return end
	}
	r.display = append(r.display, span{Start: start, End: end})
	return end
}

// prevSpace reports whether the character before s[k] is whitespace.
func prevSpace(s string, k int) bool {
	c := s[k-1]
	if c < 0x80 {
		sp, _ := sentences.SpaceAt(s, k-1)
		return sp
	}
	j := k - 1
	for j > 0 && k-j < 4 && s[j]&0xC0 == 0x80 {
		j--
	}
	sp, _ := sentences.SpaceAt(s, j)
	return sp
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// refWords are the reference keywords, longest first among those sharing
// a prefix, without their first letter's case.
var refWords = []string{
	"igures", "igure", "igs", "ig",
	"ables", "able", "abs", "ab",
	"quations", "quation", "qns", "qn", "qs", "q",
}

// referenceEnd returns the end of a figure, table or equation reference
// (package documentation) starting at s[i], or i when there is none.
func referenceEnd(s string, i, b int) int {
	if i+1 >= b {
		return i
	}
	// Quick reject: the second letter of every keyword.
	switch s[i] | 0x20 {
	case 'f':
		if s[i+1] != 'i' {
			return i
		}
	case 't':
		if s[i+1] != 'a' {
			return i
		}
	case 'e':
		if s[i+1] != 'q' {
			return i
		}
	default:
		return i
	}
	first := s[i] | 0x20
	j := i + 1
	matched := false
	for _, w := range refWords {
		if (first == 'f' && w[0] != 'i') || (first == 't' && w[0] != 'a') || (first == 'e' && w[0] != 'q') {
			continue
		}
		if strings.HasPrefix(s[j:b], w) {
			j += len(w)
			matched = true
			break
		}
	}
	if !matched || j < b && isAlnum(s[j]) {
		return i
	}
	dot := j < b && s[j] == '.'
	if dot {
		j++
	}
	k := j
	for k < b {
		if s[k] == ' ' || s[k] == '\t' || s[k] == '~' {
			k++
		} else if s[k] == 0xC2 && k+1 < b && s[k+1] == 0xA0 {
			k += 2
		} else {
			break
		}
	}
	if k == j && !dot {
		return i
	}
	if k < b && s[k] == '(' {
		e := number(s, k+1, b)
		if e == k+1 || e >= b || s[e] != ')' {
			return i
		}
		return e + 1
	}
	e := number(s, k, b)
	if e == k {
		return i
	}
	if e < b && s[e] == '.' {
		e++
	}
	return e
}

// number returns the end of a reference number at s[k]: digits, further
// ".digits" groups, and an optional letter ("3", "3.5", "2a"), or k.
func number(s string, k, b int) int {
	e := k
	for e < b && s[e] >= '0' && s[e] <= '9' {
		e++
	}
	if e == k {
		return k
	}
	for e+1 < b && s[e] == '.' && s[e+1] >= '0' && s[e+1] <= '9' {
		e++
		for e < b && s[e] >= '0' && s[e] <= '9' {
			e++
		}
	}
	if e < b && s[e]|0x20 >= 'a' && s[e]|0x20 <= 'z' && (e+1 >= b || !isAlnum(s[e+1])) {
		e++
	}
	return e
}

// matchEnvironments returns the closed LaTeX environments of s[a:b],
// sorted by start: each \begin{X} paired with the \end{X} that closes it,
// nesting of the same name counted. It appends the offsets of the
// \begin{X} that nothing closes to unclosed, in order. An unmatched \end
// pairs with nothing.
func matchEnvironments(s string, a, b int, unclosed []int) ([]span, []int) {
	var pairs []span
	var open map[string][]int
	for i := a; i < b; {
		k := strings.IndexByte(s[i:b], '\\')
		if k < 0 {
			break
		}
		i += k
		switch {
		case strings.HasPrefix(s[i:b], `\begin{`):
			name, end := envName(s, i+len(`\begin{`), b)
			if end < 0 {
				i++
				continue
			}
			if open == nil {
				open = make(map[string][]int)
			}
			open[name] = append(open[name], i)
			i = end
		case strings.HasPrefix(s[i:b], `\end{`):
			name, end := envName(s, i+len(`\end{`), b)
			if end < 0 {
				i++
				continue
			}
			if st := open[name]; len(st) > 0 {
				pairs = append(pairs, span{Start: st[len(st)-1], End: end})
				open[name] = st[:len(st)-1]
			}
			i = end
		default:
			i += 2
		}
	}
	slices.SortFunc(pairs, func(x, y span) int { return x.Start - y.Start })
	n := len(unclosed)
	for _, st := range open {
		unclosed = append(unclosed, st...)
	}
	slices.Sort(unclosed[n:])
	return pairs, unclosed
}

// envName reads an environment name (letters, digits, '*', at most 64
// bytes) and its closing brace at s[i:], returning the name and the offset
// after the brace, or -1.
func envName(s string, i, b int) (string, int) {
	j := i
	for j < b && j-i <= 64 && (isAlnum(s[j]) || s[j] == '*' || s[j] == '-' || s[j] == '_') {
		j++
	}
	if j == i || j >= b || s[j] != '}' {
		return "", -1
	}
	return s[i:j], j + 1
}
