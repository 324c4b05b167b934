package main

import (
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
)

// The page's style, script and template.
var (
	//go:embed view.css
	viewCSS string
	//go:embed view.js
	viewJS string
	//go:embed view.html.tmpl
	viewTemplate string
)

// pageTemplate is the page's template with its Content-Security-Policy.
var pageTemplate = template.Must(template.New("view").Parse(
	strings.Replace(viewTemplate, "CSP_POLICY", contentSecurityPolicy(), 1)))

// contentSecurityPolicy forbids every network request and every script
// and style but the page's own.
func contentSecurityPolicy() string {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; style-src " + hash(viewCSS) + "; script-src " + hash(viewJS)
}

// viewChunk is one chunk of a panel, with its size in the panel's unit.
type viewChunk struct {
	chunk    chunking.Chunk
	size     int
	oversize bool
	symbol   int // code: the colour of the chunk's leading symbol, 0 to symbolColours-1; else -1
}

// symbolColours is how many colours code chunks take by symbol (view.css,
// s0 to s7).
const symbolColours = 8

// viewDoc is one document of a panel: its name, its chunks' positions in
// the panel, and its text when they are shaded on it (else the contents
// are listed, for the reason in note).
type viewDoc struct {
	name   string
	text   string
	shaded bool
	note   string
	chunks []int
}

// setting is one option of a panel's chunker configuration; Changed
// marks a value that differs from the first panel's.
type setting struct {
	Name, Value string
	Changed     bool
}

// panelInput is what one panel shows: a configuration's chunks.
type panelInput struct {
	heading  string
	settings []setting
	m        measure
	chunks   []viewChunk
	docs     []viewDoc
	notes    []string
}

// pageData is what a page shows, the template's data; the page's style
// and script are the same on every page.
type pageData struct {
	Title  string
	Panels []panelView
}

// Style is the page's style sheet.
func (pageData) Style() template.CSS { return template.CSS(viewCSS) }

// Script is the page's script.
func (pageData) Script() template.JS { return template.JS(viewJS) }

// panelView is one panel as the template renders it.
type panelView struct {
	ID       string
	Heading  string
	Settings []setting
	Unit     string
	Budget   int
	BudgetOf string
	Chunks   int
	Oversize int
	Overlaps int
	Mean     string
	Largest  int
	Hist     histView
	Docs     []docView
	Notes    []string
}

// docView is one document as the template renders it: shaded segments
// of its text, or its chunks one after the other (Blocks).
type docView struct {
	Name     string
	Shaded   bool
	Note     string
	Segments []segView
	Blocks   []markView
}

// segView is a run of the document covered by the same chunks.
type segView struct {
	Text  string
	Marks []markView
}

// markView is one <mark> of a chunk.
type markView struct {
	Chunk int
	Class string
	Title string
	Text  string // the content, in a Block
}

// newPage lays the panels out for the template.
func newPage(title string, panels []panelInput) pageData {
	data := pageData{Title: title}
	for i, p := range panels {
		data.Panels = append(data.Panels, p.view(i))
	}
	return data
}

// render writes the page: the template executed with d.
func (d pageData) render(w io.Writer) error { return pageTemplate.Execute(w, d) }

// view lays the panel out for the template.
func (p panelInput) view(i int) panelView {
	v := panelView{
		ID:       "panel-" + strconv.Itoa(i),
		Heading:  p.heading,
		Settings: p.settings,
		Unit:     p.m.unit,
		Budget:   p.m.budget,
		BudgetOf: p.m.budgetOption,
		Chunks:   len(p.chunks),
		Notes:    p.notes,
	}
	sizes := make([]int, len(p.chunks))
	total := 0
	for k, c := range p.chunks {
		sizes[k] = c.size
		total += c.size
		v.Largest = max(v.Largest, c.size)
		if c.oversize {
			v.Oversize++
		}
	}
	v.Mean = "0"
	if len(sizes) > 0 {
		v.Mean = f1(float64(total) / float64(len(sizes)))
	}
	v.Hist = histogramOf(sizes, p.m.budget, p.m.unit)
	for _, d := range p.docs {
		v.Overlaps += overlapsOf(p.chunks, d.chunks)
		v.Docs = append(v.Docs, p.docView(d))
	}
	return v
}

// overlapsOf counts the chunks of a document that overlap the one before.
func overlapsOf(chunks []viewChunk, positions []int) int {
	n := 0
	for k := 1; k < len(positions); k++ {
		if overlap(chunks[positions[k-1]].chunk.Span(), chunks[positions[k]].chunk.Span()) {
			n++
		}
	}
	return n
}

// overlap reports whether two spans share source bytes or messages.
func overlap(a, b chunking.Span) bool {
	if a.HasRange() && b.HasRange() {
		return b.Start < a.End && a.Start < b.End
	}
	return len(sharedMessages(a, b)) > 0
}

// sharedMessages returns the message ids of b that a holds too.
func sharedMessages(a, b chunking.Span) []string {
	return slices.DeleteFunc(slices.Clone(b.MessageIDs), func(id string) bool { return !slices.Contains(a.MessageIDs, id) })
}

