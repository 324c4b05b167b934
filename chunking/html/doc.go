// Package html is chunkstream's HTML chunker: a page's main content is
// rendered to Markdown with a map from every rendered byte back to the
// page's bytes, the Markdown chunker chunks that rendering with its own
// options and rules, and each chunk's span is mapped back to the page.
//
//	c, err := html.New(html.DefaultConfig()) // the Markdown chunker's options
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "a.html", Content: page})
//
// Config is markdown.Config: min_char, max_char, chunk_overlap and
// tokenizer size the chunks exactly as they size a Markdown document's,
// so a page and its Markdown twin chunk alike (same header paths, close
// chunk counts) and every rule of the Markdown chunker (sections at
// H1–H3, fusing, atomic code and tables, token budgets) applies.
// docs/chunkers.md (HTML) has the rules a user sees; the decisions below
// make them precise.
//
// # Decisions
//
//   - Parsing: the tokenizer of golang.org/x/net/html, with HTML's
//     optional end tags (p, li, dt, dd, tr, td, th, thead, tbody, tfoot,
//     headings) closed as the standard closes them. The tokenizer, not
//     the tree builder, because it gives each token's bytes: the offset
//     map needs them, and it is about twice as fast. Misnested inline
//     tags are read as written (an end tag closes the nearest open
//     element of its name, or nothing). At most 512 elements are open:
//     deeper start tags are read as absent, so the work stays linear.
//   - Charsets: a byte-order mark, else a <meta> charset in the first
//     1024 bytes (golang.org/x/net/html/charset's prescan), else UTF-8.
//     The standard's last resort, a guess from the bytes or the locale,
//     is not taken: a page that declares nothing must be UTF-8. A byte
//     that does not decode is an error naming the charset and its offset
//     in the page (ErrCharset, which also matches chunking.ErrNotUTF8, so
//     a worker dead-letters it as not_utf8), never U+FFFD. A page
//     declared in a legacy charset is decoded a character at a time to
//     keep its offsets (slower than UTF-8 pages). A client that
//     re-encodes a page to UTF-8 puts a UTF-8 byte-order mark in front,
//     which overrides the page's <meta>.
//   - Main content: the content of <main> (and role="main") elements
//     when the page has one holding text, else the whole page; either
//     way without what is dropped: script, style, template, noscript,
//     iframe, object, embed, applet, canvas, svg, math, audio, video,
//     map, button, select, textarea, datalist, noembed, noframes, nav,
//     search; header, footer and aside unless inside main, article or
//     section (the standard's landmark rule: inside those they belong
//     to the content); any element with role navigation, banner,
//     contentinfo, complementary or search, with the hidden attribute,
//     aria-hidden="true", or a style with display:none or
//     visibility:hidden; and a link to a fragment whose text has no
//     letter or digit (a heading's "¶" permalink, a footnote's "↩").
//     A readability port (scoring nodes by text density) was measured
//     and not taken: docs/chunkers.md (HTML) has the figures.
//   - Rendering: h1–h6 are ATX headings; p, div and the other blocks
//     paragraphs; ul, ol (start, value) and menu lists with nested
//     items indented by their marker; blockquote "> "; dl a term
//     paragraph and ": " definitions; pre fenced code, its language
//     from a language-X, lang-X, highlight-source-X or highlight-X
//     class on it, an ancestor or its code child, the fence longer than
//     any backtick run inside; code outside pre a code span; a table a
//     pipe table (its first row the header, '|' escaped, <br> a space)
//     when every cell holds one paragraph at most, else (a layout
//     table) its cells' blocks in order; a caption, and text before the
//     first cell, a paragraph before it, text between cells (which HTML
//     moves before the table) part of the cell before, so the rendering
//     keeps the page's order; img and area their alt text; links and emphasis their text.
//     Whitespace collapses as HTML collapses it, except in pre; <br> is
//     a line break (a space in headings and table cells); character
//     references are decoded. A line of text that Markdown would read as
//     structure (a heading, list or quote marker, a fence, a thematic
//     break, '<', '|', "$$", front matter) gets one backslash before the
//     character that would; so does a heading's closing run of '#'.
//     Empty headings, paragraphs and tables are left out; hr is a block
//     boundary.
//   - Offsets: text copied from the page maps byte for byte; a decoded
//     character reference or a collapsed run of whitespace maps to its
//     bytes as a whole; Markdown syntax the rendering adds (markers,
//     fences, pipes, backslashes) maps to no bytes, at the place of the
//     content it marks. A chunk's span runs from the page byte of its
//     first byte to the end of its last, so it starts and ends on the
//     page's content and covers nothing the rendering added; a decoded
//     page's offsets are mapped once more, to the bytes as given. The
//     Markdown chunker's span rules carry over (a part of a split table
//     or code block spans the rows or lines it holds). Content is
//     Markdown, so a span is verbatim only when the page's bytes there
//     are the chunk's text.
//   - Metadata: the Markdown chunker's keys (h1, h2, h3, index, file,
//     oversize), then title (the first <title> outside svg, whitespace
//     collapsed) and lang (the html element's lang attribute), both ""
//     when absent, then the document's metadata, which wins on a clash.
//   - Formats accepted: "" and "html". Warnings are the Markdown
//     chunker's, their lines mapped to the page's.
package html
