package html

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// rendered is a page's main content as Markdown, with the map from its
// offsets to the decoded text's, and the page's title and language.
type rendered struct {
	md    []byte
	m     *offsetMap
	title string
	lang  string
}

// kind is what an open element does when it closes.
type kind uint8

// maxDepth bounds the open elements: a start tag deeper than this is
// read as if absent (its text is read), so every walk of the open
// elements is bounded and the work stays linear on hostile input.
const maxDepth = 512

const (
	kInline  kind = iota // nothing
	kBlock               // ends a paragraph
	kSkip                // a dropped element: its subtree is not read
	kList                // ul, ol, menu: numbers its items
	kItem                // li: a list marker
	kQuote               // blockquote: "> "
	kDef                 // dd: ": "
	kHeading             // h1–h6
	kPre                 // pre: fenced code
	kCode                // code outside pre: a code span
	kTable               // table
	kRow                 // tr
	kCell                // td, th
	kMain                // main or role=main, when only main content is read
	kAnchor              // a link to a fragment: dropped when its text has no letter or digit
)

// elem is an open element.
type elem struct {
	a          atom.Atom
	name       string // the tag name when a is 0 (custom elements)
	kind       kind
	lang       string // a code language its class names
	n          int    // kList: the next item's number; kHeading: the level; kAnchor: the paragraph's length at its start
	segs       int    // kAnchor: the paragraph's map length at its start
	flushes    int    // kAnchor: paragraphs written before it
	ordered    bool   // kList
	start, end int    // its start tag in the text
}

// container is a block container whose lines carry a prefix: a list item
// (its marker on its first line, spaces after), a block quote, a
// definition.
type container struct {
	marker, indent string
	blank          string // the prefix of a blank line inside it
	first          bool   // the marker is still to be written
	src, end       int    // its start tag
}

// frame is where blocks are written: the document, or a table cell (or
// the text of a table outside its cells), whose blocks are placed when
// the table ends.
type frame struct {
	out        buf
	ctrs       []container
	blocks     int
	structured bool // holds more than paragraphs: a heading, list, quote, code, table
}

// cell is a table cell: its frame and its start tag.
type cell struct {
	f        *frame
	src, end int
}

// row is a table row.
type row struct {
	cells    []cell
	src, end int // from its start tag to its end (an end tag, or where it was closed)
}

// table is an open table.
type table struct {
	rows     []row
	stray    *frame // text inside the table outside its cells
	src, end int    // its start tag
}

// inline gathers a paragraph's text with HTML's whitespace collapsing: a
// run of ASCII whitespace is one space, none at the start of a line or
// at the end.
type inline struct {
	b          buf
	pend       bool // a space is due before the next text
	pSrc, pEnd int  // the whitespace it stands for
}

func (in *inline) reset() {
	in.b.reset()
	in.pend = false
}

// space records whitespace at [src, end).
func (in *inline) space(src, end int) {
	if !in.pend {
		in.pend, in.pSrc = true, src
	}
	in.pEnd = end
}

// due writes the pending space before text, unless at a line start.
func (in *inline) due() {
	if !in.pend {
		return
	}
	in.pend = false
	if n := len(in.b.b); n == 0 || in.b.b[n-1] == '\n' {
		return
	}
	out := len(in.b.b)
	in.b.b = append(in.b.b, ' ')
	in.b.add(out, in.pSrc, in.pEnd, in.pEnd-in.pSrc == 1)
}

// text appends raw text at src, collapsing whitespace and decoding
// character references.
func (in *inline) text(raw []byte, src int) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case isSpace(c):
			j := i + 1
			for j < len(raw) && isSpace(raw[j]) {
				j++
			}
			in.space(src+i, src+j)
			i = j
		case c == '&':
			n, repl := entity(raw[i:])
			switch {
			case n == 0:
				in.due()
				in.b.copied(raw[i:i+1], src+i)
				n = 1
			case allSpace(repl):
				in.space(src+i, src+i+n)
			default:
				in.due()
				in.b.made(repl, src+i, src+i+n)
			}
			i += n
		default:
			j := i + 1
			for j < len(raw) && !isSpace(raw[j]) && raw[j] != '&' {
				j++
			}
			in.due()
			in.b.copied(raw[i:j], src+i)
			i = j
		}
	}
}

// made appends text the renderer made (alt text), standing for [src,
// end), its whitespace collapsed.
func (in *inline) made(s string, src, end int) {
	for i, f := range strings.Fields(s) {
		if i > 0 {
			in.space(src, end)
		}
		in.due()
		in.b.made(f, src, end)
	}
}

