package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

var update = flag.Bool("update", false, "rewrite the golden files of the page in testdata/view/ and the quality gate's baseline testdata/gate.json")

// viewCase is one page of chunk view: its arguments (without -o) and,
// to check the page against, the chunks each panel must show, computed
// here without the command.
type viewCase struct {
	name string
	args []string
	// want returns per panel the chunks and their sizes in the panel's
	// unit, and the document text of a shaded page ("" when the chunks
	// are listed).
	want func(t *testing.T) []wantPanel
}

// wantPanel is what one panel must show.
type wantPanel struct {
	chunks []chunking.Chunk
	sizes  []int
	unit   string
	budget int    // 0: none drawn
	shaded bool   // the chunks are shaded on text, not listed
	text   string // the document, when shaded
}

// wantChunks is the panel of chunks sized in words or characters, with
// the document text when the page must shade it.
func wantChunks(chunks []chunking.Chunk, words bool, text string) wantPanel {
	return wantBudget(chunks, words, 0, text)
}

// wantBudget is wantChunks with a budget line.
func wantBudget(chunks []chunking.Chunk, words bool, budget int, text string) wantPanel {
	w := wantPanel{chunks: chunks, sizes: make([]int, len(chunks)), unit: unitChars, budget: budget, shaded: text != "", text: text}
	if words {
		w.unit = unitWords
	}
	for i, c := range chunks {
		if words {
			w.sizes[i] = countWords(c.Content())
		} else {
			w.sizes[i] = utf8.RuneCountInString(c.Content())
		}
	}
	return w
}

// wantTokens is wantBudget with sizes in tokens of the named encoding.
func wantTokens(t *testing.T, chunks []chunking.Chunk, encoding string, budget int, text string) wantPanel {
	t.Helper()
	enc, err := tokens.Get(encoding)
	if err != nil {
		t.Fatal(err)
	}
	w := wantBudget(chunks, false, budget, text)
	w.unit = unitTokens
	for i, c := range chunks {
		w.sizes[i] = enc.CountString(c.Content())
	}
	return w
}

