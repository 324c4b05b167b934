package sentences

import (
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// Span is a half-open byte range [Start, End) of a text.
type Span struct {
	Start, End int
}

// maxTokenBytes bounds the backward look at the word before a period:
// no abbreviation is longer, so a longer word is an ordinary word.
const maxTokenBytes = 24

// Append appends to dst the sentences of text[from:to], as spans of text.
// protect holds sorted, non-overlapping spans of text (inline math, code
// spans, references) within which no boundary falls. Whitespace between
// sentences belongs to no span. The bytes looked at are counted on pl;
// once pl sees its context end, Append returns what it has.
func Append(dst []Span, text string, from, to int, protect []Span, pl *poll.Poller) []Span {
	if from < 0 || to > len(text) || from >= to {
		return dst
	}
	p := 0
	for p < len(protect) && protect[p].End <= from {
		p++
	}
	start := from
	j := from
	for j < to && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	atLineStart := from == 0 || text[from-1] == '\n'
	quote := atLineStart && j < to && text[j] == '>'
	heading := atLineStart && isATXHeading(text, quoteContent(text, j, to), to)
	polled := from
	for i := from; i < to; {
		if i-polled >= poll.Every {
			if pl.Add(i - polled) {
				return dst
			}
			polled = i
		}
		if p < len(protect) && i >= protect[p].Start {
			if i < protect[p].End {
				i = min(protect[p].End, to)
			}
			p++
			continue
		}
		limit := to
		if p < len(protect) && protect[p].Start < limit {
			limit = protect[p].Start
		}
		for i < limit && !stop[text[i]] {
			i++
		}
		if i >= limit {
			continue
		}
		c := text[i]
		switch {
		case c == '\n':
			j := i + 1
			for j < to && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			if j >= to {
				i = j
				continue
			}
			nextQuote := text[j] == '>'
			k := quoteContent(text, j, to)
			var brk bool
			switch {
			case text[j] == '\n' || heading:
				brk = true
			case nextQuote && quote: // break before the quote's blank lines and nested blocks
				brk = k >= to || text[k] == '\n' || text[k] == '\r' || startsBlock(text, k, to)
			default:
				brk = startsBlock(text, j, to)
			}
			if brk {
				dst = emit(dst, text, start, i)
				start = j
			}
			quote = nextQuote
			heading = isATXHeading(text, k, to)
			i = j
		case c == '.' || c == '!' || c == '?' || c == 0xE2 || c == 0xE3 || c == 0xEF:
			end, ok, n := boundary(text, start, i, limit, to)
			if n == 0 {
				i++
				continue
			}
			if ok {
				dst = emit(dst, text, start, end)
				start = end
			}
			i = max(end, i+n)
		default:
			i++
		}
	}
	pl.Add(to - polled)
	return emit(dst, text, start, to)
}

// stop marks the bytes at which Append looks closer: line breaks and the
// first bytes of terminators.
var stop = [256]bool{'\n': true, '.': true, '!': true, '?': true, 0xE2: true, 0xE3: true, 0xEF: true}

// emit appends text[from:to] trimmed of whitespace, when not empty.
func emit(dst []Span, text string, from, to int) []Span {
	from, to = TrimSpace(text, from, to)
	if from < to {
		dst = append(dst, Span{from, to})
	}
	return dst
}

// terminatorAt returns the size of the sentence terminator at text[i]
// (0 for none) and whether it is a CJK full stop.
func terminatorAt(text string, i, limit int) (size int, cjk bool) {
	switch c := text[i]; c {
	case '.', '!', '?':
		return 1, false
	case 0xE2: // … U+2026
		if i+2 < limit && text[i+1] == 0x80 && text[i+2] == 0xA6 {
			return 3, false
		}
	case 0xE3: // 。 U+3002
		if i+2 < limit && text[i+1] == 0x80 && text[i+2] == 0x82 {
			return 3, true
		}
	case 0xEF: // ！ U+FF01, ？ U+FF1F
		if i+2 < limit && text[i+1] == 0xBC && (text[i+2] == 0x81 || text[i+2] == 0x9F) {
			return 3, true
		}
	}
	return 0, false
}

// closerAt returns the size of a closing quote, bracket or emphasis
// character at text[i], or 0.
func closerAt(text string, i, limit int) int {
	switch c := text[i]; c {
	case '"', '\'', ')', ']', '}', '*', '_':
		return 1
	case 0xE2: // ’ U+2019, ” U+201D
		if i+2 < limit && text[i+1] == 0x80 && (text[i+2] == 0x99 || text[i+2] == 0x9D) {
			return 3
		}
	case 0xE3: // 」 U+300D, 』 U+300F
		if i+2 < limit && text[i+1] == 0x80 && (text[i+2] == 0x8D || text[i+2] == 0x8F) {
			return 3
		}
	case 0xC2: // » U+00BB
		if i+1 < limit && text[i+1] == 0xBB {
			return 2
		}
	}
	return 0
}

// boundary examines the terminator at text[i] in the sentence that began
// at start: it returns the end of the terminator run and its closers,
// whether a sentence ends there, and the size of the terminator at i (0
// for none).
func boundary(text string, start, i, limit, to int) (end int, ok bool, size int) {
	size, cjk := terminatorAt(text, i, limit)
	if size == 0 {
		return i, false, 0
	}
	j := i
	single := text[i] == '.'
	ellipsis := size == 3 && !cjk // U+2026
	for j < limit {
		n, c := terminatorAt(text, j, limit)
		if n == 0 {
			break
		}
		cjk = cjk || c
		if j > i {
			single = false
			ellipsis = ellipsis || text[j] == '.' && text[j-1] == '.' || n == 3 && !c
		}
		j += n
	}
	closed := j
	for j < limit {
		n := closerAt(text, j, limit)
		if n == 0 {
			break
		}
		j += n
	}
	closed = j - closed // bytes of closing punctuation after the run
	if cjk {
		return j, true, size
	}
	if j >= to {
		return j, true, size
	}
	if sp, _ := SpaceAt(text, j); !sp {
		return j, false, size
	}
	// The next word.
	k := j
	for k < to {
		sp, n := SpaceAt(text, k)
		if !sp {
			break
		}
		k += n
	}
	for k < to {
		if n := openerAt(text, k); n > 0 {
			k += n
			continue
		}
		break
	}
	if k >= to {
		return j, true, size
	}
	r, _ := utf8.DecodeRuneInString(text[k:])
	lower := unicode.IsLower(r)
	if lower && closed > 0 { // `"Why?" he asked`: a quotation or aside closes
		return j, false, size
	}
	if !single {
		return j, !(ellipsis && lower), size
	}
	// A single period: look at the word before it, which starts after
	// whitespace or an opening bracket ("implementations(e.g.").
	ws := i
	for ws > start && i-ws <= maxTokenBytes {
		c := text[ws-1]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == '[' {
			break
		}
		if c >= utf8.RuneSelf {
			if sp, _ := SpaceAt(text, ws-1); sp {
				break
			}
		}
		ws--
	}
	if i-ws > maxTokenBytes {
		return j, true, size
	}
	tokenStart := ws // before the opening punctuation: "**1.**" is a list label
	for ws < i && (text[ws] == '(' || text[ws] == '[' || text[ws] == '"' || text[ws] == '\'' || text[ws] == '*' || text[ws] == '_') {
		ws++
	}
	word := text[ws:i]
	if word == "" { // a lone period
		return j, !lower, size
	}
	upper := unicode.IsUpper(r)
	switch classify(word) {
	case neverEnds:
		return j, false, size
	case endsBeforeCapital:
		return j, upper, size
	case initialLike:
		return j, upper && startsSentence(text, k), size
	case number:
		if lower {
			return j, false, size
		}
		b := tokenStart // "1. Item" at a line start is a list label
		for b > start && (text[b-1] == ' ' || text[b-1] == '\t') {
			b--
		}
		if (b == start || text[b-1] == '\n') && allDigits(word) {
			return j, false, size
		}
	}
	return j, true, size
}

// openerAt returns the size of an opening quote, bracket or emphasis
// character at text[i], or 0.
func openerAt(text string, i int) int {
	switch c := text[i]; c {
	case '"', '\'', '(', '[', '{', '*', '_':
		return 1
	case 0xE2: // ‘ U+2018, “ U+201C
		if i+2 < len(text) && text[i+1] == 0x80 && (text[i+2] == 0x98 || text[i+2] == 0x9C) {
			return 3
		}
	case 0xC2: // « U+00AB, ¿ ¡
		if i+1 < len(text) && (text[i+1] == 0xAB || text[i+1] == 0xBF || text[i+1] == 0xA1) {
			return 2
		}
	}
	return 0
}

// startsSentence reports whether the word at text[k:] is a common
// sentence starter (and not itself an initial).
func startsSentence(text string, k int) bool {
	e := k
	for e < len(text) && e-k < maxTokenBytes && isASCIILetter(text[e]) {
		e++
	}
	// "A." is an initial, not the article.
	return starters[text[k:e]] && (e-k > 1 || e == len(text) || text[e] != '.')
}

// allDigits reports whether s is all ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// quoteContent returns the offset after the block quote markers ('>' and
// the blanks around them) at text[j:], or j when the line is no quote.
func quoteContent(text string, j, to int) int {
	k := j
	for k < to && (text[k] == '>' || (k > j && (text[k] == ' ' || text[k] == '\t'))) {
		k++
	}
	return k
}

// isATXHeading reports whether text[i:] starts an ATX heading: 1–6 '#'
// followed by a space, a tab or the end of the line.
func isATXHeading(text string, i, to int) bool {
	n := 0
	for i+n < to && text[i+n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return false
	}
	return i+n == to || text[i+n] == ' ' || text[i+n] == '\t' || text[i+n] == '\n' || text[i+n] == '\r'
}

// startsBlock reports whether the line whose first non-blank byte is
// text[j] starts a heading, block quote, table row or list item.
func startsBlock(text string, j, to int) bool {
	switch c := text[j]; {
	case c == '#':
		return isATXHeading(text, j, to)
	case c == '>' || c == '|':
		return true
	case c == '-' || c == '*' || c == '+':
		return j+1 < to && (text[j+1] == ' ' || text[j+1] == '\t')
	case c >= '0' && c <= '9':
		k := j
		for k < to && k-j < 9 && text[k] >= '0' && text[k] <= '9' {
			k++
		}
		return k+1 < to && (text[k] == '.' || text[k] == ')') && (text[k+1] == ' ' || text[k+1] == '\t')
	}
	return false
}