// lineBreak ends a line (<br>).
func (in *inline) lineBreak(src, end int) {
	in.pend = false
	if len(in.b.b) > 0 && in.b.b[len(in.b.b)-1] != '\n' {
		in.b.madeByte('\n', src, end)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func allSpace(s string) bool {
	for i := range len(s) {
		if !isSpace(s[i]) {
			return false
		}
	}
	return s != ""
}

// common character references, decoded without a look-up.
var commonEntities = map[string]string{
	"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": `"`, "&#39;": "'", "&nbsp;": "\u00a0", "&apos;": "'",
}

// entity decodes the character reference at the start of raw (which
// starts with '&'): the bytes it takes and its text, or 0 when raw does
// not start with one.
func entity(raw []byte) (int, string) {
	k := 1
	if k < len(raw) && raw[k] == '#' {
		k++
		if k < len(raw) && (raw[k] == 'x' || raw[k] == 'X') {
			k++
		}
	}
	for k < len(raw) && k < 40 && (raw[k] >= '0' && raw[k] <= '9' || raw[k] >= 'a' && raw[k] <= 'z' || raw[k] >= 'A' && raw[k] <= 'Z') {
		k++
	}
	if k < len(raw) && raw[k] == ';' {
		k++
	}
	if k <= 1 {
		return 0, ""
	}
	if s, ok := commonEntities[string(raw[:k])]; ok {
		return k, s
	}
	s := string(raw[:k])
	d := xhtml.UnescapeString(s)
	if d == s {
		return 0, ""
	}
	// The reference is a prefix of s (a legacy name may end without ';'):
	// the rest of s is the same text at the end of d.
	tail := 0
	for tail < len(s)-2 && tail < len(d)-1 && s[len(s)-1-tail] == d[len(d)-1-tail] {
		tail++
	}
	return len(s) - tail, d[:len(d)-tail]
}

// pre is an open pre element's text.
type pre struct {
	b        buf
	lang     string
	src, end int // the start tag
	fresh    bool
}

// code is an open code span's text.
type code struct {
	in       inline
	src, end int
}

// renderer turns a page's text into Markdown.
type renderer struct {
	src      []byte
	pl       *poll.Poller
	onlyMain bool

	stack   []elem
	skipAt  int // the index of the dropped element being skipped, or -1
	mains   int // open kMain elements
	frames  []*frame
	para    inline
	flushes int // paragraphs written
	heading int // the level of the heading being read, 0 outside one
	hSrc    int // its start tag
	hEnd    int
	pre     *pre
	code    *code
	tables  []*table
	scratch buf

	nameBuf   [32]byte
	title     string
	titleSeen bool
	inTitle   bool
	lang      string
	langSeen  bool
}

// reading reports whether text is rendered: not inside a dropped
// element, and inside main content.
func (r *renderer) reading() bool { return r.skipAt < 0 && (!r.onlyMain || r.mains > 0) }

// render renders text, the page decoded. With onlyMain, only the content
// of <main> elements (and role="main") is read. It stops with false when
// pl sees its context end.
func render(text []byte, onlyMain bool, pl *poll.Poller) (rendered, bool) {
	return renderSkipping(text, onlyMain, pl, minRawSkip)
}

// renderSkipping is render passing over raw text of at least skip bytes
// with a search (rawTextEnd); a skip longer than text turns that off.
func renderSkipping(text []byte, onlyMain bool, pl *poll.Poller, skip int) (rendered, bool) {
	r := &renderer{src: text, pl: pl, onlyMain: onlyMain, skipAt: -1}
	r.frames = []*frame{{}}
	z := xhtml.NewTokenizer(bytes.NewReader(text))
	pos := 0
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := z.Raw()
		start := pos
		pos += len(raw)
		if pl.Add(len(raw)) {
			return rendered{}, false
		}
		switch tt {
		case xhtml.TextToken:
			r.textToken(z, raw, start)
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			r.startTag(z, tt == xhtml.SelfClosingTagToken, start, pos)
			if r.reading() || r.inTitle {
				break
			}
			// The text of a script, style and the like, which is not
			// read, is passed over by a search rather than the
			// tokenizer's byte-at-a-time read: a new tokenizer starts at
			// its end tag.
			if end, ok := rawTextEnd(text, start, pos); ok && end-pos >= skip {
				if pl.Add(end - pos) {
					return rendered{}, false
				}
				pos = end
				z = xhtml.NewTokenizer(bytes.NewReader(text[pos:]))
			}
		case xhtml.EndTagToken:
			r.endTag(z, start, pos)
		}
	}
	r.closeTo(0, len(text), len(text))
	r.flush()
	doc := r.frames[0]
	return rendered{md: doc.out.b, m: doc.out.mapOf(), title: r.title, lang: r.lang}, true
}

func (r *renderer) top() *frame { return r.frames[len(r.frames)-1] }

// minRawSkip is the shortest raw text rawTextEnd's search passes over: a
// shorter one costs the tokenizer less than a new tokenizer does.
const minRawSkip = 512

// rawTextEnd returns where the raw text after the start tag text[start:
// tagEnd] ends, as the tokenizer reads it, when that tag is one whose
// text the tokenizer reads raw and the renderer never reads (script,
// style, textarea, iframe, noembed, noframes, noscript): at the first
// "</" and the tag's name (any case) followed by whitespace, '/' or '>',
// else at the end of text. A script whose text holds "<!--" before that
// end tag is left to the tokenizer (its escape states can hide an end
// tag): ok is false then, and for other tags.
func rawTextEnd(text []byte, start, tagEnd int) (int, bool) {
	var nb [16]byte
	name := tagName(text[start:tagEnd], nb[:0])
	switch string(name) {
	case "script", "style", "textarea", "iframe", "noembed", "noframes", "noscript":
	default:
		return 0, false
	}
	body := text[tagEnd:]
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte("</"))
		if j < 0 {
			break
		}
		at := i + j
		k := at + 2 + len(name)
		if k < len(body) && bytes.EqualFold(body[at+2:k], name) {
			switch body[k] {
			case ' ', '\n', '\r', '\t', '\f', '/', '>':
				if string(name) == "script" && bytes.Contains(body[:at], []byte("<!--")) {
					return 0, false
				}
				return tagEnd + at, true
			}
		}
		i = at + 2
	}
	if string(name) == "script" && bytes.Contains(body, []byte("<!--")) {
		return 0, false
	}
	return len(text), true
}

func (r *renderer) textToken(z *xhtml.Tokenizer, raw []byte, start int) {
	if r.inTitle {
		r.inTitle = false
		r.title = strings.Join(strings.Fields(string(z.Text())), " ")
		return
	}
	if !r.reading() {
		return
	}
	switch {
	case r.pre != nil:
		p := r.pre
		if p.fresh && start == p.end { // a line break right after <pre> is not content
			if bytes.HasPrefix(raw, []byte("\r\n")) {
				raw, start = raw[2:], start+2
			} else if len(raw) > 0 && (raw[0] == '\n' || raw[0] == '\r') {
				raw, start = raw[1:], start+1
			}
		}
		p.fresh = false
		preText(&p.b, raw, start)
	case r.code != nil:
		r.code.in.text(raw, start)
	default:
		r.para.text(raw, start)
	}
}

// preText appends the text of a pre element: whitespace kept, character
// references decoded, and line breaks normalised as HTML's input stream
// normalises them ("\r\n" and a lone "\r" are "\n"; a "&#13;" stays).
func preText(b *buf, raw []byte, src int) {
	for i := 0; i < len(raw); {
		j := bytes.IndexAny(raw[i:], "&\r")
		if j < 0 {
			b.copied(raw[i:], src+i)
			return
		}
		b.copied(raw[i:i+j], src+i)
		i += j
		if raw[i] == '\r' {
			n := 1
			if i+1 < len(raw) && raw[i+1] == '\n' {
				n = 2
			}
			b.madeByte('\n', src+i, src+i+n)
			i += n
			continue
		}
		n, repl := entity(raw[i:])
		if n == 0 {
			b.copied(raw[i:i+1], src+i)
			i++
			continue
		}
		b.made(repl, src+i, src+i+n)
		i += n
	}
}