// chunkDoc chunks path with the named chunker configured by layers, as
// the test sees it: the registry's chunker, run directly.
func chunkDoc(t *testing.T, chunker, path string, layers ...map[string]any) []chunking.Chunk {
	t.Helper()
	entry, err := registry.Default().Lookup(chunker)
	if err != nil {
		t.Fatal(err)
	}
	c, err := entry.New(layers...)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []chunking.Chunk
	if entry.ChunkFolder != nil {
		chunks, _, err = entry.ChunkFolder(context.Background(), c, path)
	} else {
		var src []byte
		if src, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		chunks, _, err = c.Chunk(chunking.Document{Path: filepath.ToSlash(path), Content: src})
	}
	if err != nil {
		t.Fatal(err)
	}
	return chunks
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// split stores the chunks of args (chunk split's arguments) at out.
func split(t *testing.T, out string, args ...string) *chunking.Collection {
	t.Helper()
	code, _, errOut := runApp(t, registry.Default().Entries(), append([]string{"split", "-o", out}, args...)...)
	if code != exitOK {
		t.Fatalf("chunk split %q = %d: %s", args, code, errOut)
	}
	c, err := chunking.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const guide = "testdata/view/guide.md"

// budgetOf returns the chunk budget of the named chunker configured by
// layers: the option that caps its chunks.
func budgetOf(t *testing.T, chunker string, layers ...map[string]any) int {
	t.Helper()
	resolved, err := registry.Default().Resolve(chunker, layers...)
	if err != nil {
		t.Fatal(err)
	}
	option := map[string]string{"markdown": "max_char", "twostep": "max_chunk_size", "email": "max_chars"}[chunker]
	return resolved[option].(int)
}

// viewCases are the pages the golden, structure and browser tests
// render: every chunker, -compare, and stored collections.
func viewCases(t *testing.T, tmp string) []viewCase {
	mdOpts := map[string]any{"max_char": "200", "chunk_overlap": "40"}
	tsOpts := map[string]any{"max_chunk_size": "40", "word_overlap": "5", "add_headers": "true"}
	emOpts := map[string]any{"max_emails_per_chunk": "2", "overlap_emails": "1"}
	doc := func(chunker string, words bool, path string, layers ...map[string]any) func(*testing.T) []wantPanel {
		return func(t *testing.T) []wantPanel {
			var out []wantPanel
			for i := range layers {
				if chunker == "markdown" || chunker == "twostep" || i == 0 {
					ls := layers[:1]
					if i > 0 {
						ls = []map[string]any{layers[0], layers[i]}
					}
					chunks := chunkDoc(t, chunker, path, ls...)
					text := ""
					if chunker != "email" {
						text = readFile(t, path)
					}
					out = append(out, wantBudget(chunks, words, budgetOf(t, chunker, ls...), text))
				}
			}
			return out
		}
	}
	stored := func(path string, words bool, budget int, text string) func(*testing.T) []wantPanel {
		return func(t *testing.T) []wantPanel {
			c, err := chunking.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			return []wantPanel{wantBudget(c.Chunks(), words, budget, text)}
		}
	}
	jsonl := filepath.Join(tmp, "guide.jsonl")
	split(t, jsonl, "-max-char", "200", "-chunk-overlap", "40", guide)
	twostepJSONL := filepath.Join(tmp, "twostep.jsonl")
	split(t, twostepJSONL, "-chunker", "twostep", "-max-chunk-size", "40", guide)
	yaml := filepath.Join(tmp, "guide.yaml")
	split(t, yaml, "-max-char", "200", guide)
	return []viewCase{
		{"markdown", []string{"-max-char", "200", "-chunk-overlap", "40", guide},
			doc("markdown", false, guide, mdOpts)},
		{"markdown-compare", []string{"-max-char", "200", "-chunk-overlap", "40", guide, "-compare", "max_char=400,chunk_overlap=0"},
			doc("markdown", false, guide, mdOpts, map[string]any{"max_char": "400", "chunk_overlap": "0"})},
		{"twostep", []string{"-chunker", "twostep", "-max-chunk-size", "40", "-word-overlap", "5", "-add-headers", guide},
			doc("twostep", true, guide, tsOpts)},
		{"twostep-compare", []string{"-chunker", "twostep", "-max-chunk-size", "40", "-word-overlap", "5", "-add-headers",
			"-compare", "headers=1,2,max-chunk-size=60,word_overlap=0", guide},
			doc("twostep", true, guide, tsOpts, map[string]any{"headers_to_split_on": "1,2", "max_chunk_size": "60", "word_overlap": "0"})},
		{"markdown-tokens", []string{"-tokenizer", "cl100k_base", "-max-char", "60", "-chunk-overlap", "10", guide},
			func(t *testing.T) []wantPanel {
				opts := map[string]any{"tokenizer": "cl100k_base", "max_char": "60", "chunk_overlap": "10"}
				return []wantPanel{wantTokens(t, chunkDoc(t, "markdown", guide, opts), "cl100k_base", 60, readFile(t, guide))}
			}},
		{"email", []string{"-chunker", "email", "-max-emails-per-chunk", "2", "-overlap-emails", "1", "testdata/view/thread.mbox"},
			doc("email", false, "testdata/view/thread.mbox", emOpts)},
		{"jsonl", []string{"-max-char", "200", jsonl}, stored(jsonl, false, 200, readFile(t, guide))},
		{"jsonl-twostep", []string{twostepJSONL}, stored(twostepJSONL, true, 0, readFile(t, guide))},
		{"yaml", []string{yaml}, stored(yaml, false, 0, "")},
	}
}

// renderView runs chunk view with args and returns the page.
func renderView(t *testing.T, out string, args ...string) string {
	t.Helper()
	code, _, errOut := runApp(t, registry.Default().Entries(), append([]string{"view", "-o", out}, args...)...)
	if code != exitOK {
		t.Fatalf("chunk view %q = %d: %s", args, code, errOut)
	}
	return readFile(t, out)
}

// TestViewGolden pins every case's page in two parts: what it shows, the
// page's data as JSON in testdata/view/<case>.json, and how it shows it,
// the template, in testdata/view/shell.html, the page of shellData with
// its style and script named, not copied; each case's page must be its
// data rendered (go test -run TestViewGolden -update rewrites them; the
// temporary folder is written as $TMP). A change of the template rewrites
// only the shell, one of style or script none.
func TestViewGolden(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range viewCases(t, tmp) {
		t.Run(tc.name, func(t *testing.T) {
			page := renderView(t, filepath.Join(t.TempDir(), "view.html"), tc.args...)
			a := &app{entries: registry.Default().Entries(), stdout: io.Discard, stderr: io.Discard}
			data, _, err := a.viewPage(context.Background(), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			var rendered strings.Builder
			if err := data.render(&rendered); err != nil {
				t.Fatal(err)
			}
			if rendered.String() != page {
				t.Errorf("chunk view %q wrote a page other than its data rendered", tc.args)
			}
			checkGolden(t, filepath.Join("testdata", "view", tc.name+".json"), strings.ReplaceAll(pageJSON(t, data), tmp, "$TMP"))
		})
	}
	t.Run("shell", func(t *testing.T) {
		var page strings.Builder
		if err := shellData().render(&page); err != nil {
			t.Fatal(err)
		}
		// The shell holds the template: the style, the script and their
		// hashes stand in it once each, as their files' names.
		shell := page.String()
		for _, r := range []struct{ embedded, name string }{
			{contentSecurityPolicy(), "CSP_POLICY"}, {viewCSS, "/* view.css */"}, {viewJS, "// view.js"},
		} {
			if n := strings.Count(shell, r.embedded); n != 1 {
				t.Fatalf("the page holds %s %d times, want once", r.name, n)
			}
			shell = strings.Replace(shell, r.embedded, r.name, 1)
		}
		checkGolden(t, filepath.Join("testdata", "view", "shell.html"), shell)
	})
}

// innermostJSON matches an indented JSON object or array that holds no
// other (raw newlines stand only between the parts of a value).
var innermostJSON = regexp.MustCompile(`[{[]\n[^{}[\]]*\n *[}\]]`)

// pageJSON is a page's data as indented JSON, with each object or array
// that holds no other on one line.
func pageJSON(t *testing.T, data pageData) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(data); err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(`\n *`)
	return innermostJSON.ReplaceAllStringFunc(b.String(), func(s string) string { return space.ReplaceAllString(s, " ") })
}

// checkGolden compares got with the golden file, or rewrites it with
// -update.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := readFile(t, golden); got != want {
		t.Errorf("%s differs (run with -update after a deliberate change and review the diff)", golden)
	}
}

