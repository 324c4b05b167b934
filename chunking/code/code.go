package code

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
	"github.com/chunkstream/chunkstream/chunking/internal/srcspan"
	"github.com/chunkstream/chunkstream/internal/codec"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// Config is the code chunker's configuration. Zero is a value like any
// other: start from DefaultConfig.
type Config struct {
	// MaxChar (max_char, default 2048): the largest chunk in characters
	// (tokens with Tokenizer), not counting the whitespace that ends it;
	// must be > 0. A declaration that fits is never split.
	MaxChar int
	// Language (language, default ""): the language of every document,
	// one of Languages; "" takes it from each document's extension.
	Language string
	// Tokenizer (tokenizer, default ""): the encoding whose tokens
	// MaxChar counts, "cl100k_base" or "o200k_base"; "" counts
	// characters.
	Tokenizer string
	// TargetChar (target_char, default 0: off; chunkstream's own):
	// target mode. The mean chunk aims at TargetChar characters, none
	// longer than the ceiling, 1.5× (measure.Ceiling), unless oversize:
	// a declaration up to the ceiling is never split, neighbours are
	// packed into near-equal shares of the target, and a declaration over
	// the ceiling becomes near-equal pieces of its own. It replaces
	// MaxChar, which must be left at its default.
	TargetChar int
	// TargetTokens (target_tokens, default 0: off): TargetChar in tokens
	// of Tokenizer, which it needs.
	TargetTokens int
}

// DefaultConfig returns the defaults: max_char 2048, the language from
// the extension, characters.
func DefaultConfig() Config { return Config{MaxChar: 2048} }

// Validate checks max_char > 0, that language is empty or known, that
// tokenizer is empty or a known encoding, and the target options: ≥ 0,
// one at most, target_char without tokenizer, target_tokens with it,
// max_char left at its default beside either. A violation wraps
// chunking.ErrInvalidOptions and names the field by its option name.
func (cfg Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", chunking.ErrInvalidOptions, fmt.Sprintf(format, args...))
	}
	if opt, problem := chunking.CheckTarget(cfg.TargetChar, cfg.TargetTokens, cfg.Tokenizer); opt != "" {
		return bad("%s", problem)
	}
	switch {
	case cfg.target() > 0 && cfg.MaxChar != DefaultConfig().MaxChar:
		return bad("%s sets max_char itself: leave it out (got max_char %d)", cfg.targetName(), cfg.MaxChar)
	}
	switch {
	case cfg.MaxChar <= 0:
		return fmt.Errorf("%w: max_char must be > 0, got %d", chunking.ErrInvalidOptions, cfg.MaxChar)
	case cfg.Language != "" && !slices.Contains(Languages(), cfg.Language):
		return fmt.Errorf("%w: language must be empty (from the extension) or one of %s, got %q", chunking.ErrInvalidOptions, strings.Join(Languages(), ", "), cfg.Language)
	case cfg.Tokenizer != "" && !slices.Contains(tokens.Names(), cfg.Tokenizer):
		return fmt.Errorf("%w: tokenizer must be empty (characters) or one of %s, got %q", chunking.ErrInvalidOptions, strings.Join(tokens.Names(), ", "), cfg.Tokenizer)
	}
	return nil
}

// target returns the configured target, in either unit, or 0.
func (cfg Config) target() int { return max(cfg.TargetChar, cfg.TargetTokens) }

// targetName returns the name of the target option set.
func (cfg Config) targetName() string {
	if cfg.TargetTokens > 0 {
		return "target_tokens"
	}
	return "target_char"
}

// Languages returns the languages the chunker reads: go, python,
// javascript, typescript and tsx.
func Languages() []string {
	out := make([]string, len(languages))
	for i, l := range languages {
		out[i] = l.name
	}
	return out
}

// Extensions returns the file extensions whose language the chunker
// knows.
func Extensions() []string { return ExtensionsOf("") }

// ExtensionsOf returns the file extensions a chunker with the option
// language reads, which its ChunkFolder walks: the language's own, or
// every language's when it is "" (unknown: none).
func ExtensionsOf(language string) []string {
	var out []string
	for _, l := range languages {
		if language == "" || l.name == language {
			out = append(out, l.exts...)
		}
	}
	return out
}

