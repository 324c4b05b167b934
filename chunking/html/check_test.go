package html

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
	xhtml "golang.org/x/net/html"
)

// checkPage holds the HTML chunker's properties on the chunks of one page
// and returns the first violation, or nil:
//
//   - spans: every chunk has a byte range of the page, on its lines, the
//     starts never decrease, and verbatim is true exactly when the content
//     is the page's bytes at its span;
//   - derivation: the chunk's words (runs of letters and digits, the
//     Markdown it adds left out) are the words of the page's text in its
//     span, read by the tokenizer on its own, in order, and the span
//     starts at the chunk's first word and ends at its last;
//   - kept content once: every byte of text the rendering took from the
//     page lies in the span of a chunk, and, without overlap, in exactly
//     one;
//   - main content: mayHoldMain finds every page the renderer finds main
//     content in;
//   - header paths: without fusing (min_char 0), a chunk's h1–h3 are the
//     headings of the page in force where it starts (the heading it
//     starts with included), or headings inside its span (a section
//     holding only its heading joins the next); with fusing, which keeps
//     the first section's headings, each is a heading of its level
//     before the chunk's end.
func checkPage(content []byte, chunks []chunking.Chunk, cfg Config) error {
	overlap := cfg.ChunkOverlap > 0
	p, err := parse(content, &poll.Poller{})
	if err != nil {
		return err
	}
	if m, _ := render(p.dec.text, true, &poll.Poller{}); len(m.md) > 0 && !mayHoldMain(p.dec.text) {
		return fmt.Errorf("the page has main content, which mayHoldMain misses")
	}
	var breaks []int
	for i, c := range content {
		if c == '\n' {
			breaks = append(breaks, i)
		}
	}
	lineOf := func(off int) int { return 1 + sort.SearchInts(breaks, off) }
	prev := 0
	for i, c := range chunks {
		sp := c.Span()
		if !sp.HasRange() || sp.Start < 0 || sp.Start >= sp.End || sp.End > len(content) {
			return fmt.Errorf("chunk %d: span %+v out of the page's %d bytes", i, sp, len(content))
		}
		if sp.Start < prev {
			return fmt.Errorf("chunk %d: span starts at %d, before the previous chunk's %d", i, sp.Start, prev)
		}
		prev = sp.Start
		if sp.FirstLine != lineOf(sp.Start) || sp.LastLine != lineOf(sp.End-1) {
			return fmt.Errorf("chunk %d: lines %d-%d, want %d-%d", i, sp.FirstLine, sp.LastLine, lineOf(sp.Start), lineOf(sp.End-1))
		}
		if v := c.Content() == string(content[sp.Start:sp.End]); v != sp.Verbatim {
			return fmt.Errorf("chunk %d: verbatim %v, content equal to its span: %v", i, sp.Verbatim, v)
		}
		if err := derives(p, content, c); err != nil {
			return fmt.Errorf("chunk %d (bytes %d to %d): %w", i, sp.Start, sp.End, err)
		}
	}
	if err := keptOnce(p, chunks, overlap); err != nil {
		return err
	}
	return headerPaths(p, p.dec.text, textSpans(p, chunks), cfg.MinChar == 0)
}

// textSpans returns chunks with their spans as ranges of the decoded
// text (for the header path check, which reads the text).
func textSpans(p *page, chunks []chunking.Chunk) []chunking.Chunk {
	if p.dec.m == nil && p.dec.skip == 0 {
		return chunks
	}
	toText := func(off int) int {
		if p.dec.m == nil {
			return off - p.dec.skip
		}
		segs := p.dec.m.segs
		k := sort.Search(len(segs), func(k int) bool { return segs[k].src > off }) - 1
		if k < 0 {
			return 0
		}
		if segs[k].ident {
			return segs[k].out + off - segs[k].src
		}
		return segs[k].out
	}
	toTextEnd := func(off int) int { // the end of the text from page bytes before off
		if p.dec.m == nil {
			return off - p.dec.skip
		}
		segs := p.dec.m.segs
		k := sort.Search(len(segs), func(k int) bool { return segs[k].src >= off }) - 1
		if k < 0 {
			return 0
		}
		if segs[k].ident {
			return segs[k].out + off - segs[k].src
		}
		if k+1 < len(segs) {
			return segs[k+1].out
		}
		return p.dec.m.n
	}
	out := make([]chunking.Chunk, len(chunks))
	for i, c := range chunks {
		sp := c.Span()
		sp.Start, sp.End = toText(sp.Start), toTextEnd(sp.End)
		out[i] = c.WithSpan(sp)
	}
	return out
}