// shellData is a small page that takes every branch of the template: two
// panels, the first with settings (one changed), a budget, an oversize
// chunk, notes and a document shaded with marked, overlapping and
// uncovered text, the second listing its chunks.
func shellData() pageData {
	over := markView{Chunk: 1, Class: "chunk c1 oversize", Title: "chunk 1 · 250 chars (budget 200) · OVERSIZE"}
	return pageData{Title: "chunk view: shell <&>", Panels: []panelView{{
		ID: "panel-0", Heading: "chunker markdown",
		Settings: []setting{{Name: "max_char", Value: "200"}, {Name: "chunk_overlap", Value: "0", Changed: true}},
		Unit:     "chars", Budget: 200, BudgetOf: "max_char", Chunks: 2, Oversize: 1, Overlaps: 1, Mean: "150.0", Largest: 250,
		Hist:  histogramOf([]int{50, 250}, 200, "chars"),
		Notes: []string{"a note on the panel"},
		Docs: []docView{{Name: "doc.md", Shaded: true, Note: "a note on the document", Segments: []segView{
			{Text: "# Title\n", Marks: []markView{{Chunk: 0, Class: "chunk c0", Title: "chunk 0 · 50 chars (budget 200)\nTitle"}}},
			{Text: "shared <text>", Marks: []markView{{Chunk: 0, Class: "chunk c0 overlap", Title: "overlap of chunks 0 and 1"},
				{Chunk: 1, Class: "chunk c1 oversize overlap", Title: "overlap of chunks 0 and 1"}}},
			{Text: " long text", Marks: []markView{over}},
			{Text: "\n\n"},
		}}},
	}, {
		ID: "panel-1", Heading: "stored chunks", Unit: "words", Chunks: 1, Mean: "2.0", Largest: 2,
		Hist: histogramOf([]int{2}, 0, "words"),
		Docs: []docView{{Name: "mail", Blocks: []markView{{Chunk: 0, Class: "chunk c0", Title: "chunk 0 · 2 words", Text: "two words"}}}},
	}}}
}