// attrs are the attributes of a start tag the renderer reads.
type attrs struct {
	hidden bool // hidden, aria-hidden="true", or a style that hides it
	role   string
	class  string
	lang   string
	alt    string
	altSet bool
	number string // ol start, li value
	anchor bool   // a: href is a fragment ("#…")
}

func readAttrs(tag []byte, a atom.Atom) attrs {
	var at attrs
	for rest := tagRest(tag); ; {
		var k, v []byte
		var ok bool
		if k, v, rest, ok = nextAttr(rest); !ok {
			break
		}
		var lower [16]byte
		if len(k) > len(lower) {
			continue
		}
		for i, c := range k {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		v = attrText(v)
		switch string(lower[:len(k)]) {
		case "hidden":
			at.hidden = true
		case "aria-hidden":
			at.hidden = at.hidden || bytes.EqualFold(bytes.TrimSpace(v), []byte("true"))
		case "style":
			at.hidden = at.hidden || hidingStyle(v)
		case "role":
			at.role = firstRole(v)
		case "class":
			if bytes.Contains(v, []byte("lang")) || bytes.Contains(v, []byte("highlight")) {
				at.class = string(v)
			}
		case "lang":
			if a == atom.Html {
				at.lang = strings.TrimSpace(string(v))
			}
		case "alt":
			if a == atom.Img || a == atom.Area || a == atom.Input {
				at.alt, at.altSet = string(v), true
			}
		case "start":
			if a == atom.Ol {
				at.number = string(v)
			}
		case "value":
			if a == atom.Li {
				at.number = string(v)
			}
		case "href":
			at.anchor = a == atom.A && bytes.HasPrefix(bytes.TrimSpace(v), []byte("#"))
		}
	}
	return at
}

// attrText returns an attribute's raw value with its character
// references decoded.
func attrText(v []byte) []byte {
	if bytes.IndexByte(v, '&') >= 0 {
		return []byte(xhtml.UnescapeString(string(v)))
	}
	return v
}

// ariaRoles are the roles of WAI-ARIA (1.2, and image of 1.3) an author
// may give; the abstract roles are not among them.
var ariaRoles = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range strings.Fields(`alert alertdialog application article banner blockquote button
		caption cell checkbox code columnheader combobox complementary contentinfo definition deletion
		dialog directory document emphasis feed figure form generic grid gridcell group heading image img
		insertion link list listbox listitem log main mark marquee math menu menubar menuitem
		menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation
		progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator
		slider spinbutton status strong subscript superscript switch tab table tablist tabpanel term
		textbox time timer toolbar tooltip tree treegrid treeitem`) {
		m[r] = true
	}
	return m
}()

// firstRole returns an element's role by its role attribute's value v:
// the first of its space-separated tokens that is an ARIA role, in lower
// case (ARIA's rule: an author lists fallbacks after the role wanted),
// or "".
func firstRole(v []byte) string {
	for len(v) > 0 {
		i := 0
		for i < len(v) && isSpace(v[i]) {
			i++
		}
		j := i
		for j < len(v) && !isSpace(v[j]) {
			j++
		}
		if j > i && j-i <= len("menuitemcheckbox") {
			var lower [16]byte
			for k, c := range v[i:j] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				lower[k] = c
			}
			if ariaRoles[string(lower[:j-i])] {
				return string(lower[:j-i])
			}
		}
		v = v[j:]
	}
	return ""
}

// isMain reports whether a start tag of a with attributes at opens main
// content: a main element, or one whose role is main.
func isMain(a atom.Atom, at *attrs) bool { return a == atom.Main || at.role == "main" }

// mayHoldMain reports whether text may hold a start tag isMain takes,
// read with the renderer's own readers (tagName, nextAttr, firstRole),
// so that it finds every main the renderer finds (and more, in comments
// and raw text). Each '<' and a letter is read as a start tag up to the
// next '<'; a tag that goes on past that '<' (in a quoted value) is also
// read whole, unless it starts inside one read whole before. Each byte
// is read at most twice: the work is linear.
func mayHoldMain(text []byte) bool {
	var nb [16]byte
	whole := 0 // where the last tag read whole ends
	for i := bytes.IndexByte(text, '<'); i >= 0; {
		next := -1
		if k := bytes.IndexByte(text[i+1:], '<'); k >= 0 {
			next = i + 1 + k
		}
		tag := text[i:]
		if next >= 0 {
			tag = text[i:next]
		}
		if len(tag) > 1 && tag[1]|0x20 >= 'a' && tag[1]|0x20 <= 'z' {
			if atom.Lookup(tagName(tag, nb[:0])) == atom.Main {
				return true
			}
			main, end := mainRole(tag)
			if main {
				return true
			}
			if end == len(tag) && next >= 0 && i >= whole { // the tag goes on past the next '<'
				main, end = mainRole(text[i:])
				if main {
					return true
				}
				whole = i + end
			}
		}
		i = next
	}
	return false
}

// mainRole reads the start tag at the start of tag with the renderer's
// readers: whether its role is main, and where the read stopped (at the
// tag's '>', or at the end of tag).
func mainRole(tag []byte) (main bool, end int) {
	rest := tagRest(tag)
	for {
		k, v, after, ok := nextAttr(rest)
		if !ok {
			break
		}
		if bytes.EqualFold(k, []byte("role")) && firstRole(attrText(v)) == "main" {
			return true, 0
		}
		rest = after
	}
	end = len(tag) - len(rest)
	for end < len(tag) && (isSpace(tag[end]) || tag[end] == '/') {
		end++
	}
	return false, end
}

