package html

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	xhtml "golang.org/x/net/html"
)

// Config is the HTML chunker's configuration: the Markdown chunker's,
// whose options size the chunks of the page's Markdown rendering the same
// way (min_char, max_char, chunk_overlap, tokenizer).
type Config = markdown.Config

// DefaultConfig returns the Markdown chunker's defaults.
func DefaultConfig() Config { return markdown.DefaultConfig() }

// Chunker is the HTML chunker. It is immutable and safe for concurrent
// use.
type Chunker struct {
	md *markdown.Chunker
}

// New returns a Chunker for cfg, or cfg's Validate error.
func New(cfg Config) (*Chunker, error) {
	md, err := markdown.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Chunker{md: md}, nil
}

// Config returns the configuration the chunker was built with.
func (c *Chunker) Config() Config { return c.md.Config() }

// Extensions returns the file extensions ChunkFolder reads: .html and
// .htm.
func Extensions() []string { return []string{".html", ".htm"} }

// Chunk splits one HTML page into chunks. The formats "html" and "" are
// accepted; any other wraps chunking.ErrUnsupportedFormat. A page that
// does not decode wraps ErrCharset (and chunking.ErrNotUTF8) and names
// the document and the byte. Chunk is pure: it is ChunkFunc with a
// context that never ends, collecting the chunks.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Collect(c.ChunkFunc)(context.Background(), doc)
}

// ChunkFunc is Chunk yielding each chunk in order; it stops early when
// yield returns false. It looks at ctx every few tens of kilobytes while
// it reads the page and while the Markdown chunker works, and when ctx
// ends returns an error wrapping ctx's error (the chunks yielded so far
// stand). Warnings are returned at the end.
func (c *Chunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := cmp.Or(doc.Path, "document")
	if f := strings.ToLower(doc.Format); f != "" && f != "html" {
		return nil, fmt.Errorf("html: %s: %w %q", name, chunking.ErrUnsupportedFormat, doc.Format)
	}
	pl := poll.New(ctx)
	p, err := parse(doc.Content, pl)
	if err != nil {
		return nil, fmt.Errorf("html: %s: %w", name, err)
	}
	md := chunking.Metadata{{Key: "title", Value: p.title}, {Key: "lang", Value: p.lang}}
	if len(doc.Metadata) > 0 {
		md = md.Merge(doc.Metadata)
	}
	lines := srcspan.New(doc.Content)
	warns, err := c.md.ChunkFunc(ctx, chunking.Document{Path: doc.Path, Format: "markdown", Content: p.md, Metadata: md},
		func(ch chunking.Chunk) bool {
			if sp := ch.Span(); sp.HasRange() {
				start, end := p.orig(sp.Start, sp.End)
				ch = ch.WithSpan(lines.Span(start, end, ch.Content()))
			}
			return yield(ch)
		})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("html: %s: %w", name, ctx.Err())
		}
		return nil, fmt.Errorf("html: %s: %w", name, err)
	}
	for i := range warns {
		warns[i].File = doc.Path
		if warns[i].Line > 0 {
			start, _ := p.orig(lineStart(p.md, warns[i].Line), lineStart(p.md, warns[i].Line)+1)
			warns[i].Line = lines.At(start)
		}
	}
	return warns, nil
}

// page is a page read: its Markdown and the map of its offsets back to
// the page.
type page struct {
	rendered
	dec  decoded
	size int // the page's bytes
}

// parse decodes and renders a page: its main content when it has a
// <main> element (or role="main") holding text, else the whole page
// without its chrome.
func parse(content []byte, pl *poll.Poller) (*page, error) {
	d, err := decode(content)
	if err != nil {
		return nil, err
	}
	if pl.Check() {
		return nil, pl.Err()
	}
	var rd rendered
	ok := false
	if mayHoldMain(d.text) {
		rd, ok = render(d.text, true, pl)
		ok = ok && len(rd.md) > 0
	}
	if !ok && !pl.Stopped() {
		rd, ok = render(d.text, false, pl)
	}
	if !ok {
		return nil, pl.Err()
	}
	return &page{rendered: rd, dec: d, size: len(content)}, nil
}

// orig maps a range of the Markdown to the page.
func (p *page) orig(start, end int) (int, int) {
	s, e := p.m.start(start), p.m.end(end)
	s, e = p.dec.orig(s, max(e, s))
	if e <= s { // text made from nothing: the byte where it stands
		s = min(s, p.size-1)
		e = s + 1
	}
	return s, e
}

// lineStart returns the offset of the 1-based line n of text.
func lineStart(text []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(text[off:], '\n')
		if i < 0 {
			return max(len(text)-1, 0)
		}
		off += i + 1
	}
	return min(off, max(len(text)-1, 0))
}

// ChunkFile reads and chunks one file. Chunk metadata "file" is p as
// given, cleaned, with "/" separators. It stops, as ChunkFunc does, when
// ctx ends.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.File(ctx, "html", p, fileio.Collect(c.ChunkFunc))
}

// ChunkFolder chunks every file under dir with one of Extensions, listed
// by chunking.WalkFolder ("file" relative to dir). A file that cannot be
// read or chunked becomes a warning; only a failed walk of dir or the end
// of ctx is an error.
func (c *Chunker) ChunkFolder(ctx context.Context, dir string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Folder(ctx, "html", dir, Extensions(), fileio.Collect(c.ChunkFunc))
}

// Chunker implements chunking.Chunker.
var (
	_ chunking.Chunker       = (*Chunker)(nil)
	_ chunking.StreamChunker = (*Chunker)(nil)
)

// Baseline names the parse the chunker is built on: the HTML tokenizer of
// golang.org/x/net/html, the baseline of its benchmarks.
func (c *Chunker) Baseline() string { return "x-net-html-tokenizer" }

// ParseOnly runs only that tokenizer over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error {
	z := xhtml.NewTokenizer(bytes.NewReader(doc.Content))
	for z.Next() != xhtml.ErrorToken {
	}
	return nil
}