// LanguageOf returns the language of a file path by its extension
// (chunking.Ext: any case, a URI's query or fragment left out), or ""
// when no language has it.
func LanguageOf(p string) string {
	ext := chunking.Ext(p)
	for _, l := range languages {
		if slices.Contains(l.exts, ext) {
			return l.name
		}
	}
	return ""
}

// cut is where a piece of a document starts, and the symbol path of
// what the piece holds.
type cut struct {
	at   int
	path string
	// depth is how deep inside split statements the cut falls (0: between
	// top-level statements); detach marks a cut that parts a statement
	// from the comment lines above it, or parts comment lines after a
	// statement that do not fit together. Target mode prices cuts by
	// them (cutCost).
	depth  int
	detach bool
}

// outline is what a language's parser finds in a document: the cuts
// (ascending, the first at 0), syntax errors (ascending offsets) and the
// package and import lines.
type outline struct {
	cuts    []cut
	errs    []synErr
	imports string
}

// language is one language the chunker reads.
type language struct {
	name string
	exts []string
	// module is the symbol path of code outside any declaration, from the
	// document's path (Go: replaced by the package clause's name).
	module func(p string) string
	parse  func(ctx context.Context, src []byte, module string, fits func(start, end int) bool, pl *poll.Poller) (outline, error)
}

var languages = []language{
	{name: "go", exts: []string{".go"}, module: func(p string) string { return cmp.Or(stem(p), "main") }, parse: parseGo},
	{name: "python", exts: []string{".py", ".pyi", ".pyw"}, module: func(p string) string { return cmp.Or(pyModule(p), "__main__") }, parse: parsePython},
	{name: "javascript", exts: []string{".js", ".jsx", ".mjs", ".cjs"}, module: jsModule, parse: parseJS("javascript")},
	{name: "typescript", exts: []string{".ts", ".mts", ".cts"}, module: jsModule, parse: parseJS("typescript")},
	{name: "tsx", exts: []string{".tsx"}, module: jsModule, parse: parseJS("tsx")},
}

func jsModule(p string) string { return cmp.Or(stem(p), "(module)") }

// stem returns a path's file name without its extension.
func stem(p string) string {
	b := path.Base(p)
	if p == "" || b == "." || b == "/" {
		return ""
	}
	return strings.TrimSuffix(b, path.Ext(b))
}

func parseGo(_ context.Context, src []byte, module string, fits func(int, int) bool, pl *poll.Poller) (outline, error) {
	lines, errs := scanGo(src)
	pl.Add(len(src))
	module = cmp.Or(goPackage(src, lines), module)
	o := &lineOutline{src: src, lines: lines, fits: fits, name: goName, pl: pl}
	o.split(0, len(lines), module, true, false)
	return outline{cuts: atZero(o.cuts, module), errs: errs, imports: goImports(src, lines)}, nil
}

func parsePython(_ context.Context, src []byte, module string, fits func(int, int) bool, pl *poll.Poller) (outline, error) {
	lines, errs := scanPython(src)
	pl.Add(len(src))
	o := &lineOutline{src: src, lines: lines, py: true, fits: fits, name: pyName, pl: pl}
	o.split(0, len(lines), module, true, false)
	return outline{cuts: atZero(o.cuts, module), errs: errs, imports: pyImports(src, lines)}, nil
}

// atZero returns cuts with a first cut at 0, of module, when they have
// none there (a file of comments alone has no statement).
func atZero(cuts []cut, module string) []cut {
	if len(cuts) == 0 || cuts[0].at != 0 {
		return append([]cut{{at: 0, path: module}}, cuts...)
	}
	return cuts
}

// Chunker is the code chunker. It is immutable and safe for concurrent
// use.
type Chunker struct {
	maxChar  int
	target   int // target mode's target, in the unit of maxChar; 0: off
	tokens   bool
	language string
	enc      *tokens.Encoding // nil: sizes count characters
}