// TestViewPageStructure checks each page against the chunks the chunker
// itself makes: one distinct data-chunk per chunk in each panel, the
// oversize ones marked, the histogram's bars holding exactly the chunks'
// sizes, the counts, the hover text, and the document text unaltered by
// the shading (or each chunk's content, when listed).
func TestViewPageStructure(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range viewCases(t, tmp) {
		t.Run(tc.name, func(t *testing.T) {
			page := renderView(t, filepath.Join(t.TempDir(), "view.html"), tc.args...)
			checkPage(t, page, tc.want(t))
		})
	}
}

// checkPage checks a rendered page against the panels it must show.
func checkPage(t *testing.T, page string, want []wantPanel) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkInert(t, root)
	panels := findAll(root, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "panel") })
	if len(panels) != len(want) {
		t.Fatalf("page has %d panels, want %d", len(panels), len(want))
	}
	for i, p := range panels {
		w := want[i]
		if id := attr(p, "id"); id != "panel-"+strconv.Itoa(i) {
			t.Errorf("panel %d has id %q", i, id)
		}
		marks := findAll(p, func(n *html.Node) bool { return n.Data == "mark" && hasClass(n, "chunk") })
		ids := map[int]bool{}
		oversize := map[int]bool{}
		firstTitle := map[int]string{}
		for _, m := range marks {
			k, err := strconv.Atoi(attr(m, "data-chunk"))
			if err != nil {
				t.Fatalf("panel %d: mark with data-chunk %q", i, attr(m, "data-chunk"))
			}
			ids[k] = true
			if hasClass(m, "oversize") {
				oversize[k] = true
			}
			if _, ok := firstTitle[k]; !ok && !hasClass(m, "overlap") {
				firstTitle[k] = attr(m, "title")
			}
		}
		if len(ids) != len(w.chunks) {
			t.Errorf("panel %d: %d distinct data-chunk, want %d chunks", i, len(ids), len(w.chunks))
		}
		wantOversize := 0
		for k, c := range w.chunks {
			if !ids[k] {
				t.Errorf("panel %d: chunk %d has no mark", i, k)
			}
			over := c.Get("oversize", false) == true
			if over {
				wantOversize++
			}
			if oversize[k] != over {
				t.Errorf("panel %d: chunk %d marked oversize %v, its metadata says %v", i, k, oversize[k], over)
			}
			if title, ok := firstTitle[k]; ok {
				prefix := "chunk " + strconv.Itoa(k) + " · " + strconv.Itoa(w.sizes[k]) + " " + w.unit
				if !strings.HasPrefix(title, prefix) || !strings.Contains(title, "\n"+asHTMLText(headerPath(c))) {
					t.Errorf("panel %d: chunk %d hover text %q, want it to start with %q and name %q", i, k, title, prefix, headerPath(c))
				}
			}
		}
		if got := text(findAll(p, func(n *html.Node) bool { return attr(n, "data-count") == "chunks" && n.Data == "dd" })[0]); got != strconv.Itoa(len(w.chunks)) {
			t.Errorf("panel %d: chunks count %s, want %d", i, got, len(w.chunks))
		}
		if got := text(findAll(p, func(n *html.Node) bool { return attr(n, "data-count") == "oversize" && n.Data == "dd" })[0]); got != strconv.Itoa(wantOversize) {
			t.Errorf("panel %d: oversize count %s, want %d", i, got, wantOversize)
		}
		checkBars(t, i, findAll(p, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "bar") }), w.sizes)

		docs := findAll(p, func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "doc") })
		if w.shaded {
			if len(docs) != 1 || text(docs[0]) != asHTMLText(w.text) {
				t.Errorf("panel %d: the shaded text differs from the document", i)
			}
			continue
		}
		if len(docs) != 0 {
			t.Errorf("panel %d: shaded, want the chunks listed", i)
		}
		blocks := findAll(p, func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "block") })
		if len(blocks) != len(w.chunks) {
			t.Fatalf("panel %d: %d blocks, want %d", i, len(blocks), len(w.chunks))
		}
		for k, b := range blocks {
			if text(b) != asHTMLText(w.chunks[k].Content()) {
				t.Errorf("panel %d: block %d = %q, want chunk %d's content %q", i, k, text(b), k, w.chunks[k].Content())
			}
		}
	}
}