// docView renders one document: shaded, or its chunks listed.
func (p panelInput) docView(d viewDoc) docView {
	dv := docView{Name: d.name, Shaded: d.shaded, Note: d.note}
	if !d.shaded {
		for k, pos := range d.chunks {
			mv := markView{Chunk: pos, Class: chunkClass(pos, p.chunks[pos]), Title: p.describe(pos),
				Text: p.chunks[pos].chunk.Content()}
			if k > 0 {
				prev, cur := p.chunks[d.chunks[k-1]].chunk.Span(), p.chunks[pos].chunk.Span()
				if overlap(prev, cur) {
					mv.Class += " overlap"
					if ids := sharedMessages(prev, cur); len(ids) > 0 {
						mv.Title += fmt.Sprintf("\nshares with chunk %d: <%s>", d.chunks[k-1], strings.Join(ids, ">, <"))
					}
				}
			}
			dv.Blocks = append(dv.Blocks, mv)
		}
		return dv
	}
	ranges := make([]rangeChunk, len(d.chunks))
	for k, pos := range d.chunks {
		s := p.chunks[pos].chunk.Span()
		ranges[k] = rangeChunk{pos: pos, start: s.Start, end: s.End}
	}
	for _, seg := range segmentsOf(len(d.text), ranges) {
		sv := segView{Text: d.text[seg.start:seg.end]}
		title := ""
		if len(seg.cover) > 1 {
			parts := make([]string, len(seg.cover))
			for k, pos := range seg.cover {
				parts[k] = p.describe(pos)
			}
			title = "overlap of chunks " + joinInts(seg.cover) + "\n\n" + strings.Join(parts, "\n\n")
		}
		for _, pos := range seg.cover {
			mv := markView{Chunk: pos, Class: chunkClass(pos, p.chunks[pos]), Title: title}
			if len(seg.cover) > 1 {
				mv.Class += " overlap"
			} else {
				mv.Title = p.describe(pos)
			}
			sv.Marks = append(sv.Marks, mv)
		}
		dv.Segments = append(dv.Segments, sv)
	}
	return dv
}

// chunkClass is the class list of a chunk's marks: "chunk", the
// alternating colour (c0, c1), oversize and derived (not verbatim).
//
// Code chunks are coloured by their leading symbol (s0 to s7), the two
// shades alternating, so that a split declaration's chunks share a hue.
func chunkClass(pos int, c viewChunk) string {
	class := "chunk c" + strconv.Itoa(pos%2)
	if c.symbol >= 0 {
		class += " s" + strconv.Itoa(c.symbol)
	}
	if c.oversize {
		class += " oversize"
	}
	if s := c.chunk.Span(); s.HasRange() && !s.Verbatim {
		class += " derived"
	}
	return class
}

// describe is a chunk's hover text.
func (p panelInput) describe(pos int) string {
	c := p.chunks[pos]
	first := fmt.Sprintf("chunk %d · %d %s", pos, c.size, p.m.unit)
	if p.m.budget > 0 {
		first += fmt.Sprintf(" (budget %d)", p.m.budget)
	}
	if c.oversize {
		first += " · OVERSIZE"
	}
	lines := []string{first, headerPath(c.chunk)}
	if s := c.chunk.Span(); !s.IsZero() {
		src := s.String()
		if s.HasRange() && !s.Verbatim {
			src += " (content made from this source, not equal to it)"
		}
		lines = append(lines, src)
	}
	return strings.Join(lines, "\n")
}

// headerPath is the headings a chunk sits under: h1 to h6 (markdown), the
// headers list (twostep), the language and symbol paths (code) or the
// subject (email).
func headerPath(c chunking.Chunk) string {
	md := c.Metadata()
	var path []string
	for _, f := range md {
		if len(f.Key) == 2 && f.Key[0] == 'h' && f.Key[1] >= '1' && f.Key[1] <= '6' {
			path = append(path, fmt.Sprint(f.Value))
		}
	}
	if len(path) == 0 {
		hs, _ := c.Get("headers", nil).([]any) // chunk metadata holds lists as []any
		for _, h := range hs {
			path = append(path, fmt.Sprint(h))
		}
	}
	if syms, _ := c.Get("symbols", nil).([]any); len(path) == 0 && len(syms) > 0 {
		names := make([]string, len(syms))
		for i, s := range syms {
			names[i] = fmt.Sprint(s)
		}
		return fmt.Sprint(c.Get("language", "code")) + ": " + strings.Join(names, ", ")
	}
	if len(path) == 0 {
		if s, ok := c.Get("subject", nil).(string); ok && s != "" {
			return "subject: " + s
		}
		return "(no headers)"
	}
	return strings.Join(path, " › ")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) > 1 {
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return strings.Join(s, "")
}

// rangeChunk is a chunk's byte range [start, end) in its document.
type rangeChunk struct{ pos, start, end int }

// segment is a run [start, end) of a document covered by the same chunks
// (positions ascending).
type segment struct {
	start, end int
	cover      []int
}