// tagName returns a tag's name in lower case (in buf when it fits), as
// the tokenizer reads it: after "<" or "</", up to whitespace, '/' or
// '>'.
func tagName(tag []byte, buf []byte) []byte {
	i := 1
	if i < len(tag) && tag[i] == '/' {
		i++
	}
	j := i
	for j < len(tag) && !isSpace(tag[j]) && tag[j] != '/' && tag[j] != '>' {
		j++
	}
	for _, c := range tag[i:j] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// tagRest returns a start tag's text after its name.
func tagRest(tag []byte) []byte {
	i := 1
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	return tag[i:]
}

// nextAttr reads the next attribute of a tag's rest: its name and raw
// value (without quotes), and what follows; ok is false at the tag's end.
func nextAttr(rest []byte) (key, val, after []byte, ok bool) {
	i := 0
	for i < len(rest) && (isSpace(rest[i]) || rest[i] == '/') {
		i++
	}
	if i >= len(rest) || rest[i] == '>' {
		return nil, nil, nil, false
	}
	ns := i
	i++ // a name may start with '='
	for i < len(rest) && !isSpace(rest[i]) && rest[i] != '=' && rest[i] != '>' && rest[i] != '/' {
		i++
	}
	key = rest[ns:i]
	j := i
	for j < len(rest) && isSpace(rest[j]) {
		j++
	}
	if j >= len(rest) || rest[j] != '=' {
		return key, nil, rest[i:], true
	}
	j++
	for j < len(rest) && isSpace(rest[j]) {
		j++
	}
	if j < len(rest) && (rest[j] == '"' || rest[j] == '\'') {
		q := rest[j]
		k := bytes.IndexByte(rest[j+1:], q)
		if k < 0 {
			return key, rest[j+1:], nil, true
		}
		return key, rest[j+1 : j+1+k], rest[j+2+k:], true
	}
	k := j
	for k < len(rest) && !isSpace(rest[k]) && rest[k] != '>' {
		k++
	}
	return key, rest[j:k], rest[k:], true
}

// attrValue returns where the value of attribute name lies in tag, a
// start tag's text (the first such attribute, as the tokenizer takes).
func attrValue(tag []byte, name string) (int, int, bool) {
	i := 1
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' && tag[i] != '/' {
		i++
	}
	for i < len(tag) {
		for i < len(tag) && (isSpace(tag[i]) || tag[i] == '/') {
			i++
		}
		if i >= len(tag) || tag[i] == '>' {
			return 0, 0, false
		}
		ns := i
		i++ // a name may start with '='
		for i < len(tag) && !isSpace(tag[i]) && tag[i] != '=' && tag[i] != '>' && tag[i] != '/' {
			i++
		}
		key := tag[ns:i]
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] != '=' {
			continue
		}
		i++
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		vs, ve := i, i
		if i < len(tag) && (tag[i] == '"' || tag[i] == '\'') {
			q := tag[i]
			vs = i + 1
			j := bytes.IndexByte(tag[vs:], q)
			if j < 0 {
				return 0, 0, false
			}
			ve, i = vs+j, vs+j+1
		} else {
			for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' {
				i++
			}
			ve = i
		}
		if bytes.EqualFold(key, []byte(name)) {
			return vs, ve, true
		}
	}
	return 0, 0, false
}

// hidingStyle reports whether a style attribute hides its element
// (display: none or visibility: hidden).
func hidingStyle(v []byte) bool {
	if !containsFold(v, "none") && !containsFold(v, "hidden") {
		return false
	}
	s := strings.ToLower(strings.Join(strings.Fields(string(v)), ""))
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
}

// containsFold reports whether s, lower-case ASCII, is in v in any
// ASCII case (CSS keywords are).
func containsFold(v []byte, s string) bool {
	for i := 0; i+len(s) <= len(v); i++ {
		if v[i]|0x20 == s[0] && bytes.EqualFold(v[i:i+len(s)], []byte(s)) {
			return true
		}
	}
	return false
}

// codeLang returns the language a class attribute names: language-X,
// lang-X, highlight-source-X or highlight-X (not highlight-default).
func codeLang(class string) string {
	for _, c := range strings.Fields(class) {
		for _, p := range []string{"language-", "lang-", "highlight-source-", "highlight-"} {
			if l, ok := strings.CutPrefix(c, p); ok && l != "" && l != "default" && !strings.ContainsAny(l, "`~") {
				return l
			}
		}
	}
	return ""
}

// droppedRoles are the ARIA landmark roles of page chrome.
var droppedRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true}

// dropped reports whether an element with atom a (name when a is 0) is
// left out with its subtree (docs/chunkers.md, HTML, has the rule).
func (r *renderer) dropped(a atom.Atom, at *attrs) bool {
	switch a {
	case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Iframe, atom.Object, atom.Embed,
		atom.Applet, atom.Canvas, atom.Svg, atom.Math, atom.Audio, atom.Video, atom.Map, atom.Button,
		atom.Select, atom.Textarea, atom.Datalist, atom.Noembed, atom.Noframes, atom.Frameset, atom.Title,
		atom.Nav, atom.Search, atom.Head:
		return true
	case atom.Header, atom.Footer, atom.Aside:
		if r.mains == 0 && !r.within(atom.Main, atom.Article, atom.Section) {
			return true
		}
	}
	return at.hidden || droppedRoles[at.role]
}

// within reports whether an element of one of atoms is open.
func (r *renderer) within(atoms ...atom.Atom) bool {
	for i := len(r.stack) - 1; i >= 0; i-- {
		for _, a := range atoms {
			if r.stack[i].a == a {
				return true
			}
		}
	}
	return false
}

// blockKind is the kind of the elements that end a paragraph.
func blockKind(a atom.Atom) kind {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Body, atom.Caption, atom.Center, atom.Details,
		atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Form, atom.Header, atom.Hgroup, atom.Html, atom.Legend, atom.Listing, atom.Main,
		atom.Nav, atom.P, atom.Section, atom.Summary, atom.Tbody, atom.Thead, atom.Tfoot, atom.Xmp,
		atom.Plaintext, atom.Li, atom.Dd, atom.Ol, atom.Ul, atom.Menu, atom.Blockquote, atom.Pre,
		atom.Table, atom.Tr, atom.Td, atom.Th, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Hr, atom.Br, atom.Search, atom.Option, atom.Optgroup:
		return kBlock
	}
	return kInline
}

// closesP reports whether a start tag of a closes an open p.
func closesP(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details, atom.Dialog,
		atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Hr, atom.Listing,
		atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.P, atom.Pre, atom.Search, atom.Section, atom.Summary,
		atom.Table, atom.Ul, atom.Xmp, atom.Plaintext, atom.Li, atom.Dd, atom.Dt:
		return true
	}
	return false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input, atom.Link,
		atom.Meta, atom.Source, atom.Track, atom.Wbr, atom.Param, atom.Keygen:
		return true
	}
	return false
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