// asHTMLText is text as an HTML page holds it: HTML reads CRLF and CR
// as LF, and the page writes NUL as U+FFFD, which HTML cannot hold.
func asHTMLText(s string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "\ufffd").Replace(s)
}

// checkBars checks that the bars hold exactly the chunks' sizes: each
// bar's count is the number of sizes in its range, and they add up.
func checkBars(t *testing.T, panel int, bars []*html.Node, sizes []int) {
	t.Helper()
	if len(sizes) > 0 && len(bars) == 0 {
		t.Errorf("panel %d: no histogram bars", panel)
	}
	total := 0
	for _, b := range bars {
		lo, _ := strconv.Atoi(attr(b, "data-lo"))
		hi, _ := strconv.Atoi(attr(b, "data-hi"))
		count, _ := strconv.Atoi(attr(b, "data-count"))
		in := 0
		for _, s := range sizes {
			if s >= lo && s <= hi {
				in++
			}
		}
		if count == 0 || count != in {
			t.Errorf("panel %d: bar [%d, %d] counts %d chunks, %d sizes lie in it", panel, lo, hi, count, in)
		}
		total += count
	}
	if total != len(sizes) {
		t.Errorf("panel %d: bars count %d chunks, want %d", panel, total, len(sizes))
	}
}

// checkInert checks that nothing on the page can run or load but its own
// script and style: one script, one style, no element that loads
// anything, no event handler attribute.
func checkInert(t *testing.T, root *html.Node) {
	t.Helper()
	scripts := findAll(root, func(n *html.Node) bool { return n.Data == "script" })
	if len(scripts) != 1 || text(scripts[0]) != viewJS {
		t.Errorf("page has %d scripts or a script that is not its own", len(scripts))
	}
	styles := findAll(root, func(n *html.Node) bool { return n.Data == "style" })
	if len(styles) != 1 || text(styles[0]) != viewCSS {
		t.Errorf("page has %d styles or a style that is not its own", len(styles))
	}
	for _, n := range findAll(root, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		switch n.Data {
		case "img", "iframe", "object", "embed", "link", "base", "form", "input", "video", "audio", "source", "image", "use", "a":
			t.Errorf("page has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") || a.Key == "href" || a.Key == "src" || a.Key == "style" {
				t.Errorf("<%s> has attribute %s=%q", n.Data, a.Key, a.Val)
			}
		}
	}
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

// text returns the text of n's subtree.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// TestViewEscapesEverything renders documents and metadata made of markup
// and checks the page stays inert: the text reads back exactly, and
// nothing of it became an element or attribute.
func TestViewEscapesEverything(t *testing.T) {
	dir := t.TempDir()
	evil := "# </title></script><img src=x onerror=\"alert(1)\">\n\n" +
		"<script>alert(2)</script> <style>body{display:none}</style> ]]> <!-- --> &amp; &lt;\n\n" +
		"<svg onload=alert(3)><a href=\"javascript:alert(4)\">x</a></svg> \"' `\n"
	name := filepath.Join(dir, `a"><img src=x onerror=alert(5)>.md`)
	if err := os.WriteFile(name, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	page := renderView(t, filepath.Join(dir, "view.html"), "-max-char", "60", "-chunk-overlap", "20", name)
	chunks := chunkDoc(t, "markdown", name, map[string]any{"max_char": "60", "chunk_overlap": "20"})
	checkPage(t, page, []wantPanel{wantChunks(chunks, false, evil)})
	if strings.Contains(page, "<img") || strings.Contains(page, "<svg onload") || strings.Contains(page, "<script>alert") {
		t.Errorf("page holds live markup from the document:\n%s", page)
	}

	// Metadata and content of a stored collection, listed.
	coll := filepath.Join(dir, "evil.yaml")
	c := chunking.NewCollection([]chunking.Chunk{
		chunking.NewChunk(evil, chunking.Metadata{{Key: "h1", Value: "</script><script>alert(6)</script>"}, {Key: "file", Value: "x\"><img src=x onerror=alert(7)>"}}),
	})
	if err := chunking.Save(coll, c); err != nil {
		t.Fatal(err)
	}
	page = renderView(t, filepath.Join(dir, "view2.html"), coll)
	checkPage(t, page, []wantPanel{wantChunks(c.Chunks(), false, "")})
}

// TestViewStoredCollections covers what a stored collection's page shows
// when its source is found, moved (-root), changed or filtered (-file),
// and a JSONL file found by its content.
func TestViewStoredCollections(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "docs")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, guide)
	if err := os.WriteFile(filepath.Join(src, "guide.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "other.md"), []byte("# Other\n\nA second file.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "chunks.jsonl")
	c := split(t, jsonl, "-max-char", "200", src)
	guideChunks := c.FileChunks("guide.md")

	// Relative to -root: shaded; without it the sources are not found.
	page := renderView(t, filepath.Join(dir, "a.html"), "-root", src, "-file", "guide.md", jsonl)
	checkPage(t, page, []wantPanel{wantChunks(guideChunks, false, text)})
	page = renderView(t, filepath.Join(dir, "b.html"), "-file", "guide.md", jsonl)
	checkPage(t, page, []wantPanel{wantChunks(guideChunks, false, "")})
	if !strings.Contains(page, "The source is not readable under .") {
		t.Errorf("page does not say the source was not found")
	}

	// Both files: two documents in one panel, positions across the collection.
	page = renderView(t, filepath.Join(dir, "c.html"), "-root", src, jsonl)
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(findAll(root, func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "doc") })); n != 2 {
		t.Errorf("collection of two files shows %d shaded documents, want 2", n)
	}

	// A JSONL file without its extension is found by its content.
	renamed := filepath.Join(dir, "chunks.out")
	if err := os.WriteFile(renamed, []byte(readFile(t, jsonl)), 0o644); err != nil {
		t.Fatal(err)
	}
	page = renderView(t, filepath.Join(dir, "d.html"), "-root", src, "-file", "guide.md", renamed)
	checkPage(t, page, []wantPanel{wantChunks(guideChunks, false, text)})

	// A changed source is not shaded wrongly: the chunks are listed.
	changed := strings.Replace(text, "Download the archive", "Fetch the tarball", 1)
	if err := os.WriteFile(filepath.Join(src, "guide.md"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	page = renderView(t, filepath.Join(dir, "e.html"), "-root", src, "-file", "guide.md", jsonl)
	checkPage(t, page, []wantPanel{wantChunks(guideChunks, false, "")})
	if !strings.Contains(page, "the source changed since it was chunked") {
		t.Errorf("page does not say the source changed")
	}
}

func TestViewFlagErrors(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "c.jsonl")
	split(t, jsonl, guide)
	twostepJSONL := filepath.Join(dir, "t.jsonl")
	split(t, twostepJSONL, "-chunker", "twostep", guide)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no file", nil, "want exactly one FILE, got 0"},
		{"two files", []string{guide, guide}, "want exactly one FILE, got 2"},
		{"missing file", []string{"testdata/view/none.md"}, "none.md"},
		{"folder", []string{"testdata/view"}, "is a folder"},
		{"compare empty", []string{"-compare", " ", guide}, "-compare: no options given"},
		{"compare unknown", []string{"-compare", "max_chars=10", guide}, `-compare: unknown option "max_chars" for chunker markdown (did you mean max_char?)`},
		{"compare other chunker", []string{"-compare", "max_chunk_size=10", guide}, `-compare: option "max_chunk_size" belongs to chunker twostep, not markdown`},
		{"compare bad value", []string{"-compare", "max_char=lots", guide}, `-compare: chunker markdown: max_char: want an integer, got the string "lots"`},
		{"compare invalid", []string{"-compare", "max_char=10", guide}, "-compare: chunker markdown: chunking: invalid options: chunk_overlap (128) must be < max_char (10)"},
		{"compare no name", []string{"-compare", "=3", guide}, `-compare: "=3" has no option name`},
		{"compare not pair", []string{"-compare", "max_char", guide}, `-compare: "max_char" is not name=value`},
		{"compare twice", []string{"-compare", "max_char=300,max-char=400", guide}, "-compare: option max_char is given twice"},
		{"compare invalid over flags", []string{"-max-char", "100", "-compare", "chunk_overlap=150", guide}, "-compare: chunker markdown: chunking: invalid options: chunk_overlap (150) must be < max_char (100)"},
		{"compare collection", []string{"-compare", "max_char=300", jsonl}, "-compare needs a document"},
		{"root with document", []string{"-root", "x", guide}, "-root and -file apply to a stored collection"},
		{"collection flags without chunker", []string{"-max-char", "100", twostepJSONL}, "chunker flags with a collection of chunker twostep's chunks need -chunker twostep"},
		{"file not in collection", []string{"-file", "nope.md", jsonl}, "-file nope.md: no chunk of the collection has this file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runApp(t, registry.Default().Entries(), append([]string{"view", "-o", filepath.Join(dir, "v.html")}, tt.args...)...)
			if code == exitOK || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("chunk view %q = %d, stderr %q; want a failure saying %q", tt.args, code, errOut, tt.wantErr)
			}
		})
	}
}