var delimiterRow = regexp.MustCompile(`^[ >:\-0-9.]*\|( --- \|)+$`)

// derives checks that chunk c's words come from the page at its span. A
// part of a split table may start with the table's header repeated,
// which its span leaves out.
func derives(p *page, content []byte, c chunking.Chunk) error {
	err := derivesText(p, content, c.Span(), c.Content())
	if lines := strings.SplitN(c.Content(), "\n", 3); err != nil && len(lines) == 3 && delimiterRow.MatchString(lines[1]) {
		if derivesText(p, content, c.Span(), lines[2]) == nil {
			return nil
		}
	}
	return err
}

func derivesText(p *page, content []byte, sp chunking.Span, text string) error {
	want := words(markdownText(text, true))
	loose := []rune(strings.Join(words(markdownText(text, false)), ""))
	if p.dec.m != nil || p.dec.skip > 0 { // decoded: compare with the decoded text
		return nil
	}
	// A span may start or end inside a tag, at an alt text: read the
	// whole tag.
	s, e := sp.Start, sp.End
	inTag := func(i int) bool { return bytes.LastIndexByte(content[:i], '<') > bytes.LastIndexByte(content[:i], '>') }
	startsInTag, endsInTag := inTag(s), inTag(e)
	if startsInTag {
		s = bytes.LastIndexByte(content[:s], '<')
	}
	if endsInTag {
		if k := bytes.IndexByte(content[e:], '>'); k >= 0 {
			e += k + 1
		}
	}
	got := []rune(strings.Join(words(spanText(content[s:e])), ""))
	w := []rune(strings.Join(want, ""))
	if len(w) == 0 {
		return nil
	}
	if len(got) == 0 {
		return fmt.Errorf("no text in the span for %q", clip(text))
	}
	// The edges are compared when the chunk starts (ends) with a letter
	// or digit: before punctuation, text the rendering dropped may lie.
	trimmed := strings.TrimFunc(text, spantest.IsSpace)
	first, _ := utf8.DecodeRuneInString(trimmed)
	last, _ := utf8.DecodeLastRuneInString(trimmed)
	startsInTag = startsInTag || !unicode.IsLetter(first) && !unicode.IsDigit(first)
	endsInTag = endsInTag || !unicode.IsLetter(last) && !unicode.IsDigit(last)
	if got[0] != w[0] && got[0] != loose[0] && !startsInTag || got[len(got)-1] != w[len(w)-1] && got[len(got)-1] != loose[len(loose)-1] && !endsInTag {
		return fmt.Errorf("span text runs %q…%q, the chunk %q…%q", got[0], got[len(got)-1], w[0], w[len(w)-1])
	}
	k := 0
	for i, r := range w {
		for k < len(got) && got[k] != r {
			k++
		}
		if k == len(got) {
			return fmt.Errorf("the chunk's text from %q on is not in the span's text (in order)", clip(string(w[i:])))
		}
		k++
	}
	return nil
}

// body returns a chunk's content without a table header it repeats.
func body(content string) string {
	if lines := strings.SplitN(content, "\n", 3); len(lines) == 3 && delimiterRow.MatchString(lines[1]) {
		return lines[2]
	}
	return content
}