func (r *renderer) startTag(z *xhtml.Tokenizer, selfClosing bool, start, end int) {
	tag := r.src[start:end]
	name := tagName(tag, r.nameBuf[:0])
	a := atom.Lookup(name)
	at := readAttrs(tag, a)
	switch a {
	case atom.Html:
		if !r.langSeen {
			r.lang, r.langSeen = at.lang, true
		}
		return
	case atom.Body:
		return
	case atom.Title:
		if !r.titleSeen && !r.within(atom.Svg, atom.Math) {
			r.titleSeen, r.inTitle = true, true
		}
	}
	// A block's start tag closes an open p (HTML's rule): a dropped p
	// being skipped ends there.
	if r.skipAt >= 0 && r.stack[r.skipAt].a == atom.P && closesP(a) {
		r.closeTo(r.skipAt, start, start)
	}
	e := elem{a: a, start: start, end: end}
	if a == 0 {
		e.name = string(name)
	}
	void := isVoid(a) || selfClosing && r.skipAt >= 0
	if !r.reading() {
		if r.skipAt < 0 && !void && r.dropped(a, &at) {
			e.kind = kSkip
		} else if r.skipAt < 0 && isMain(a, &at) && !void {
			e.kind = kMain
			r.mains++
		}
		if !void && len(r.stack) < maxDepth {
			if e.kind == kSkip {
				r.skipAt = len(r.stack)
			}
			r.stack = append(r.stack, e)
		}
		return
	}
	if !void && r.dropped(a, &at) {
		if blockKind(a) == kBlock {
			r.breakBlock(start)
		}
		if len(r.stack) < maxDepth {
			e.kind = kSkip
			r.skipAt = len(r.stack)
			r.stack = append(r.stack, e)
		}
		return
	}
	if r.pre != nil { // inside pre only line breaks count
		if a == atom.Br {
			r.pre.b.madeByte('\n', start, end)
		} else if a == atom.Code && r.pre.lang == "" {
			r.pre.lang = codeLang(at.class)
		}
		if !void && len(r.stack) < maxDepth {
			r.stack = append(r.stack, e)
		}
		return
	}
	r.autoClose(a, start)
	if at.class != "" {
		e.lang = codeLang(at.class)
	}
	switch a {
	case atom.Br:
		if r.code != nil {
			r.code.in.space(start, end)
		} else if r.heading > 0 || r.inCell() {
			r.para.space(start, end)
		} else {
			r.para.lineBreak(start, end)
		}
		return
	case atom.Img, atom.Area, atom.Input:
		if at.altSet && a != atom.Input {
			in := &r.para
			if r.code != nil {
				in = &r.code.in
			}
			if vs, ve, ok := attrValue(r.src[start:end], "alt"); ok {
				in.text(r.src[start+vs:start+ve], start+vs)
			} else {
				in.made(at.alt, start, end)
			}
		}
		return
	case atom.Wbr:
		return
	}
	if void {
		if blockKind(a) == kBlock {
			r.blockStart(start)
		}
		return
	}
	e.kind = blockKind(a)
	if a == atom.P { // its end is optional: it ends the paragraph and is not kept open
		r.blockStart(start)
		return
	}
	if len(r.stack) >= maxDepth { // read as if absent
		if e.kind == kBlock {
			r.blockStart(start)
		}
		return
	}
	switch a {
	case atom.Ul, atom.Ol, atom.Menu, atom.Dir:
		e.kind, e.ordered, e.n = kList, a == atom.Ol, 1
		if n, err := strconv.Atoi(strings.TrimSpace(at.number)); err == nil && a == atom.Ol && n >= 0 && n < 1e9 {
			e.n = n
		}
	case atom.Li:
		e.kind = kItem
	case atom.Blockquote:
		e.kind = kQuote
	case atom.Dd:
		e.kind = kDef
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		e.kind, e.n = kHeading, headingLevel(a)
	case atom.Pre, atom.Xmp, atom.Listing, atom.Plaintext:
		e.kind = kPre
	case atom.Code:
		e.kind = kCode
	case atom.A:
		if at.anchor && r.code == nil {
			e.kind, e.n, e.segs, e.flushes = kAnchor, len(r.para.b.b), len(r.para.b.segs), r.flushes
		}
	case atom.Table:
		e.kind = kTable
	case atom.Tr:
		e.kind = kRow
	case atom.Td, atom.Th:
		e.kind = kCell
	}
	if isMain(a, &at) && r.onlyMain {
		e.kind = kMain
	}
	if e.kind == kMain { // a main inside main: closeTo counts it out
		r.mains++
	}
	r.open(e, at)
}

// open starts element e.
func (r *renderer) open(e elem, at attrs) {
	if e.kind != kInline && e.kind != kCode && e.kind != kAnchor {
		r.blockStart(e.start)
	}
	switch e.kind {
	case kItem:
		marker := "- "
		if l := r.nearest(kList); l >= 0 && r.stack[l].ordered {
			n := r.stack[l].n
			if v, err := strconv.Atoi(strings.TrimSpace(at.number)); err == nil && v >= 0 && v < 1e9 {
				n = v
			}
			marker = strconv.Itoa(n) + ". "
			r.stack[l].n = n + 1
		}
		r.pushCtr(container{marker: marker, indent: strings.Repeat(" ", len(marker)), first: true, src: e.start, end: e.end})
	case kQuote:
		r.pushCtr(container{marker: "> ", indent: "> ", blank: ">", src: e.start, end: e.end})
	case kDef:
		// ": " is no Markdown container: later lines are not indented,
		// so what they hold reads the same as outside.
		r.pushCtr(container{marker: ": ", first: true, src: e.start, end: e.end})
	case kHeading:
		r.flush()
		r.heading, r.hSrc, r.hEnd = e.n, e.start, e.end
	case kPre:
		r.flush()
		lang := ""
		for i := len(r.stack) - 1; i >= 0 && lang == ""; i-- {
			lang = r.stack[i].lang
		}
		if e.lang != "" {
			lang = e.lang
		}
		r.pre = &pre{lang: lang, src: e.start, end: e.end, fresh: true}
	case kCode:
		if r.code == nil {
			r.code = &code{src: e.start, end: e.end}
		} else {
			e.kind = kInline
		}
	case kTable:
		r.flush()
		r.tables = append(r.tables, &table{src: e.start, end: e.end, stray: &frame{}})
		r.frames = append(r.frames, r.tables[len(r.tables)-1].stray)
	case kRow:
		r.flush()
		if t := r.table(); t != nil {
			t.rows = append(t.rows, row{src: e.start, end: e.end})
		}
	case kCell:
		r.flush()
		if t := r.table(); t != nil {
			if len(t.rows) == 0 {
				t.rows = append(t.rows, row{src: e.start, end: e.end})
			}
			if top := r.top(); top != t.stray {
				r.frames = r.frames[:len(r.frames)-1] // the previous cell's
			}
			f := &frame{}
			rw := &t.rows[len(t.rows)-1]
			rw.cells = append(rw.cells, cell{f: f, src: e.start, end: e.end})
			r.frames = append(r.frames, f)
		} else {
			e.kind = kBlock
		}
	}
	r.stack = append(r.stack, e)
}