func TestParseOverrides(t *testing.T) {
	ts, err := registry.Default().Lookup("twostep")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want map[string]any
	}{
		{"max_chunk_size=100", map[string]any{"max_chunk_size": "100"}},
		{" max-chunk-size = 100 , -word-overlap=3", map[string]any{"max_chunk_size": "100", "word_overlap": "3"}},
		{"headers=1,2,max_chunk_size=100", map[string]any{"headers_to_split_on": "1,2", "max_chunk_size": "100"}},
		{"add_headers=true,headers_to_split_on=1, 3", map[string]any{"add_headers": "true", "headers_to_split_on": "1,3"}},
	}
	for _, tt := range tests {
		got, err := parseOverrides(ts, nil, tt.in)
		if err != nil || !mapsEqual(got, tt.want) {
			t.Errorf("parseOverrides(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FuzzParseOverrides: any text is options or an error, never a panic,
// and what parses resolves.
func FuzzParseOverrides(f *testing.F) {
	for _, s := range []string{"max_char=1000,chunk_overlap=0", "headers=1,2,max_chunk_size=3", "=", ",", "a=b=c", "-max-char=5"} {
		f.Add(s)
	}
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := parseOverrides(md, nil, s)
		if err != nil {
			return
		}
		if _, err := md.Resolve(raw); err != nil {
			t.Errorf("parseOverrides(%q) = %v, which does not resolve: %v", s, raw, err)
		}
	})
}

// FuzzViewPage: whatever the document, its page shows its text exactly
// and stays inert.
func FuzzViewPage(f *testing.F) {
	f.Add([]byte(readFileF(f, guide)), uint8(60))
	f.Add([]byte("</script><img src=x onerror=alert(1)>\n\n# <b>h</b>\n\n| a |\n| - |\n| b |\n"), uint8(40))
	md, err := registry.Default().Lookup("markdown")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, maxChar uint8) {
		if !utf8.Valid(src) {
			return
		}
		raw := map[string]any{"max_char": int(maxChar%200) + 20, "chunk_overlap": 5, "min_char": 10}
		c, err := md.New(raw)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: "f.md", Content: src})
		if err != nil {
			return
		}
		resolved, _ := md.Resolve(raw)
		m, err := measureOf(resolved)
		if err != nil {
			t.Fatal(err)
		}
		p := panelInput{heading: "fuzz", m: m, chunks: measured(chunks, m)}
		doc := viewDoc{name: "f.md", text: string(src)}
		for i := range chunks {
			doc.chunks = append(doc.chunks, i)
		}
		doc.shaded = shadable(doc.text, p.chunks, doc.chunks) == ""
		p.docs = []viewDoc{doc}
		var b bytes.Buffer
		if err := newPage("fuzz", []panelInput{p}).render(&b); err != nil {
			t.Fatal(err)
		}
		want := wantChunks(chunks, false, "")
		if doc.shaded {
			want.shaded, want.text = true, string(src)
		}
		checkPage(t, b.String(), []wantPanel{want})
	})
}