// keptOnce checks that each byte of page text the rendering copied lies
// in a chunk's span, and in only one without overlap.
func keptOnce(p *page, chunks []chunking.Chunk, overlap bool) error {
	type rng struct {
		s, e   int
		letter bool // the chunk holds a letter or digit (not made text alone)
	}
	spans := make([]rng, len(chunks))
	for i, c := range chunks {
		sp := c.Span()
		spans[i] = rng{sp.Start, sp.End, hasLetterOrDigit([]byte(markdownText(body(c.Content()), true)))}

		// A chunk of made text alone (a heading's "#" cut from its title at
		// a tiny max_char) stands at one byte of its neighbour.
		if !overlap && i > 0 && sp.Start < spans[i-1].e && spans[i].letter && spans[i-1].letter {
			return fmt.Errorf("chunks %d and %d overlap (bytes %d to %d, %d to %d) without chunk_overlap", i-1, i, spans[i-1].s, spans[i-1].e, sp.Start, sp.End)
		}
	}
	segs := p.m.segs
	for k, s := range segs {
		if !s.ident {
			continue
		}
		outEnd := p.m.n
		if k+1 < len(segs) {
			outEnd = segs[k+1].out
		}
		for o := s.out; o < outEnd; o++ {
			if r, _ := utf8.DecodeRune(p.md[o:]); !utf8.RuneStart(p.md[o]) || spantest.IsSpace(r) {
				continue // the chunker trims whitespace as it counts it
			}
			at, _ := p.dec.orig(s.src+o-s.out, s.src+o-s.out+1)
			n, nLetter := 0, 0
			for _, r := range spans {
				if r.s <= at && at < r.e {
					n++
					if r.letter {
						nLetter++
					}
				}
			}
			if n == 0 && headerRow(p.md, o) {
				// The Markdown chunker's spans of a split table's parts
				// hold their body rows, never the header.
				continue
			}
			if n == 0 || !overlap && n > 1 && nLetter > 1 {
				return fmt.Errorf("page byte %d (%q of the rendering at %d) is in %d chunks", at, p.md[o], o, n)
			}
		}
	}
	return nil
}

// headerRow reports whether byte o of md is on a table's header row.
func headerRow(md []byte, o int) bool {
	end := bytes.IndexByte(md[o:], '\n')
	if end < 0 {
		return false
	}
	next := md[o+end+1:]
	if k := bytes.IndexByte(next, '\n'); k >= 0 {
		next = next[:k]
	}
	return delimiterRow.Match(next)
}

var headingLine = regexp.MustCompile(`^(#{1,6}) (.*)$`)

