package markdown

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// Config is the Markdown chunker's configuration. Each field is the
// reference MarkdownChunker's parameter of the same name; DefaultConfig
// holds the reference's defaults. Zero is a value like any other: start
// from DefaultConfig and change the fields you mean to change.
type Config struct {
	// MinChar (min_char, default 1024): a section shorter than this many
	// characters (tokens with Tokenizer) absorbs the next one while the two
	// fit in MaxChar. 0 fuses nothing.
	MinChar int
	// MaxChar (max_char, default 2048): the largest chunk in characters
	// (tokens with Tokenizer), overlap included; must be > 0.
	MaxChar int
	// ChunkOverlap (chunk_overlap, default 128): characters (tokens with
	// Tokenizer) of whole words repeated from the previous chunk of a
	// split section; 0 for none; must be < MaxChar.
	ChunkOverlap int
	// Tokenizer (tokenizer, default ""; chunkstream's own, not a reference
	// parameter): the encoding whose tokens the three sizes count,
	// "cl100k_base" or "o200k_base"; "" counts characters, as the
	// reference does.
	Tokenizer string
	// TargetChar (target_char, default 0: off; chunkstream's own, not a
	// reference parameter): target mode in characters. The mean chunk is
	// about this many characters, no chunk is longer than Ceiling of it
	// (unless oversize), and the sizes MinChar, MaxChar and ChunkOverlap
	// are the target's own (TargetSizes): leave them at DefaultConfig's.
	// docs/chunkers.md (Target mode) has the rules. Not with Tokenizer
	// (use TargetTokens).
	TargetChar int
	// TargetTokens (target_tokens, default 0: off; chunkstream's own):
	// target mode in tokens of Tokenizer, which it needs; otherwise as
	// TargetChar.
	TargetTokens int
}

// DefaultConfig returns the reference MarkdownChunker's defaults.
func DefaultConfig() Config {
	return Config{MinChar: 1024, MaxChar: 2048, ChunkOverlap: 128}
}

// Validate checks max_char > 0, min_char ≥ 0, 0 ≤ chunk_overlap <
// max_char and that tokenizer is empty or a known encoding; in target
// mode, that the target is positive, in the unit of the tokenizer, and
// that min_char, max_char and chunk_overlap are DefaultConfig's (the
// target sets them). A violation wraps chunking.ErrInvalidOptions and
// names the field by its parameter name.
func (cfg Config) Validate() error {
	if err := cfg.validateTarget(); err != nil {
		return err
	}
	switch {
	case cfg.Tokenizer != "" && !slices.Contains(tokens.Names(), cfg.Tokenizer):
		return fmt.Errorf("%w: tokenizer must be empty (characters) or one of %s, got %q", chunking.ErrInvalidOptions, strings.Join(tokens.Names(), ", "), cfg.Tokenizer)
	case cfg.MaxChar <= 0:
		return fmt.Errorf("%w: max_char must be > 0, got %d", chunking.ErrInvalidOptions, cfg.MaxChar)
	case cfg.MinChar < 0:
		return fmt.Errorf("%w: min_char must be ≥ 0, got %d", chunking.ErrInvalidOptions, cfg.MinChar)
	case cfg.ChunkOverlap < 0:
		return fmt.Errorf("%w: chunk_overlap must be ≥ 0, got %d", chunking.ErrInvalidOptions, cfg.ChunkOverlap)
	case cfg.ChunkOverlap >= cfg.MaxChar:
		return fmt.Errorf("%w: chunk_overlap (%d) must be < max_char (%d)", chunking.ErrInvalidOptions, cfg.ChunkOverlap, cfg.MaxChar)
	}
	return nil
}

// Chunker is the Markdown chunker. It is immutable and safe for
// concurrent use.
type Chunker struct {
	minChar, maxChar, overlap int
	target                    int // target mode's mean chunk size; 0: off
	cfg                       Config
	enc                       *tokens.Encoding // nil: sizes count characters
	noSpans                   bool             // benchmarks only: chunks without spans
	noIndex                   bool             // tests only: token counts without section indexes
	scanned                   *int             // tests only: bytes the token counter scanned are added here
}

// New returns a Chunker for cfg, or cfg's Validate error. With a
// Tokenizer, the first chunker of an encoding loads its tables (a
// fraction of a second, once per process).
func New(cfg Config) (*Chunker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Chunker{minChar: cfg.MinChar, maxChar: cfg.MaxChar, overlap: cfg.ChunkOverlap, cfg: cfg}
	if n := cfg.target(); n > 0 {
		c.target = n
		c.minChar, c.maxChar, c.overlap = TargetSizes(n)
	}
	if cfg.Tokenizer != "" {
		enc, err := tokens.Get(cfg.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("markdown: %w", err)
		}
		c.enc = enc
	}
	return c, nil
}

// Config returns the configuration the chunker was built with.
func (c *Chunker) Config() Config {
	return c.cfg
}

// Extensions returns the file extensions ChunkFolder reads: those of the
// formats the chunker reads, Markdown (MarkdownExtensions: .md,
// .markdown), MDX (MDXExtensions: .mdx) and text (TextExtensions: .txt,
// .text), which is valid Markdown.
func Extensions() []string { return fileio.TextFormatExtensions() }