// table returns the innermost open table, if its frames are on top.
func (r *renderer) table() *table {
	if len(r.tables) == 0 {
		return nil
	}
	return r.tables[len(r.tables)-1]
}

// inCell reports whether the innermost open table cell is nearer than
// any block container.
func (r *renderer) inCell() bool {
	for i := len(r.stack) - 1; i >= 0; i-- {
		switch r.stack[i].kind {
		case kCell:
			return true
		case kItem, kQuote, kDef, kTable, kMain:
			return false
		}
	}
	return false
}

// nearest returns the index of the innermost open element of kind k, or
// -1; the search stops at a table cell.
func (r *renderer) nearest(k kind) int {
	for i := len(r.stack) - 1; i >= 0; i-- {
		switch r.stack[i].kind {
		case k:
			return i
		case kCell, kTable:
			return -1
		}
	}
	return -1
}

// autoClose closes what a start tag of a closes by HTML's optional end
// tags: an open li before a new li, dt or dd before dt or dd, a cell or
// row before a cell or row, a heading before a heading.
func (r *renderer) autoClose(a atom.Atom, at int) {
	var closes func(e *elem) bool
	var stop func(e *elem) bool
	switch a {
	case atom.Li:
		closes = func(e *elem) bool { return e.a == atom.Li }
		stop = func(e *elem) bool { return e.kind == kList || e.kind == kTable || e.kind == kCell }
	case atom.Dt, atom.Dd:
		closes = func(e *elem) bool { return e.a == atom.Dt || e.a == atom.Dd }
		stop = func(e *elem) bool { return e.a == atom.Dl || e.kind == kTable || e.kind == kCell }
	case atom.Tr:
		closes = func(e *elem) bool { return e.a == atom.Tr }
		stop = func(e *elem) bool { return e.kind == kTable }
	case atom.Td, atom.Th:
		closes = func(e *elem) bool { return e.a == atom.Td || e.a == atom.Th }
		stop = func(e *elem) bool { return e.kind == kTable || e.a == atom.Tr }
	case atom.Thead, atom.Tbody, atom.Tfoot:
		closes = func(e *elem) bool { return e.a == atom.Thead || e.a == atom.Tbody || e.a == atom.Tfoot }
		stop = func(e *elem) bool { return e.kind == kTable }
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		closes = func(e *elem) bool { return e.kind == kHeading }
		stop = func(e *elem) bool { return e.kind != kInline && e.kind != kCode && e.kind != kAnchor }
	default:
		return
	}
	for i := len(r.stack) - 1; i >= 0; i-- {
		e := &r.stack[i]
		if closes(e) {
			r.closeTo(i, at, at)
			return
		}
		if stop(e) {
			return
		}
	}
}

func (r *renderer) endTag(z *xhtml.Tokenizer, start, end int) {
	name := tagName(r.src[start:end], r.nameBuf[:0])
	a := atom.Lookup(name)
	switch a {
	case atom.Html, atom.Body:
		return
	case atom.P:
		// Only a dropped p is kept open (its end ends the skip).
		if r.skipAt >= 0 && r.stack[r.skipAt].a == atom.P {
			r.closeTo(r.skipAt, start, end)
		} else if r.reading() && r.pre == nil {
			r.breakBlock(start)
		}
		return
	case atom.Br:
		if r.reading() && r.pre == nil {
			r.para.lineBreak(start, end)
		}
		return
	}
	lvl := headingLevel(a)
	for i := len(r.stack) - 1; i >= 0; i-- {
		e := &r.stack[i]
		if e.a == a && (a != 0 || e.name == string(name)) || lvl > 0 && e.kind == kHeading && r.skipAt < 0 {
			r.closeTo(i, start, end)
			return
		}
		if r.pre != nil && e.kind == kPre && a != atom.Pre {
			return // inside pre, only </pre> (or an ancestor's end) closes
		}
	}
}

// closeTo closes the open elements from the innermost to the one at
// index i; the end tag that closes them is at [start, end).
func (r *renderer) closeTo(i, start, end int) {
	for len(r.stack) > i {
		n := len(r.stack) - 1
		e := r.stack[n]
		r.stack = r.stack[:n]
		if r.skipAt == n {
			r.skipAt = -1
			continue
		}
		if e.kind == kMain {
			r.mains--
			r.breakBlock(start)
			continue
		}
		if !r.reading() {
			continue
		}
		r.close(e, start, end)
	}
}

// close ends element e; its end is [start, end).
func (r *renderer) close(e elem, start, end int) {
	switch e.kind {
	case kBlock, kList:
		r.breakBlock(start)
	case kItem, kQuote, kDef:
		r.flush()
		f := r.top()
		if len(f.ctrs) > 0 {
			f.ctrs = f.ctrs[:len(f.ctrs)-1]
		}
	case kHeading:
		r.flush()
	case kPre:
		r.closePre(end)
	case kCode:
		r.closeCode(start, end)
	case kAnchor:
		// A link to a place in the page whose text has no letter or digit
		// ("¶", "#", "↩", an icon) is a heading's permalink or a
		// back-reference: not content.
		p := &r.para.b
		if e.flushes == r.flushes && e.n <= len(p.b) && r.code == nil && !hasLetterOrDigit(p.b[e.n:]) {
			p.b, p.segs = p.b[:e.n], p.segs[:e.segs]
			if k := len(p.segs); k > 0 && p.segs[k-1].ident { // a merged run may reach past the cut
				p.segs[k-1].end = min(p.segs[k-1].end, p.segs[k-1].src+e.n-p.segs[k-1].out)
			}
		}
	case kCell:
		// The cell's frame stays the current one until the next cell or
		// the table's end: text between cells (which HTML moves before the
		// table) stays in the order of the page, with the cell before it.
		r.flush()
	case kRow:
		r.flush()
		if t := r.table(); t != nil && len(t.rows) > 0 {
			t.rows[len(t.rows)-1].end = end
		}
	case kTable:
		r.flush()
		r.closeTable(start, end)
	}
}