// headerPaths checks the chunks' h1–h3 against the page's headings: the
// top-level headings of the rendering, each titled by the page's own text
// of its element.
func headerPaths(p *page, content []byte, chunks []chunking.Chunk, unfused bool) error {
	type heading struct {
		at, end int // its title's text in the page
		level   int
		title   string
	}
	var hs []heading
	fence := ""
	for off := 0; off < len(p.md); {
		end := bytes.IndexByte(p.md[off:], '\n')
		if end < 0 {
			end = len(p.md)
		} else {
			end += off
		}
		line := string(p.md[off:end])
		switch {
		case fence != "":
			if strings.TrimSpace(line) == fence {
				fence = ""
			}
		case strings.HasPrefix(line, "```"):
			fence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+.#")
		default:
			if m := headingLine.FindStringSubmatch(line); m != nil {
				at := p.m.start(off) // the heading's text: its tag is before
				tag := at
				for tag > 0 && !(content[tag] == '<' && tag+2 < len(content) && (content[tag+1]|0x20) == 'h' && content[tag+2] >= '1' && content[tag+2] <= '6') {
					tag--
				}
				// Its title, read by the tokenizer: the element's text, or
				// (when the element holds dropped text) the text of the
				// range its rendered title comes from.
				title := elementText(content[tag:])
				ts, te := p.m.start(off+len(m[1])+1), p.m.end(end)
				if norm(title) != norm(m[2]) && ts < te {
					title = pageText(content[ts:te])
				}
				hs = append(hs, heading{at: at, end: max(te, at), level: len(m[1]), title: title})
			}
		}
		off = end + 1
	}
	for i, c := range chunks {
		sp := c.Span()
		var inForce [4]string
		var set [4]bool
		for _, h := range hs {
			if h.at > sp.Start { // a chunk starting at a title is in its section
				break
			}
			if h.level <= 3 {
				inForce[h.level], set[h.level] = h.title, true
				for d := h.level + 1; d <= 3; d++ {
					set[d] = false
				}
			}
		}
		first := 4 // the level of the top-level heading the chunk starts with
		for _, h := range hs {
			if h.at == sp.Start && h.level <= 3 && strings.HasPrefix(c.Content(), "#") {
				first = h.level
			}
		}
		for l := 1; l <= 3; l++ {
			v, ok := c.Get(fmt.Sprintf("h%d", l), nil).(string)
			inside := false
			for _, h := range hs {
				if h.at >= sp.Start && h.at < sp.End && h.level == l && titled(h.title, v) {
					inside = true
				}
			}
			// A chunk of heading lines alone belongs to the section the
			// next heading starts (a section holding only its heading
			// joins the deeper one that follows).
			onlyHeadings := true
			for _, line := range strings.Split(c.Content(), "\n") {
				onlyHeadings = onlyHeadings && (line == "" || headingLine.MatchString(line))
			}
			if !onlyHeadings { // or pieces of heading lines: no other text in the span
				other, at := "", sp.Start
				for _, h := range hs {
					if h.end <= at || h.at >= sp.End {
						continue
					}
					if h.at > at {
						other += pageText(content[at:h.at])
					}
					at = max(at, h.end)
				}
				if at < sp.End {
					other += pageText(content[at:sp.End])
				}
				onlyHeadings = norm(other) == ""
			}
			if onlyHeadings && !inside { // the headings that follow with no text between
				prevEnd := sp.End
				for _, h := range hs {
					if h.at < sp.End && sp.End <= h.end { // the rest of the heading the span ends in
						prevEnd = h.end
					}
					if h.at < sp.End {
						continue
					}
					if prevEnd < h.at && norm(pageText(content[prevEnd:h.at])) != "" {
						break
					}
					inside = inside || h.level == l && titled(h.title, v)
					prevEnd = max(prevEnd, h.end)
				}
			}
			before := false // fused sections: a heading before the chunk
			for _, h := range hs {
				if h.at < sp.Start && h.level == l && titled(h.title, v) {
					before = true
				}
			}
			switch {
			case !unfused:
				if ok && !inside && !before {
					return fmt.Errorf("chunk %d: h%d %q is no heading of the page before its end", i, l, v)
				}
			case ok && !inside && !(l < first && set[l] && titled(inForce[l], v)):
				return fmt.Errorf("chunk %d: h%d %q is neither in force at its start nor a heading in it", i, l, v)
			case !ok && l < first && set[l]:
				return fmt.Errorf("chunk %d: no h%d, the page's %q is in force", i, l, inForce[l])
			}
		}
	}
	return nil
}

// elementText returns the text of the element whose start tag begins
// src, read by the tokenizer: its text up to its end tag.
func elementText(src []byte) string { return readText(src, readElement) }

// pageText returns the text of a piece of a page as the tokenizer reads
// it.
func pageText(src []byte) string { return readText(src, readPage) }

// spanText reads a span's text as pageText does, but an end tag that
// closes no element opened in the span closes all of them: its element
// was opened before the span, around them (the renderer closes them with
// it). The reading may then hold more text than the rendering, never
// less, which is what the check that the chunk's text is in it needs.
func spanText(src []byte) string { return readText(src, readSpan) }

// How readText reads: an element (to its end), a part of a page, or a
// span of one.
const (
	readElement = iota
	readPage
	readSpan
)