// New returns a Chunker for cfg, or cfg's Validate error.
func New(cfg Config) (*Chunker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Chunker{maxChar: cfg.MaxChar, target: cfg.target(), tokens: cfg.TargetTokens > 0, language: cfg.Language}
	if cfg.Tokenizer != "" {
		enc, err := tokens.Get(cfg.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("code: %w", err)
		}
		c.enc = enc
	}
	return c, nil
}

// Config returns the configuration the chunker was built with.
func (c *Chunker) Config() Config {
	cfg := Config{MaxChar: c.maxChar, Language: c.language}
	if c.enc != nil {
		cfg.Tokenizer = c.enc.Name()
	}
	switch {
	case c.target > 0 && c.tokens:
		cfg.TargetTokens = c.target
	case c.target > 0:
		cfg.TargetChar = c.target
	}
	return cfg
}

// languageOf returns the language of doc: the chunker's, else its path's.
func (c *Chunker) languageOf(doc chunking.Document, name string) (language, error) {
	switch strings.ToLower(doc.Format) {
	case "", "code":
	default:
		return language{}, fmt.Errorf("code: %s: %w %q", name, chunking.ErrUnsupportedFormat, doc.Format)
	}
	lang := c.language
	if lang == "" {
		lang = LanguageOf(doc.Path)
	}
	if i := slices.IndexFunc(languages, func(l language) bool { return l.name == lang }); i >= 0 {
		return languages[i], nil
	}
	return language{}, fmt.Errorf("code: %s: %w: no language has the extension %q (set the option language to one of %s)",
		name, chunking.ErrUnsupportedFormat, chunking.Ext(doc.Path), strings.Join(Languages(), ", "))
}

// Chunk splits one source file into chunks (see the package
// documentation). The format must be "" or "code"; the language is the
// chunker's, else the path's extension's. Content that is not UTF-8
// wraps chunking.ErrNotUTF8 and names the document.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Collect(c.ChunkFunc)(context.Background(), doc)
}

// ChunkFunc is Chunk handing out the chunks one at a time, in order; it
// stops early when yield returns false, and when ctx ends returns an
// error wrapping ctx's error (the chunks yielded so far stand).
func (c *Chunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return c.chunkPolled(ctx, poll.New(ctx), doc, yield)
}

func (c *Chunker) chunkPolled(ctx context.Context, pl *poll.Poller, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := cmp.Or(doc.Path, "document")
	lang, err := c.languageOf(doc, name)
	if err != nil {
		return nil, err
	}
	if err := codec.CheckText(doc.Content); err != nil {
		return nil, fmt.Errorf("code: %s: %w", name, err)
	}
	if pl.Check() {
		return nil, fmt.Errorf("code: %s: %w", name, pl.Err())
	}
	base := 0
	if len(doc.Content) >= 3 && string(doc.Content[:3]) == "\uFEFF" {
		base = 3
	}
	src := doc.Content[base:]
	if len(src) == 0 {
		return nil, nil
	}
	m, release := measure.ForEncoding(c.enc, measure.OfChars())
	defer release()
	limit := c.limit()
	fits := func(s, e int) bool {
		t := trimEnd(src, s, e)
		if t-s <= limit {
			return true // a character is at least one byte
		}
		if c.enc == nil && t-s > 4*limit {
			return false // a character is at most four
		}
		return m.LenLimit(src[s:t], limit) <= limit
	}
	out, err := lang.parse(ctx, src, lang.module(doc.Path), fits, pl)
	if err != nil {
		return nil, fmt.Errorf("code: %s: %w", name, err)
	}
	if pl.Stopped() {
		return nil, fmt.Errorf("code: %s: %w", name, pl.Err())
	}
	p := packer{c: c, src: src, m: m, cuts: out.cuts, pl: pl}
	lines := srcspan.New(doc.Content)
	var warns []chunking.Warning
	for _, e := range out.errs {
		warns = append(warns, chunking.Warning{Kind: chunking.WarnMalformed, File: doc.Path, Line: lines.At(base + min(e.off, len(src)-1)), Text: "syntax error: " + e.msg})
	}
	errAt := 0
	index := 0
	p.pack(func(r piece) bool {
		content := string(src[r.start:r.end])
		md := chunking.Metadata{{Key: "language", Value: lang.name}, {Key: "symbols", Value: r.symbols}, {Key: "index", Value: index}}
		if doc.Path != "" {
			md = append(md, chunking.Field{Key: "file", Value: doc.Path})
		}
		if r.oversize {
			md = append(md, chunking.Field{Key: "oversize", Value: true})
			warns = append(warns, chunking.Warning{Kind: chunking.WarnOversize, File: doc.Path, Line: lines.At(base + r.start),
				Text: fmt.Sprintf("%s has no statement boundary to split at: chunk %d is larger than %s", r.symbols[len(r.symbols)-1], index, c.limitName())})
		}
		var errs []any
		for errAt < len(out.errs) && (out.errs[errAt].off < r.end || r.end == len(src)) {
			e := out.errs[errAt]
			at := base + min(e.off, len(src)-1)
			ln := lines.At(at)
			col := at - lineStart(doc.Content, at) + 1
			errs = append(errs, strconv.Itoa(ln)+":"+strconv.Itoa(col)+": "+e.msg)
			errAt++
		}
		if len(errs) > 0 {
			md = append(md, chunking.Field{Key: "parse_errors", Value: errs})
		}
		if out.imports != "" {
			md = append(md, chunking.Field{Key: "imports", Value: out.imports})
		}
		if len(doc.Metadata) > 0 {
			md = md.Merge(doc.Metadata)
		}
		index++
		ch := chunking.NewChunk(content, md).WithSpan(lines.Span(base+r.start, base+r.end, content))
		return yield(ch)
	})
	if pl.Stopped() {
		return nil, fmt.Errorf("code: %s: %w", name, pl.Err())
	}
	return warns, nil
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// trimEnd returns e moved back over the ASCII whitespace that ends
// src[s:e].
func trimEnd(src []byte, s, e int) int {
	for e > s {
		switch src[e-1] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			e--
			continue
		}
		break
	}
	return e
}