// blockStart ends the paragraph being read where a block element starts
// at source offset at. A heading that holds text ends there too (a
// heading is one line, and HTML would put the block on a line of its
// own): the block and what follows are read as blocks, not folded into
// the heading's line. Before the heading's text (a wrapper), the block
// is a space, as breakBlock has it.
func (r *renderer) blockStart(at int) {
	if r.heading > 0 && len(r.para.b.b) > 0 {
		r.flush()
		return
	}
	r.breakBlock(at)
}

// breakBlock ends the paragraph being read at source offset at (inside
// a heading: a space).
func (r *renderer) breakBlock(at int) {
	if r.heading > 0 {
		r.para.space(at, at)
		return
	}
	r.flush()
}

// flush writes the paragraph or heading being read, and the open code
// span, to the current frame.
func (r *renderer) flush() {
	if c := r.code; c != nil { // an open code span ends with the paragraph
		at := c.in.b.mapOf()
		if n := len(c.in.b.b); n > 0 {
			end := at.end(n)
			r.emitCode(end, end)
		}
		r.code = nil
	}
	r.para.pend = false
	if len(r.para.b.b) > 0 {
		if r.heading > 0 {
			r.writeHeading()
		} else {
			r.writeBlock(&r.para.b, false, true)
		}
	}
	r.para.reset()
	r.heading = 0
	r.flushes++
}

// hasLetterOrDigit reports whether text holds a letter or a digit.
func hasLetterOrDigit(text []byte) bool {
	for _, c := range string(text) {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			return true
		}
	}
	return false
}