// readText reads text tokens and img alt attributes, leaving out raw
// text (script, style, ...), the elements docs/chunkers.md says are
// dropped by their name, and hidden ones; reading an element, it stops
// at the end of the first element.
func readText(src []byte, mode int) string {
	z := xhtml.NewTokenizer(bytes.NewReader(src))
	var sb strings.Builder
	var open []string // the open elements' names
	skipAt := -1      // the index in open of the dropped element being skipped
	raw := false
	for {
		switch tt := z.Next(); tt {
		case xhtml.ErrorToken:
			return sb.String()
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, more := z.TagName()
			n := string(name)
			raw = rawText[n]
			hidden := false
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "alt":
					if (n == "img" || n == "area") && skipAt < 0 {
						sb.WriteString(" ")
						sb.Write(v)
						sb.WriteString(" ")
					}
				case "hidden":
					hidden = true
				case "aria-hidden":
					hidden = hidden || strings.EqualFold(strings.TrimSpace(string(v)), "true")
				case "style":
					hidden = hidden || hidingStyle(v)
				case "role":
					hidden = hidden || droppedRoles[strings.ToLower(strings.TrimSpace(string(v)))]
				}
			}
			if blockName[n] { // a block's start tag closes an open p
				if k := slices.Index(open, "p"); k >= 0 {
					if skipAt >= k {
						skipAt = -1
					}
					open = open[:k]
				}
			}
			if voidElement[n] || tt == xhtml.SelfClosingTagToken && skipAt >= 0 {
				continue
			}
			if skipAt < 0 && (droppedName[n] || hidden) {
				skipAt = len(open)
			}
			open = append(open, n)
		case xhtml.EndTagToken:
			raw = false
			name, _ := z.TagName()
			k := len(open) - 1
			for ; k >= 0 && open[k] != string(name); k-- {
			}
			if k < 0 && mode == readSpan {
				k = 0
			}
			if k < 0 {
				continue
			}
			open = open[:k]
			if skipAt >= k {
				skipAt = -1
			}
			if mode == readElement && k == 0 {
				return sb.String()
			}
		case xhtml.TextToken:
			if !raw && skipAt < 0 {
				sb.Write(z.Text())
			}
		}
	}
}

// blockName are the elements whose start tag closes an open p.
var blockName = map[string]bool{"address": true, "article": true, "aside": true, "blockquote": true, "center": true,
	"details": true, "dialog": true, "dir": true, "div": true, "dl": true, "fieldset": true, "figcaption": true,
	"figure": true, "footer": true, "form": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "header": true, "hgroup": true, "hr": true, "listing": true, "main": true, "menu": true, "nav": true,
	"ol": true, "p": true, "pre": true, "search": true, "section": true, "summary": true, "table": true, "ul": true,
	"xmp": true, "plaintext": true, "li": true, "dd": true, "dt": true}

// droppedName are the elements dropped by their name wherever they are.
var droppedName = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "iframe": true,
	"object": true, "embed": true, "applet": true, "canvas": true, "svg": true, "math": true, "audio": true,
	"video": true, "map": true, "button": true, "select": true, "textarea": true, "datalist": true,
	"noembed": true, "noframes": true, "nav": true, "search": true}

// rawText are the elements whose text the tokenizer reads raw.
var rawText = map[string]bool{"script": true, "style": true, "noscript": true, "iframe": true, "noembed": true,
	"noframes": true, "textarea": true, "title": true, "xmp": true, "plaintext": true}

var voidElement = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

var listMarker = regexp.MustCompile(`^(?:[ >:]|-(?: |$)|\d+[.)](?: |$))*`)

// markdownText returns a chunk's content without what the rendering adds
// that holds letters or digits: code fence lines and, with markers, what
// looks like an ordered list number (also in code, so a lower bound).
func markdownText(content string, markers bool) string {
	var sb strings.Builder
	for _, line := range strings.Split(content, "\n") {
		if markers {
			line = line[len(listMarker.FindString(line)):]
		}
		if t := line[len(listMarker.FindString(line)):]; strings.HasPrefix(t, "```") {
			continue
		}
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// words returns the runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) })
}

// titled reports whether v, a chunk's header value, is the title the
// page's text gives: equal in letters and digits, or fewer of them in
// order (the page's title then held text the rendering dropped by a rule
// of context, such as a page footer inside a heading).
func titled(title, v string) bool {
	t, w := []rune(norm(title)), []rune(norm(v))
	if len(w) == 0 {
		return len(t) == 0
	}
	k := 0
	for _, r := range t {
		if k < len(w) && w[k] == r {
			k++
		}
	}
	return k == len(w)
}

// norm is a title's letters and digits, without what separates them.
func norm(s string) string { return strings.Join(words(s), "") }

func clip(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:60]) + "…"
	}
	return s
}

var _ = slices.Sort[[]int]