// segmentsOf cuts a document of n bytes at every chunk boundary (ranges
// lie within [0, n)) and returns the runs in order, each with the chunks
// covering it, in one sweep.
func segmentsOf(n int, ranges []rangeChunk) []segment {
	points := []int{0, n}
	for _, r := range ranges {
		points = append(points, r.start, r.end)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	byStart := slices.Clone(ranges)
	slices.SortStableFunc(byStart, func(a, b rangeChunk) int { return cmp.Compare(a.start, b.start) })
	var active []rangeChunk
	var out []segment
	next := 0
	for k := 0; k+1 < len(points); k++ {
		p, q := points[k], points[k+1]
		active = slices.DeleteFunc(active, func(r rangeChunk) bool { return r.end <= p })
		for next < len(byStart) && byStart[next].start <= p {
			if byStart[next].end > p {
				active = append(active, byStart[next])
			}
			next++
		}
		cover := make([]int, len(active))
		for i, r := range active {
			cover[i] = r.pos
		}
		slices.Sort(cover)
		out = append(out, segment{start: p, end: q, cover: cover})
	}
	return out
}

// Histogram layout, in SVG user units.
const (
	histWidth   = 640
	histHeight  = 180
	histLeft    = 40
	histRight   = 16
	histTop     = 24
	histBottom  = 36
	histMaxBins = 30
)

// histView is the SVG histogram of a panel's chunk sizes (coordinates
// with one decimal, so pages compare byte for byte).
type histView struct {
	Width, Height int
	Left, Right   string // the plot's x extent
	Top, Base     string // the plot's y extent
	Bars          []barView
	HasBudget     bool
	BudgetX       string // the budget line
	BudgetTop     string
	BudgetLabel   string
	BudgetLabelY  string
	LabelY        string // the x axis labels: 0 and MaxLabel
	MaxLabel      string
	MaxCount      int // the y axis label, at CountY
	CountY        string
}

// barView is one bar: the chunks whose size lies in [Lo, Hi].
type barView struct {
	X, Y, W, H string
	Lo, Hi     int
	Count      int
	Title      string
}

// histogramOf bins sizes: bins are budget/10 wide (rounded up; without a
// budget, a twentieth of the largest size) and hold the sizes (lo, hi],
// the first one 0 too, so a chunk of exactly the budget lies left of the
// budget line; the axis runs one bin past the budget, and the last of at
// most 30 bins takes every larger size. Only bins holding chunks get a
// bar.
func histogramOf(sizes []int, budget int, unit string) histView {
	h := histView{Width: histWidth, Height: histHeight,
		Left: f1(histLeft), Right: f1(histWidth - histRight), Top: f1(histTop), Base: f1(histHeight - histBottom)}
	largest := 0
	for _, s := range sizes {
		largest = max(largest, s)
	}
	width := max(1, ceilDiv(largest, 20))
	if budget > 0 {
		width = max(1, ceilDiv(budget, 10))
	}
	bin := func(s int) int { return min(max(s-1, 0)/width, histMaxBins-1) }
	nbins := bin(largest) + 1
	if budget > 0 {
		nbins = max(nbins, min(ceilDiv(budget, width)+1, histMaxBins))
	}
	counts := make([]int, nbins)
	for _, s := range sizes {
		counts[bin(s)]++
	}
	h.MaxCount = slices.Max(counts)
	plotW := float64(histWidth - histLeft - histRight)
	plotH := float64(histHeight - histTop - histBottom)
	barW := plotW / float64(nbins)
	for b, c := range counts {
		if c == 0 {
			continue
		}
		lo, hi := b*width+1, (b+1)*width
		if b == 0 {
			lo = 0
		}
		label := fmt.Sprintf("%d–%d %s", lo, hi, unit)
		if b == histMaxBins-1 {
			hi = largest
			label = fmt.Sprintf("%d %s and more", lo, unit)
		}
		bh := plotH * float64(c) / float64(h.MaxCount)
		plural := "s"
		if c == 1 {
			plural = ""
		}
		h.Bars = append(h.Bars, barView{
			X: f1(histLeft + barW*float64(b) + 0.5), Y: f1(histTop + plotH - bh),
			W: f1(max(barW-1, 0.5)), H: f1(bh),
			Lo: lo, Hi: hi, Count: c,
			Title: fmt.Sprintf("%s: %d chunk%s", label, c, plural),
		})
	}
	if budget > 0 {
		h.HasBudget = true
		h.BudgetX = f1(histLeft + plotW*float64(budget)/float64(width*nbins))
		h.BudgetLabel = fmt.Sprintf("budget %d", budget)
	}
	h.MaxLabel = fmt.Sprintf("%d %s", width*nbins, unit)
	if largest > width*nbins {
		h.MaxLabel = fmt.Sprintf("%d+ %s", width*(nbins-1), unit)
	}
	h.CountY = f1(histTop + 4)
	h.LabelY = f1(histHeight - histBottom + 16)
	h.BudgetTop = f1(histTop - 4)
	h.BudgetLabelY = f1(histTop - 8)
	return h
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// f1 formats x with one decimal: SVG coordinates and the mean size.
func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