// MarkdownExtensions returns the extensions of the format markdown.
func MarkdownExtensions() []string { return fileio.MarkdownExtensions() }

// MDXExtensions returns the extensions of the format mdx.
func MDXExtensions() []string { return fileio.MDXExtensions() }

// TextExtensions returns the extensions of the format text.
func TextExtensions() []string { return fileio.TextExtensions() }

// IsMDX reports whether doc is MDX: Format "mdx", or no Format and a Path
// ending in ".mdx".
func IsMDX(doc chunking.Document) bool {
	if doc.Format != "" {
		return strings.EqualFold(doc.Format, "mdx")
	}
	return chunking.Ext(doc.Path) == ".mdx"
}

// Chunk splits one Markdown (or MDX, see IsMDX) document into chunks. The
// formats "markdown", "md", "mdx", "text" and "" are accepted; any other
// wraps chunking.ErrUnsupportedFormat. Content that is not UTF-8 wraps
// chunking.ErrNotUTF8 and names the document. Chunk is pure: it is
// ChunkFunc with a context that never ends, collecting the chunks.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Collect(c.ChunkFunc)(context.Background(), doc)
}

// ChunkFunc is Chunk for documents too large to hold all their chunks at
// once, or whose time is bounded: it calls yield with each chunk in order
// (the same chunks Chunk returns) and stops early when yield returns
// false. Only the section being chunked is held, so memory stays bounded
// by the document plus its longest section. It looks at ctx between
// blocks and every few tens of kilobytes of work while a section is cut
// and packed, and when ctx ends returns an error wrapping ctx's error
// (the chunks yielded so far stand). Warnings are returned at the end.
func (c *Chunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return c.chunkPolled(poll.New(ctx), doc, yield)
}

// chunkPolled is ChunkFunc counting its work on pl and stopping when pl
// sees its context end (tests read the count and end it at will).
func (c *Chunker) chunkPolled(pl *poll.Poller, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := cmp.Or(doc.Path, "document")
	switch strings.ToLower(doc.Format) {
	case "", "markdown", "md", "mdx", "text", "txt":
	default:
		return nil, fmt.Errorf("markdown: %s: %w %q", name, chunking.ErrUnsupportedFormat, doc.Format)
	}
	if err := codec.CheckText(doc.Content); err != nil {
		return nil, fmt.Errorf("markdown: %s: %w", name, err)
	}
	if pl.Check() {
		return nil, fmt.Errorf("markdown: %s: %w", name, pl.Err())
	}
	src := doc.Content
	var offsets *OffsetMap // cleaned MDX offsets → doc.Content offsets
	if IsMDX(doc) {
		src, offsets = cleanMDX(src, !c.noSpans)
	}
	lines := srcspan.New(doc.Content)
	scratch := make(chunking.Metadata, 0, 6+len(doc.Metadata)) // chunking.NewChunk copies it
	index := 0
	m, release := measure.ForEncoding(c.enc, measure.OfChars())
	defer release()
	if ctr := m.Counter(); c.scanned != nil && ctr != nil {
		defer func(before int) { *c.scanned += ctr.Scanned() - before }(ctr.Scanned())
	}
	warns := c.split(src, m, pl, func(r rawChunk) bool {
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
		ch := chunking.NewChunk(r.content, md)
		if !c.noSpans && r.start < r.end {
			ch = ch.WithSpan(lines.Span(offsets.Start(r.start), offsets.End(r.end), r.content))
		}
		return yield(ch)
	})
	if pl.Stopped() {
		return nil, fmt.Errorf("markdown: %s: %w", name, pl.Err())
	}
	for i := range warns {
		warns[i].File = doc.Path
	}
	return warns, nil
}

var hdrKeys = [3]string{"h1", "h2", "h3"}

// ChunkFile reads and chunks one file. Chunk metadata "file" is p as
// given, cleaned, with "/" separators; the format follows the extension.
// It stops, as ChunkFunc does, when ctx ends.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.File(ctx, "markdown", p, fileio.Collect(c.ChunkFunc))
}

// ChunkFolder chunks every file under dir with one of Extensions, listed
// by chunking.WalkFolder ("file" relative to dir). A file that cannot be
// read or chunked becomes a warning; only a failed walk of dir or the end
// of ctx is an error.
func (c *Chunker) ChunkFolder(ctx context.Context, dir string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Folder(ctx, "markdown", dir, Extensions(), fileio.Collect(c.ChunkFunc))
}

// Chunker implements chunking.Chunker.
var (
	_ chunking.Chunker       = (*Chunker)(nil)
	_ chunking.StreamChunker = (*Chunker)(nil)
)

// Baseline names the parse the chunker is built on: goldmark's CommonMark
// block parsers alone, the baseline of its benchmarks.
func (c *Chunker) Baseline() string { return "goldmark-blocks" }

// ParseOnly runs only that parse over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error {
	mdblocks.ParseOnly(doc.Content)
	return nil
}
