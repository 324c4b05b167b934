package twostep

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// Config is the two-step chunker's configuration. Each field is the
// reference parameter of the same name (the reference two-step chunker's);
// DefaultConfig holds the reference's defaults. Zero is a value like any
// other (no overlap, merging off): start from DefaultConfig and change
// the fields you mean to change.
type Config struct {
	// MaxChunkSize (max_chunk_size, default 512): the chunk budget in
	// words (tokens with Tokenizer); a longer section is split into
	// sentences and atomic units. At least 1.
	MaxChunkSize int
	// ChunkOverlap (chunk_overlap, default 0): characters (tokens with
	// Tokenizer) of the previous chunk's end prefixed to each chunk,
	// starting at a word. At least 0.
	ChunkOverlap int
	// WordOverlap (word_overlap, default 0): words of the previous chunk's
	// end prefixed to each chunk (with Tokenizer: whole words of at most
	// this many tokens); when set it beats ChunkOverlap. At least 0 and
	// below MaxChunkSize.
	WordOverlap int
	// AddHeaders (add_headers, default false): start each chunk with the
	// header lines of its hierarchy that its text lacks.
	AddHeaders bool
	// MergeSmallChunks (merge_small_chunks, default true): merge
	// consecutive compatible chunks while they fit the budget.
	MergeSmallChunks bool
	// HeadersToSplitOn (headers_to_split_on, default 1–6; CLI flag
	// -headers): the header levels that start a section, each within 1–6,
	// in any order; an empty list splits on no header.
	HeadersToSplitOn []int
	// Tokenizer (tokenizer, default ""; chunkstream's own, not a reference
	// parameter): the encoding whose tokens max_chunk_size, word_overlap
	// and chunk_overlap count, "cl100k_base" or "o200k_base"; "" counts
	// words and characters, as the reference does.
	Tokenizer string
	// TargetChar (target_char, default 0: off; chunkstream's own, not a
	// reference parameter): target mode in characters: the mean chunk is
	// about this many characters and none is longer than
	// measure's ceiling of it, one and a half times (unless a single unit
	// is); the sizes count characters, and MaxChunkSize, ChunkOverlap and
	// WordOverlap are the target's own: leave them at DefaultConfig's.
	// docs/chunkers.md (Target mode) has the rules. Not with Tokenizer
	// (use TargetTokens).
	TargetChar int
	// TargetTokens (target_tokens, default 0: off; chunkstream's own):
	// target mode in tokens of Tokenizer, which it needs; otherwise as
	// TargetChar.
	TargetTokens int
}

// DefaultConfig returns the reference's defaults.
func DefaultConfig() Config {
	return Config{
		MaxChunkSize:     512,
		MergeSmallChunks: true,
		HeadersToSplitOn: []int{1, 2, 3, 4, 5, 6},
	}
}

// Validate checks max_chunk_size ≥ 1, 0 ≤ word_overlap < max_chunk_size,
// chunk_overlap ≥ 0, header levels within 1–6 and that tokenizer is empty
// or a known encoding; in target mode, that the target is positive, in
// the tokenizer's unit, and that max_chunk_size, chunk_overlap and
// word_overlap are DefaultConfig's (the target sets them). A violation wraps chunking.ErrInvalidOptions and
// names the field by its parameter name.
func (cfg Config) Validate() error {
	bad := func(name string, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", chunking.ErrInvalidOptions, name, fmt.Sprintf(format, args...))
	}
	if err := cfg.validateTarget(bad); err != nil {
		return err
	}
	if cfg.MaxChunkSize < 1 {
		return bad("max_chunk_size", "must be at least 1, got %d", cfg.MaxChunkSize)
	}
	if cfg.WordOverlap < 0 || cfg.WordOverlap >= cfg.MaxChunkSize {
		return bad("word_overlap", "must be in [0, max_chunk_size=%d), got %d", cfg.MaxChunkSize, cfg.WordOverlap)
	}
	if cfg.ChunkOverlap < 0 {
		return bad("chunk_overlap", "must be at least 0, got %d", cfg.ChunkOverlap)
	}
	for _, l := range cfg.HeadersToSplitOn {
		if l < 1 || l > 6 {
			return bad("headers_to_split_on", "levels must be within 1-6, got %d", l)
		}
	}
	if cfg.Tokenizer != "" && !slices.Contains(tokens.Names(), cfg.Tokenizer) {
		return bad("tokenizer", "must be empty (words) or one of %s, got %q", strings.Join(tokens.Names(), ", "), cfg.Tokenizer)
	}
	return nil
}