func readFileF(f *testing.F, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

func TestSegmentsOf(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		ranges []rangeChunk
		want   string // start-end:covering chunks, space separated
	}{
		{"none", 5, nil, "0-5:"},
		{"whole", 5, []rangeChunk{{0, 0, 5}}, "0-5:0"},
		{"gaps", 10, []rangeChunk{{0, 2, 4}, {1, 6, 8}}, "0-2: 2-4:0 4-6: 6-8:1 8-10:"},
		{"adjacent", 6, []rangeChunk{{0, 0, 3}, {1, 3, 6}}, "0-3:0 3-6:1"},
		{"overlap", 10, []rangeChunk{{0, 0, 6}, {1, 4, 10}}, "0-4:0 4-6:0,1 6-10:1"},
		{"contained", 10, []rangeChunk{{0, 0, 10}, {1, 3, 5}}, "0-3:0 3-5:0,1 5-10:0"},
		{"same range", 4, []rangeChunk{{1, 0, 4}, {0, 0, 4}}, "0-4:0,1"},
		{"three deep", 9, []rangeChunk{{0, 0, 6}, {1, 2, 8}, {2, 4, 9}}, "0-2:0 2-4:0,1 4-6:0,1,2 6-8:1,2 8-9:2"},
		{"unordered", 6, []rangeChunk{{1, 3, 6}, {0, 0, 4}}, "0-3:0 3-4:0,1 4-6:1"},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range segmentsOf(tt.n, tt.ranges) {
			cover := make([]string, len(s.cover))
			for i, c := range s.cover {
				cover[i] = strconv.Itoa(c)
			}
			got = append(got, strconv.Itoa(s.start)+"-"+strconv.Itoa(s.end)+":"+strings.Join(cover, ","))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%s: segmentsOf = %s, want %s", tt.name, g, tt.want)
		}
	}
}