// writeHeading writes the heading in r.para.
func (r *renderer) writeHeading() {
	h := &r.scratch
	h.reset()
	p := &r.para.b
	at := p.srcAt(0)
	h.made(strings.Repeat("#", r.heading)+" ", at, at)
	// A title is one line; a closing run of '#' after a space would be
	// read as the heading's closing sequence.
	text := p.b
	last := len(text)
	for last > 0 && text[last-1] == '#' {
		last--
	}
	cut := last < len(text) && (last == 0 || text[last-1] == ' ')
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && text[j] != '\n' && !(cut && j == last) {
			j++
		}
		h.from(p, i, j)
		if j == len(text) {
			break
		}
		if cut && j == last {
			h.made(`\`, p.srcAt(j), p.srcAt(j))
			h.from(p, j, len(text))
			break
		}
		h.b = append(h.b, ' ') // a <br>: the line break's own map stays
		h.add(len(h.b)-1, p.srcAt(j), p.srcAt(j)+1, false)
		i = j + 1
	}
	r.writeBlock(h, true, false)
}

// pushCtr opens a container in the current frame.
func (r *renderer) pushCtr(c container) {
	f := r.top()
	f.ctrs = append(f.ctrs, c)
}

// writeBlock writes src's lines as one block of the current frame, after
// a blank line, each line with the containers' prefix. Escape puts a
// backslash before what would make a line of text Markdown structure.
func (r *renderer) writeBlock(src *buf, structured, escape bool) {
	if len(src.b) == 0 {
		return
	}
	f := r.top()
	w := &f.out
	at := src.srcAt(0)
	if len(w.b) > 0 {
		w.madeByte('\n', at, at)
		r.blankPrefix(f, at)
		w.madeByte('\n', at, at)
	}
	f.blocks++
	f.structured = f.structured || structured || len(f.ctrs) > 0
	for i := 0; i < len(src.b); {
		j := bytes.IndexByte(src.b[i:], '\n')
		if j < 0 {
			j = len(src.b)
		} else {
			j += i
		}
		if i > 0 {
			w.madeByte('\n', src.srcAt(i-1), src.srcAt(i-1))
		}
		line := src.b[i:j]
		if len(bytes.TrimSpace(line)) == 0 && !(len(line) > 0 && !escape) {
			at = src.srcAt(i) // the blank line's own place, not the line before's
			r.blankPrefix(f, at)
		} else {
			at = src.srcAt(i)
			r.prefix(f, at)
			if k := escapeAt(line); escape && k >= 0 {
				w.from(src, i, i+k)
				w.madeByte('\\', src.srcAt(i+k), src.srcAt(i+k))
				w.from(src, i+k, j)
			} else {
				w.from(src, i, j)
			}
		}
		i = j + 1
	}
}

// prefix writes the containers' prefix of a line whose text starts at
// source offset at.
func (r *renderer) prefix(f *frame, at int) {
	for k := range f.ctrs {
		c := &f.ctrs[k]
		if c.first {
			f.out.made(c.marker, at, at)
			c.first = false
		} else {
			f.out.made(c.indent, at, at)
		}
	}
}

// blankPrefix writes the prefix of a blank line (block quotes only).
func (r *renderer) blankPrefix(f *frame, at int) {
	n := 0
	for k := range f.ctrs {
		if f.ctrs[k].blank != "" {
			n = k + 1
		}
	}
	for k := range n {
		c := &f.ctrs[k]
		s := c.indent
		if k == n-1 {
			s = c.blank
		} else if c.first {
			s = strings.Repeat(" ", len(c.marker))
		}
		f.out.made(s, at, at)
	}
}

// escapeAt returns where a backslash makes a line of text read as text in
// Markdown, or -1: before a '#' heading marker, '>', a list marker, a
// thematic break or setext underline, a code fence, '<' (HTML blocks),
// '|' (tables), "$$" and "\[" (display math), "+++" (front matter), or
// before the '.' or ')' of an ordered list marker.
func escapeAt(line []byte) int {
	if len(line) == 0 {
		return -1
	}
	c := line[0]
	rest := line[1:]
	spaceAfter := len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
	switch c {
	case '#':
		n := 1
		for n < len(line) && line[n] == '#' {
			n++
		}
		if n <= 6 && (n == len(line) || line[n] == ' ' || line[n] == '\t') {
			return 0
		}
	case '>', '<', '|':
		return 0
	case '-', '+', '*':
		if spaceAfter || onlyOf(line, c) || c == '+' && bytes.HasPrefix(line, []byte("+++")) {
			return 0
		}
	case '=', '_':
		if onlyOf(line, c) {
			return 0
		}
	case '`', '~':
		if bytes.HasPrefix(line, []byte{c, c, c}) {
			return 0
		}
	case '$':
		if bytes.HasPrefix(line, []byte("$$")) {
			return 0
		}
	case '\\':
		if bytes.HasPrefix(line, []byte(`\[`)) || bytes.HasPrefix(line, []byte(`\begin`)) {
			return 0
		}
	}
	if c >= '0' && c <= '9' {
		n := 1
		for n < len(line) && n < 10 && line[n] >= '0' && line[n] <= '9' {
			n++
		}
		if n < len(line) && n <= 9 && (line[n] == '.' || line[n] == ')') && (n+1 == len(line) || line[n+1] == ' ' || line[n+1] == '\t') {
			return n
		}
	}
	return -1
}

// onlyOf reports whether line is c repeated (with spaces), at least once.
func onlyOf(line []byte, c byte) bool {
	n := 0
	for _, b := range line {
		switch b {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n > 0
}

// closePre writes the open pre element as fenced code; its end tag ends
// at end.
func (r *renderer) closePre(end int) {
	p := r.pre
	r.pre = nil
	if p == nil {
		return
	}
	text := p.b.b
	n := len(text)
	for n > 0 && isSpace(text[n-1]) {
		n--
	}
	if n == 0 {
		return
	}
	run, longest := 0, 0
	for _, c := range text[:n] {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	h := &r.scratch
	h.reset()
	at, last := p.b.srcAt(0), p.b.mapOf().end(n)
	h.made(fence+p.lang+"\n", at, at)
	h.from(&p.b, 0, n)
	h.madeByte('\n', last, last)
	h.made(fence, last, last)
	r.writeBlock(h, true, false)
}

// closeCode ends the open code span; its end tag is [start, end).
func (r *renderer) closeCode(start, end int) {
	if r.code == nil {
		return
	}
	r.emitCode(start, end)
	r.code = nil
}

// emitCode writes the code span into the paragraph, between backtick
// runs longer than any inside it.
func (r *renderer) emitCode(start, end int) {
	c := r.code
	text := c.in.b.b
	if len(text) == 0 {
		return
	}
	run, longest := 0, 0
	for _, b := range text {
		if b == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	delim := strings.Repeat("`", longest+1)
	pad := ""
	if text[0] == '`' || text[len(text)-1] == '`' {
		pad = " "
	}
	p := &r.para
	p.due()
	at, last := c.in.b.srcAt(0), c.in.b.mapOf().end(len(text))
	p.b.made(delim+pad, at, at)
	p.b.from(&c.in.b, 0, len(text))
	p.b.made(pad+delim, last, last)
	if c.in.pend { // whitespace before </code> separates what follows
		p.space(c.in.pSrc, c.in.pEnd)
	}
}

// closeTable writes the innermost table into the frame around it: the
// text found outside its cells, then the table, as a pipe table when
// every cell holds one paragraph at most, else cell after cell as
// blocks (a layout table).
func (r *renderer) closeTable(start, end int) {
	t := r.table()
	if t == nil {
		return
	}
	r.tables = r.tables[:len(r.tables)-1]
	// Drop the frames the table opened (its stray frame and any cell
	// left open).
	for len(r.frames) > 1 && r.frames[len(r.frames)-1] != t.stray {
		r.frames = r.frames[:len(r.frames)-1]
	}
	if len(r.frames) > 1 {
		r.frames = r.frames[:len(r.frames)-1]
	}
	if len(t.stray.out.b) > 0 {
		r.writeBlock(&t.stray.out, t.stray.structured, false)
	}
	data, cols := true, 0
	rows := t.rows[:0]
	for _, rw := range t.rows {
		empty := true
		for _, c := range rw.cells {
			data = data && !c.f.structured && c.f.blocks <= 1
			empty = empty && len(c.f.out.b) == 0
		}
		if !empty {
			rows = append(rows, rw)
			cols = max(cols, len(rw.cells))
		}
	}
	if len(rows) == 0 {
		return
	}
	if !data {
		for _, rw := range rows {
			for _, c := range rw.cells {
				if len(c.f.out.b) > 0 {
					r.writeBlock(&c.f.out, c.f.structured, false)
				}
			}
		}
		return
	}
	h := &buf{}
	for k, rw := range rows {
		if k > 0 {
			h.madeByte('\n', h.mapOf().end(len(h.b)), h.mapOf().end(len(h.b)))
		}
		at := rw.src // where the made text stands: after the last cell's text
		for i := range cols {
			sep := " | "
			if i == 0 {
				sep = "| "
			}
			if i < len(rw.cells) {
				c := rw.cells[i]
				if len(c.f.out.b) > 0 {
					at = c.f.out.srcAt(0)
				} else {
					at = max(at, c.src)
				}
				h.made(sep, at, at)
				cellText(h, &c.f.out)
				if n := len(c.f.out.b); n > 0 {
					at = c.f.out.mapOf().end(n)
				}
			} else {
				h.made(sep, at, at)
			}
		}
		h.made(" |", at, at)
		if k == 0 {
			h.madeByte('\n', at, at)
			h.made("|"+strings.Repeat(" --- |", cols), at, at)
		}
	}
	r.writeBlock(h, true, false)
}

// cellText appends a data cell's text on one line, '|' escaped.
func cellText(h *buf, c *buf) {
	i := 0
	for j, b := range c.b {
		if b == '|' || b == '\n' {
			h.from(c, i, j)
			if b == '|' {
				h.madeByte('\\', c.srcAt(j), c.srcAt(j))
				h.from(c, j, j+1)
			} else {
				h.b = append(h.b, ' ')
				h.add(len(h.b)-1, c.srcAt(j), c.srcAt(j)+1, false)
			}
			i = j + 1
		}
	}
	h.from(c, i, len(c.b))
}
