package markdown

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
)

// Default option values, the reference MarkdownChunker's.
const (
	DefaultMinChar      = 1024
	DefaultMaxChar      = 2048
	DefaultChunkOverlap = 128
)

// Specs returns the chunker's options, under the reference's parameter
// names.
func Specs() []chunking.OptionSpec {
	return []chunking.OptionSpec{
		{Name: "min_char", Kind: chunking.IntOption, Default: DefaultMinChar,
			Usage: "sections shorter than this many characters absorb the next one (reference MarkdownChunker min_char)"},
		{Name: "max_char", Kind: chunking.IntOption, Default: DefaultMaxChar,
			Usage: "largest chunk in characters, overlap included (reference MarkdownChunker max_char)"},
		{Name: "chunk_overlap", Kind: chunking.IntOption, Default: DefaultChunkOverlap,
			Usage: "characters of whole words repeated between chunks of one split section (reference MarkdownChunker chunk_overlap)"},
	}
}

// Chunker is the Markdown chunker of the spec (§2). It is immutable and
// safe for concurrent use.
type Chunker struct {
	minChar, maxChar, overlap int
}

// New returns a Chunker for opts (absent options take their defaults). It
// checks max_char > 0, min_char ≥ 0 and 0 ≤ chunk_overlap < max_char; a
// violation wraps chunking.ErrInvalidOptions and names the option.
func New(opts chunking.Options) (*Chunker, error) {
	c := &Chunker{
		minChar: opts.Int("min_char", DefaultMinChar),
		maxChar: opts.Int("max_char", DefaultMaxChar),
		overlap: opts.Int("chunk_overlap", DefaultChunkOverlap),
	}
	switch {
	case c.maxChar <= 0:
		return nil, fmt.Errorf("%w: max_char must be > 0, got %d", chunking.ErrInvalidOptions, c.maxChar)
	case c.minChar < 0:
		return nil, fmt.Errorf("%w: min_char must be ≥ 0, got %d", chunking.ErrInvalidOptions, c.minChar)
	case c.overlap < 0:
		return nil, fmt.Errorf("%w: chunk_overlap must be ≥ 0, got %d", chunking.ErrInvalidOptions, c.overlap)
	case c.overlap >= c.maxChar:
		return nil, fmt.Errorf("%w: chunk_overlap (%d) must be < max_char (%d)", chunking.ErrInvalidOptions, c.overlap, c.maxChar)
	}
	return c, nil
}

// IsMDX reports whether doc is MDX: Format "mdx", or no Format and a Path
// ending in ".mdx".
func IsMDX(doc chunking.Document) bool {
	if doc.Format != "" {
		return strings.EqualFold(doc.Format, "mdx")
	}
	return strings.EqualFold(path.Ext(doc.Path), ".mdx")
}

// Chunk splits one Markdown (or MDX, see IsMDX) document into chunks. The
// formats "markdown", "md", "mdx", "text" and "" are accepted; any other
// wraps chunking.ErrUnsupportedFormat. Content that is not UTF-8 wraps
// chunking.ErrNotUTF8 and names the document.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	var chunks []chunking.Chunk
	warns, err := c.ChunkFunc(doc, func(ch chunking.Chunk) bool {
		chunks = append(chunks, ch)
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return chunks, warns, nil
}

// ChunkFunc is Chunk for documents too large to hold all their chunks at
// once: it calls yield with each chunk in order (the same chunks Chunk
// returns) and stops early when yield returns false. Only the section
// being chunked is held, so memory stays bounded by the document plus its
// longest section. Warnings and errors are returned at the end.
func (c *Chunker) ChunkFunc(doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := doc.Path
	if name == "" {
		name = "document"
	}
	switch strings.ToLower(doc.Format) {
	case "", "markdown", "md", "mdx", "text", "txt":
	default:
		return nil, fmt.Errorf("markdown: %s: %w %q", name, chunking.ErrUnsupportedFormat, doc.Format)
	}
	if !utf8.Valid(doc.Content) {
		return nil, fmt.Errorf("markdown: %s: %w (first bad byte at offset %d)", name, chunking.ErrNotUTF8, firstInvalid(doc.Content))
	}
	src := doc.Content
	if IsMDX(doc) {
		src = CleanMDX(src)
	}
	scratch := make(chunking.Metadata, 0, 6+len(doc.Metadata)) // chunking.NewChunk copies it
	index := 0
	warns := c.split(src, func(r rawChunk) bool {
		md := scratch[:0]
		for lvl := range 3 {
			if r.hdr.set[lvl] {
				md = append(md, chunking.Field{Key: hdrKeys[lvl], Value: r.hdr.title[lvl]})
			}
		}
		md = append(md, chunking.Field{Key: "index", Value: index})
		if doc.Path != "" {
			md = append(md, chunking.Field{Key: "file", Value: doc.Path})
		}
		if r.oversize {
			md = append(md, chunking.Field{Key: "oversize", Value: true})
		}
		if len(doc.Metadata) > 0 {
			md = md.Merge(doc.Metadata)
		}
		index++
		return yield(chunking.NewChunk(r.content, md))
	})
	return warnings(doc.Path, warns), nil
}

var hdrKeys = [3]string{"h1", "h2", "h3"}

func warnings(file string, ws []chunking.Warning) []chunking.Warning {
	for i := range ws {
		ws[i].File = file
	}
	return ws
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// ChunkFile reads and chunks one file. Chunk metadata "file" is path as
// given, cleaned, with "/" separators; the format follows the extension.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	content, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("markdown: %w", err)
	}
	name := path.Clean(filepath.ToSlash(p))
	return c.Chunk(chunking.Document{Path: name, Content: content})
}

// DefaultExtensions are the file extensions ChunkFolder reads when given
// none.
var DefaultExtensions = []string{".md", ".mdx"}

// ChunkFolder chunks every file under dir with one of exts (nil means
// DefaultExtensions), with the walk rules of chunking.WalkFolder: in
// relative-path byte order, "file" relative to dir with "/" separators. A
// file that cannot be read or chunked becomes a warning and the walk goes
// on; only a failed walk of dir itself or a cancelled ctx is an error.
func (c *Chunker) ChunkFolder(ctx context.Context, dir string, exts []string) ([]chunking.Chunk, []chunking.Warning, error) {
	if exts == nil {
		exts = DefaultExtensions
	}
	files, warns, err := chunking.WalkFolder(ctx, dir, exts)
	if err != nil {
		return nil, warns, fmt.Errorf("markdown: %w", err)
	}
	var out []chunking.Chunk
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return out, warns, err
		}
		content, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			warns = append(warns, chunking.Warning{File: rel, Text: "cannot read: " + err.Error()})
			continue
		}
		chunks, ws, err := c.Chunk(chunking.Document{Path: rel, Content: content})
		warns = append(warns, ws...)
		if err != nil {
			warns = append(warns, chunking.Warning{File: rel, Text: err.Error()})
			continue
		}
		out = append(out, chunks...)
	}
	return out, warns, nil
}

// Chunker implements chunking.Chunker.
var _ chunking.Chunker = (*Chunker)(nil)