func TestHistogramOf(t *testing.T) {
	tests := []struct {
		name    string
		sizes   []int
		budget  int
		bars    string // lo-hi:count
		maxAxis string
	}{
		{"budget edge", []int{1, 100, 101, 110}, 100, "0-10:1 91-100:1 101-110:2", "110 characters"},
		{"no budget", []int{5, 10, 20}, 0, "5-5:1 10-10:1 20-20:1", "20 characters"},
		{"overflow", []int{50, 10000}, 100, "41-50:1 291-10000:1", "290+ characters"},
		{"empty", nil, 50, "", "55 characters"},
	}
	for _, tt := range tests {
		h := histogramOf(tt.sizes, tt.budget, unitChars)
		var got []string
		for _, b := range h.Bars {
			got = append(got, strconv.Itoa(b.Lo)+"-"+strconv.Itoa(b.Hi)+":"+strconv.Itoa(b.Count))
		}
		if g := strings.Join(got, " "); g != tt.bars || h.MaxLabel != tt.maxAxis || h.HasBudget != (tt.budget > 0) {
			t.Errorf("%s: bars %s, axis %q; want %s, %q", tt.name, g, h.MaxLabel, tt.bars, tt.maxAxis)
		}
	}
}

// TestCountWordsAsTwostep holds countWords to the two-step chunker's own
// word counts: the "(N words" of every chunk in its golden files.
func TestCountWordsAsTwostep(t *testing.T) {
	for _, tt := range []struct {
		s string
		n int
	}{
		{"", 0}, {"a", 1}, {" a  b\tc\n", 3}, {"a\u00a0b", 2}, {"a\u200bb", 1}, {"a\u3000b\u2028c", 3},
		{"a\x1cb\x1fc", 3}, {"a\x1bb", 1}, {"a\u0085b\u202fc\u205fd\u1680e", 5}, {"日本語 テキスト", 2},
	} {
		if got := countWords(tt.s); got != tt.n {
			t.Errorf("countWords(%q) = %d, want %d", tt.s, got, tt.n)
		}
	}
	goldens, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "chunking", "twostep", "testdata", "*.golden"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no two-step golden files: %v", err)
	}
	head := regexp.MustCompile(`(?m)^### chunk \d+ \((\d+) words, \d+ chars\) .*\n┌────\n`)
	checked := 0
	for _, g := range goldens {
		s := readFile(t, g)
		for _, m := range head.FindAllStringSubmatchIndex(s, -1) {
			want, _ := strconv.Atoi(s[m[2]:m[3]])
			end := strings.Index(s[m[1]:], "\n└────\n")
			if end < 0 {
				t.Fatalf("%s: unterminated chunk", g)
			}
			if got := countWords(s[m[1] : m[1]+end]); got != want {
				t.Errorf("%s: countWords = %d, the two-step chunker counts %d", filepath.Base(g), got, want)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("checked %d chunks of the two-step golden files, want many", checked)
	}
}