// ChunkFile reads and chunks one file; its language follows its
// extension unless the chunker has one. Chunk metadata "file" is p as
// given, cleaned, with "/" separators.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.File(ctx, "code", p, fileio.Collect(c.ChunkFunc))
}

// ChunkFolder chunks every file under dir with one of the extensions of
// ExtensionsOf(the chunker's language), listed by chunking.WalkFolder
// ("file" relative to dir). A file that cannot be read or chunked becomes
// a warning; only a failed walk of dir or the end of ctx is an error.
func (c *Chunker) ChunkFolder(ctx context.Context, dir string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Folder(ctx, "code", dir, ExtensionsOf(c.language), fileio.Collect(c.ChunkFunc))
}

// Chunker implements chunking.Chunker.
var (
	_ chunking.Chunker       = (*Chunker)(nil)
	_ chunking.StreamChunker = (*Chunker)(nil)
)

// Baseline names the parse the chunker is built on, the baseline of its
// benchmarks: the language's scanner, with no chunking.
func (c *Chunker) Baseline() string { return "code-parse" }

// ParseOnly runs only that parse over doc and discards the result.
func (c *Chunker) ParseOnly(doc chunking.Document) error {
	lang, err := c.languageOf(doc, cmp.Or(doc.Path, "document"))
	if err != nil {
		return err
	}
	_, err = lang.parse(context.Background(), doc.Content, "", func(int, int) bool { return true }, new(poll.Poller))
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }

func sortErrs(e []synErr) {
	slices.SortStableFunc(e, func(a, b synErr) int { return cmp.Compare(a.off, b.off) })
}

// limit returns the largest chunk not marked oversize: max_char, or in
// target mode the target's ceiling.
func (c *Chunker) limit() int {
	if c.target > 0 {
		return measure.Ceiling(c.target)
	}
	return c.maxChar
}

// limitName names the limit in a warning.
func (c *Chunker) limitName() string {
	if c.target > 0 {
		name := "target_char"
		if c.tokens {
			name = "target_tokens"
		}
		return fmt.Sprintf("the ceiling %d of %s %d", c.limit(), name, c.target)
	}
	return fmt.Sprintf("max_char %d", c.maxChar)
}