// Chunker is the two-step chunker. It is immutable and safe for
// concurrent use.
type Chunker struct {
	maxWords    int // the budget: max_chunk_size, or the target's ceiling
	target      int // target mode's mean chunk size; 0: off
	cfg         Config
	charOverlap int
	wordOverlap int
	addHeaders  bool
	merge       bool
	splitOn     [7]bool
	enc         *tokens.Encoding // nil: sizes count words (overlap: words, characters)
	noSpans     bool             // benchmarks only: chunks without spans
}

// New returns a Chunker for cfg, or cfg's Validate error. The chunker
// keeps its own copy of cfg.HeadersToSplitOn. With a Tokenizer, the first
// chunker of an encoding loads its tables (a fraction of a second, once
// per process).
func New(cfg Config) (*Chunker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Chunker{
		maxWords:    cfg.MaxChunkSize,
		charOverlap: cfg.ChunkOverlap,
		wordOverlap: cfg.WordOverlap,
		addHeaders:  cfg.AddHeaders,
		merge:       cfg.MergeSmallChunks,
		cfg:         cfg,
	}
	if n := cfg.target(); n > 0 {
		c.target, c.maxWords, c.charOverlap, c.wordOverlap = n, measure.Ceiling(n), 0, 0
	}
	for _, l := range cfg.HeadersToSplitOn {
		c.splitOn[l] = true
	}
	if cfg.Tokenizer != "" {
		enc, err := tokens.Get(cfg.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("twostep: %w", err)
		}
		c.enc = enc
	}
	return c, nil
}

// Config returns the chunker's configuration, with HeadersToSplitOn
// ascending and without repeats (a fresh slice).
func (c *Chunker) Config() Config {
	levels := []int{}
	for l := 1; l <= 6; l++ {
		if c.splitOn[l] {
			levels = append(levels, l)
		}
	}
	cfg := c.cfg
	cfg.HeadersToSplitOn = levels
	return cfg
}

// Extensions returns the file extensions ChunkFolder reads: those of the
// formats the chunker reads, markdown (.md, .markdown), mdx (.mdx) and
// text (.txt, .text), the Markdown chunker's.
func Extensions() []string { return fileio.TextFormatExtensions() }

// ChunkFile reads and chunks one file. Chunk metadata "file" is p as
// given, cleaned, with "/" separators; the format follows the extension.
// It stops, as ChunkFunc does, when ctx ends.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.File(ctx, "twostep", p, fileio.Collect(c.ChunkFunc))
}

// ChunkFolder chunks every file under dir with one of Extensions, listed
// by chunking.WalkFolder ("file" relative to dir). A file that cannot be
// read or chunked becomes a warning; only a failed walk of dir or the end
// of ctx is an error.
func (c *Chunker) ChunkFolder(ctx context.Context, dir string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Folder(ctx, "twostep", dir, Extensions(), fileio.Collect(c.ChunkFunc))
}

// Chunker implements chunking.Chunker and chunking.StreamChunker.
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

// target returns the configured target, in either unit, or 0.
func (cfg Config) target() int { return max(cfg.TargetChar, cfg.TargetTokens) }

// validateTarget checks the target options (bad builds the error).
func (cfg Config) validateTarget(bad func(name, format string, args ...any) error) error {
	if opt, problem := chunking.CheckTarget(cfg.TargetChar, cfg.TargetTokens, cfg.Tokenizer); opt != "" {
		return fmt.Errorf("%w: %s", chunking.ErrInvalidOptions, problem)
	}
	if cfg.target() == 0 {
		return nil
	}
	name := "target_char"
	if cfg.TargetTokens > 0 {
		name = "target_tokens"
	}
	if d := DefaultConfig(); cfg.MaxChunkSize != d.MaxChunkSize || cfg.ChunkOverlap != d.ChunkOverlap || cfg.WordOverlap != d.WordOverlap {
		return bad(name, "sets max_chunk_size, chunk_overlap and word_overlap itself: leave them out (got %d, %d, %d)",
			cfg.MaxChunkSize, cfg.ChunkOverlap, cfg.WordOverlap)
	}
	return nil
}
