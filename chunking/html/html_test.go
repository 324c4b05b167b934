package html_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
)

func mustNew(t testing.TB, cfg html.Config) *html.Chunker {
	t.Helper()
	c, err := html.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// text returns the chunks' contents joined by blank lines.
func text(t *testing.T, page string) string {
	t.Helper()
	chunks, _, err := mustNew(t, html.DefaultConfig()).Chunk(chunking.Document{Content: []byte(page)})
	if err != nil {
		t.Fatalf("Chunk(%q): %v", page, err)
	}
	var parts []string
	for _, c := range chunks {
		parts = append(parts, c.Content())
	}
	return strings.Join(parts, "\n\n")
}

// TestMainContent holds the main-content rule of docs/chunkers.md (HTML),
// case by case.
func TestMainContent(t *testing.T) {
	for _, tc := range []struct{ name, page, want string }{
		{"scripts and styles", `<p>a</p><script>b</script><style>c</style><template><p>d</p></template><noscript>e</noscript><p>f</p>`, "a\n\nf"},
		{"forms' controls", `<p>a <button>copy</button> <select><option>x</select> <textarea>t</textarea> b</p>`, "a b"},
		{"embedded media and graphics", `<p>a</p><svg><text>s</text></svg><math><mi>x</mi></math><video>v</video><iframe>i</iframe><p>b</p>`, "a\n\nb"},
		{"navigation", `<nav><a>home</a></nav><p>a</p><div role="navigation">crumbs</div><div role="search">find</div>`, "a"},
		{"page header, footer and aside", `<header>site</header><aside>side</aside><p>a</p><footer>foot</footer>`, "a"},
		{"landmark roles", `<div role="banner">b</div><p>a</p><div role="contentinfo">c</div><div role="Complementary">d</div>`, "a"},
		{"header, footer and aside of an article", `<article><header>title</header><p>a</p><aside>note</aside><footer>by</footer></article>`, "title\n\na\n\nnote\n\nby"},
		{"header of a section", `<section><header>h</header><p>a</p></section>`, "h\n\na"},
		{"hidden", `<p hidden>h</p><p aria-hidden="true">i</p><p style="color: red; display : none">j</p><p style="visibility:hidden">k</p><p>a</p>`, "a"},
		{"aria-hidden false is shown", `<p aria-hidden="false">a</p>`, "a"},
		{"main only", `<div>menu</div><main><p>a</p></main><div>after</div>`, "a"},
		{"role main", `<div>menu</div><div role="main"><p>a</p></div><p>after</p>`, "a"},
		{"two mains", `<main><p>a</p></main><p>x</p><main hidden><p>b</p></main><main><p>c</p></main>`, "a\n\nc"},
		{"main inside main", `<main><p>a</p><main><p>b</p></main><p>c</p></main><p>outside</p>`, "a\n\nb\n\nc"},
		{"role main inside main", `<main><p>a</p><div role="main"><p>b</p></div><p>c</p></main><p>outside</p>`, "a\n\nb\n\nc"},
		{"main in any case", `<div>menu</div><mAiN><p>a</p></mAiN><p>after</p>`, "a"},
		{"role attribute in any case", `<div>menu</div><div ROLE="Main"><p>a</p></div><p>after</p>`, "a"},
		{"spaces around the role's '='", `<div>menu</div><div role = "main"><p>a</p></div><p>after</p>`, "a"},
		{"a '<' in an attribute before the role", `<div>menu</div><div title="a<b" role="main"><p>a</p></div><p>after</p>`, "a"},
		{"a quoted '<' before the role", `<div>menu</div><div title="a<b c='x" role="main"><p>a</p></div><p>after</p>`, "a"},
		{"role main by a character reference", `<div>menu</div><div role="&#109;ain"><p>a</p></div><p>after</p>`, "a"},
		{"role list: the first recognised role counts", `<div>menu</div><div role="content main note"><p>a</p></div><div role="note main"><p>n</p></div><p>after</p>`, "a"},
		{"role list: a chrome role first drops", `<div role="navigation main"><p>n</p></div><p>a</p>`, "a"},
		{"hiding style in any case", `<p style="DISPLAY:NONE">h</p><p style="Visibility: Hidden">i</p><p>a</p>`, "a"},
		{"an empty main reads the page", `<main></main><p>a</p>`, "a"},
		{"'main' in text is no main", `<p>the main road</p>`, "the main road"},
		{"main inside a template is no main", `<template><main>t</main></template><p>a</p>`, "a"},
		{"permalinks", `<h2>Title <a href="#t">¶</a></h2><p>a<a href="#fn1">↩</a> <a href="#s">see</a></p>`, "## Title\n\na see"},
		{"unclosed dropped element", `<p>a</p><nav><p>b`, "a"},
		{"dropped inline element joins", `<p>a<button>x</button>b</p>`, "ab"},
		{"dropped block element separates", `<p>a<nav>x</nav>b</p>`, "a\n\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := text(t, tc.page); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestMetadata checks title and lang: the first title outside svg, the
// html element's lang, "" when absent, and the request's metadata
// winning.
func TestMetadata(t *testing.T) {
	c := mustNew(t, html.DefaultConfig())
	for _, tc := range []struct {
		page, title, lang string
		extra             chunking.Metadata
	}{
		{`<html lang="de"><title> A &amp;  B </title><p>x`, "A & B", "de", nil},
		{`<svg><title>icon</title></svg><title>Page</title><p>x`, "Page", "", nil},
		{`<p>x`, "", "", nil},
		{`<title>Page</title><p>x`, "Mine", "", chunking.Metadata{{Key: "title", Value: "Mine"}}},
	} {
		chunks, _, err := c.Chunk(chunking.Document{Content: []byte(tc.page), Metadata: tc.extra})
		if err != nil || len(chunks) != 1 {
			t.Fatalf("Chunk(%q) = %d chunks, %v", tc.page, len(chunks), err)
		}
		ch := chunks[0]
		if ch.Get("title", nil) != tc.title || ch.Get("lang", nil) != tc.lang {
			t.Errorf("Chunk(%q): title %q, lang %q; want %q, %q", tc.page, ch.Get("title", nil), ch.Get("lang", nil), tc.title, tc.lang)
		}
		if keys := ch.Metadata().Keys(); strings.Join(keys, ",") != "index,title,lang" {
			t.Errorf("Chunk(%q): keys %v, want index, title, lang", tc.page, keys)
		}
	}
}

// TestCharsets checks decoding: by byte-order mark, by <meta>, UTF-8
// when nothing is declared; bytes that do not decode are an error naming
// the charset and the byte, matching ErrCharset and chunking.ErrNotUTF8.
func TestCharsets(t *testing.T) {
	c := mustNew(t, html.DefaultConfig())
	for _, tc := range []struct {
		name    string
		page    []byte
		want    string // the chunk's text, or the error's
		wantErr bool
	}{
		{"utf-8 undeclared", []byte("<p>caf\xc3\xa9</p>"), "café", false},
		{"utf-8 byte-order mark", []byte("\xef\xbb\xbf<p>a</p>"), "a", false},
		{"latin-1 by meta", []byte(`<meta charset="latin1"><p>caf` + "\xe9</p>"), "café", false},
		{"windows-1252 by http-equiv", []byte(`<meta http-equiv="content-type" content="text/html; charset=windows-1252"><p>` + "\x93q\x94</p>"), "“q”", false},
		{"byte-order mark beats meta", []byte("\xef\xbb\xbf<meta charset=\"latin1\"><p>caf\xc3\xa9</p>"), "café", false},
		{"utf-16 meta read as utf-8", []byte(`<meta charset="utf-16"><p>caf` + "\xc3\xa9</p>"), "café", false},
		{"invalid utf-8 undeclared", []byte("<p>caf\xe9 au lait</p>"), "html: document: invalid utf-8 at byte 6 (e9 20 61 75)", true},
		{"windows-1252's C1 controls by a latin-1 label", []byte(`<meta charset="iso-8859-1"><p>caf` + "\xe9 \x81\x8d\x8f\x90\x9d</p>"), "café \u0081\u008d\u008f\u0090\u009d", false},
		{"iso-8859-2's C1 controls", []byte(`<meta charset="iso-8859-2"><p>` + "\xb1\x80\x9f</p>"), "ą\u0080\u009f", false},
		{"windows-1253's C1 controls", []byte(`<meta charset="windows-1253"><p>` + "\xe1\x81\x9f</p>"), "α\u0081\u009f", false},
		{"a byte windows-1253 leaves out", []byte(`<meta charset="windows-1253"><p>` + "\xe1\xaa</p>"), "html: document: invalid windows-1253 at byte 33 (aa)", true},
		{"a byte iso-8859-8 leaves out", []byte(`<meta charset="iso-8859-8"><p>` + "\x80\xa1</p>"), "html: document: invalid iso-8859-8 at byte 31 (a1)", true},
		{"invalid shift_jis", []byte(`<meta charset="shift_jis"><p>` + "\x82\xa0\xff</p>"), "html: document: invalid shift_jis at byte 31 (ff)", true},
		{"a charset without a decoder", []byte(`<meta charset="iso-2022-kr"><p>a</p>`), "html: document: the page declares a charset that has no decoder (replacement)", true},
		{"an unknown charset is no declaration", []byte(`<meta charset="no-such-thing"><p>a</p>`), "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks, _, err := c.Chunk(chunking.Document{Content: tc.page})
			if tc.wantErr {
				if err == nil || err.Error() != tc.want || !errors.Is(err, html.ErrCharset) || !errors.Is(err, chunking.ErrNotUTF8) {
					t.Fatalf("Chunk = %v, want the error %q matching ErrCharset and ErrNotUTF8", err, tc.want)
				}
				return
			}
			if err != nil || len(chunks) != 1 || chunks[0].Content() != tc.want {
				t.Fatalf("Chunk = %v, %v; want %q", chunks, err, tc.want)
			}
		})
	}
}

// TestFormats accepts "html" and "", refuses others.
func TestFormats(t *testing.T) {
	c := mustNew(t, html.DefaultConfig())
	for _, f := range []string{"", "html", "HTML"} {
		if _, _, err := c.Chunk(chunking.Document{Format: f, Content: []byte("<p>a")}); err != nil {
			t.Errorf("format %q: %v", f, err)
		}
	}
	if _, _, err := c.Chunk(chunking.Document{Format: "markdown", Content: []byte("a")}); !errors.Is(err, chunking.ErrUnsupportedFormat) {
		t.Errorf("format markdown: %v, want ErrUnsupportedFormat", err)
	}
}

// TestCancel stops a long page when its context ends.
func TestCancel(t *testing.T) {
	c := mustNew(t, html.DefaultConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	page := []byte(strings.Repeat("<p>some text</p>\n", 100000))
	if _, err := c.ChunkFunc(ctx, chunking.Document{Content: page}, func(chunking.Chunk) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Fatalf("ChunkFunc(cancelled) = %v, want context.Canceled", err)
	}
}

// TestDeepNesting reads elements nested past the bound as text, and
// stays within the bound of work: nested inline elements, unclosed.
func TestDeepNesting(t *testing.T) {
	c := mustNew(t, html.Config{MaxChar: 100, MinChar: 0})
	for _, page := range []string{
		strings.Repeat("<span>", 100000) + "x" + strings.Repeat("</b>", 100000),
		strings.Repeat("<ul><li>", 5000) + "x",
		strings.Repeat("<div><table><tr><td>", 3000) + "x",
	} {
		chunks, _, err := c.Chunk(chunking.Document{Content: []byte(page)})
		if err != nil || len(chunks) == 0 || !strings.Contains(chunks[len(chunks)-1].Content(), "x") {
			t.Errorf("Chunk(%.40q…) = %d chunks, %v", page, len(chunks), err)
		}
	}
}

// TestConcurrent uses one Chunker from many goroutines (run with -race)
// and expects the same output as a sequential run.
func TestConcurrent(t *testing.T) {
	cases := loadCases(t)
	c := mustNew(t, html.Config{MaxChar: 100, MinChar: 20, ChunkOverlap: 30})
	want := make([][]chunking.Chunk, len(cases))
	for i, tc := range cases {
		want[i], _, _ = c.Chunk(chunking.Document{Path: tc.Name, Content: tc.Input})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(cases))
	for range 8 {
		wg.Go(func() {
			for i, tc := range cases {
				got, _, _ := c.Chunk(chunking.Document{Path: tc.Name, Content: tc.Input})
				if len(got) != len(want[i]) {
					errs <- tc.Name + ": chunk count differs"
					continue
				}
				for k := range got {
					if got[k].Hash() != want[i][k].Hash() || got[k].Span().String() != want[i][k].Span().String() {
						errs <- tc.Name + ": a chunk differs"
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPropertiesHold chunks pages that once broke checkPage's properties
// (a span that left kept text out, or one that overlapped its
// neighbour's) and holds the properties on their chunks.
func TestPropertiesHold(t *testing.T) {
	line := strings.Repeat("word ", 8)
	for _, tc := range []struct {
		name string
		page string
		cfg  html.Config
	}{
		{
			"a blank line of pre inside blockquote",
			"<blockquote><pre>" + strings.Repeat(line+"\n", 3) + "\n" + strings.Repeat(line+"\n", 3) + "</pre></blockquote>",
			html.Config{MaxChar: 140},
		},
		{
			"blank lines of pre inside nested quotes and a list",
			"<blockquote><ul><li><blockquote><pre>" + strings.Repeat(line+"\n", 3) + "\n\n" + strings.Repeat(line+"\n", 3) + "</pre></blockquote></ul></blockquote>",
			html.Config{MaxChar: 170},
		},
		{
			// The chunkers' whitespace holds U+001C–U+001F: a code line cut
			// there drops it, as it drops a space.
			"a code line cut at an information separator",
			"<pre>00\x1d000000000000000",
			html.Config{MinChar: 7, MaxChar: 25, ChunkOverlap: 21},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks, _, err := mustNew(t, tc.cfg).Chunk(chunking.Document{Path: "p.html", Content: []byte(tc.page)})
			if err != nil {
				t.Fatal(err)
			}
			if err := html.CheckPage([]byte(tc.page), chunks, tc.cfg); err != nil {
				for i, ch := range chunks {
					sp := ch.Span()
					t.Logf("chunk %d [%d,%d) %q", i, sp.Start, sp.End, ch.Content())
				}
				t.Fatal(err)
			}
		})
	}
}

// TestHeadingIsOneLine holds the heading rule of docs/chunkers.md (HTML
// details): a block that starts inside a heading after its text ends the
// heading there, and is read as a block; before the text it is a space.
func TestHeadingIsOneLine(t *testing.T) {
	for _, tc := range []struct{ name, page, want, key, heading string }{
		{"a list inside a heading", `<h2>Setup<ul><li>one<li>two</ul></h2><p>body</p>`, "## Setup\n\n- one\n\n- two\n\nbody", "h2", "Setup"},
		{"a heading left open ends at the next block", `<h1>Title<p>a</p><p>b</p>`, "# Title\n\na\n\nb", "h1", "Title"},
		{"a rule after the heading's text", `<h2>Title<hr>after</h2>`, "## Title\n\nafter", "h2", "Title"},
		{"a wrapper before the heading's text", `<h2><div>Title</div><span> sub</span></h2><p>x`, "## Title sub\n\nx", "h2", "Title sub"},
		{"a block after the heading's text", `<h2><div>Title</div><div>sub</div></h2><p>x`, "## Title\n\nsub\n\nx", "h2", "Title"},
		{"inline elements stay in the heading", `<h3>A <em>b</em> <code>c</code><br>d</h3><p>x`, "### A b `c` d\n\nx", "h3", "A b `c` d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := text(t, tc.page); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			chunks, _, err := mustNew(t, html.Config{MaxChar: 1000}).Chunk(chunking.Document{Content: []byte(tc.page)})
			if err != nil || len(chunks) == 0 {
				t.Fatalf("Chunk = %d chunks, %v", len(chunks), err)
			}
			if got := chunks[0].Get(tc.key, nil); got != tc.heading {
				t.Errorf("%s = %v, want %q", tc.key, got, tc.heading)
			}
		})
	}
}

// TestOpenHeadingStaysLinear counts the bytes a page left with an open
// h1 gives (contents and header paths): they grow with the page, not as
// its square, as they would if the page were all one heading that every
// chunk carries.
func TestOpenHeadingStaysLinear(t *testing.T) {
	c := mustNew(t, html.Config{MaxChar: 200})
	out := func(n int) (page, got int) {
		src := "<h1>Title" + strings.Repeat("<p>Some words of a paragraph that goes on for a while, as real ones do.</p>\n", n)
		chunks, _, err := c.Chunk(chunking.Document{Content: []byte(src)})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			got += len(ch.Content())
			for _, k := range []string{"h1", "h2", "h3"} {
				v, _ := ch.Get(k, "").(string)
				got += len(v)
			}
		}
		return len(src), got
	}
	small, smallOut := out(100)
	large, largeOut := out(800)
	for _, m := range [][2]int{{small, smallOut}, {large, largeOut}} {
		if m[1] > 2*m[0] {
			t.Errorf("a %d-byte page gives %d bytes of chunks and header paths, more than twice its size", m[0], m[1])
		}
	}
	if largeOut*small > 2*smallOut*large {
		t.Errorf("output grows faster than the page: %d bytes for %d, %d for %d", smallOut, small, largeOut, large)
	}
}

// TestPreLineEndings reads a pre element's line breaks as HTML's input
// stream has them: "\r\n" and a lone "\r" are "\n" (docs/chunkers.md,
// HTML details); the chunks' spans still cover the page's bytes.
func TestPreLineEndings(t *testing.T) {
	for _, tc := range []struct{ name, page, want string }{
		{"crlf", "<pre>\r\na\r\nb\r\n\r\nc\r\n</pre>", "```\na\nb\n\nc\n```"},
		{"lone cr", "<pre>a\rb\r\rc</pre>", "```\na\nb\n\nc\n```"},
		{"cr and lf in separate text", "<pre>a\r<b>b</b>\nc</pre>", "```\na\nb\nc\n```"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := text(t, tc.page); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			cfg := html.Config{MaxChar: 8}
			chunks, _, err := mustNew(t, cfg).Chunk(chunking.Document{Content: []byte(tc.page)})
			if err != nil {
				t.Fatal(err)
			}
			if err := html.CheckPage([]byte(tc.page), chunks, cfg); err != nil {
				t.Error(err)
			}
		})
	}
}
