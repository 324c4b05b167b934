// Package html is chunkstream's HTML chunker: a page's main content is
// rendered to Markdown with a map from every rendered byte back to the
// page's bytes, the Markdown chunker chunks that rendering with its own
// options and rules, and each chunk's span is mapped back to the page.
//
//	c, err := html.New(html.DefaultConfig()) // the Markdown chunker's options
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "a.html", Content: page})
//
// Config is markdown.Config, so a page and its Markdown twin chunk alike
// and every rule of the Markdown chunker applies. Pages are read with the
// tokenizer of golang.org/x/net/html, not its tree builder: the offset
// map needs each token's bytes, and it is about twice as fast.
//
// docs/chunkers.md ("HTML", "HTML details") has the rules: charsets (a
// byte that does not decode is ErrCharset, which matches
// chunking.ErrNotUTF8), the main content, the rendering, offsets and
// spans, metadata, and why no readability port.
package html
