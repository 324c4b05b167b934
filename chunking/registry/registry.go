package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/email"
	"github.com/chunkstream/chunkstream/chunking/html"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/chunking/twostep"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

// ErrUnknownChunker reports a chunker name the registry does not know.
var ErrUnknownChunker = errors.New("registry: unknown chunker")

// Entry describes one chunker. Build entries with Define.
type Entry struct {
	// Name is the chunker's name on the wire and in -chunker flags.
	Name string
	// Formats are the document formats the chunker reads, the first its
	// own default.
	Formats []Format
	// Size is the option that bounds a chunk's size, in Unit; empty when
	// there is none.
	Size string
	Unit Unit
	// Targets are the options that, set (above 0), size chunks instead of
	// Size (target mode), in characters (tokens with a tokenizer); empty
	// when there are none.
	Targets []string
	// ChunkFolder, when set, chunks a whole path (a file or a folder) as
	// one input with c, a chunker this entry built (email: a mailbox).
	// Without it, callers walk folders with chunking.WalkFolder.
	ChunkFolder func(ctx context.Context, c chunking.Chunker, path string) ([]chunking.Chunk, []chunking.Warning, error)
	// Split, when set, splits the input at path into documents that chunk
	// one by one as they would in the whole (a mailbox into its threads):
	// Path is the part's id, so a producer sends one request per part.
	Split func(ctx context.Context, path string) ([]chunking.Document, []chunking.Warning, error)
	// Marks are metadata keys that every chunk of this chunker holds and
	// no other's does (see Registry.Made).
	Marks []string

	options []Option
	// walk, when set, returns the extensions a folder walk picks for the
	// resolved options (code: those of its language option), a part of
	// its formats' extensions.
	walk func(resolved map[string]any) []string
	// build decodes layers of raw options onto the defaults, validates
	// them and returns the canonical map and, when asked, the chunker.
	build func(layers []map[string]any, chunker bool) (map[string]any, chunking.Chunker, error)
	specs any // the []Spec[C] of Define, for the registry's tests
}

// Unit is what a chunker's size counts.
type Unit string

// Units of chunk sizes.
const (
	Characters Unit = "characters"
	Words      Unit = "words"
	Tokens     Unit = "tokens"
)

// Format is a document format a request may name.
type Format struct {
	Name       string   // on the wire ("markdown")
	Extensions []string // that imply it, lower case with the dot
	Text       bool     // must be valid UTF-8
	// NotWalked keeps the format's extensions out of the folder walks of
	// the chunkers that read it (Entry.WalkExtensions) unless asked for
	// (-ext): email-json's .json files are seldom mail.
	NotWalked bool
}

// The formats of chunkstream's chunkers.
var (
	Markdown  = Format{Name: "markdown", Extensions: markdown.MarkdownExtensions(), Text: true}
	MDX       = Format{Name: "mdx", Extensions: markdown.MDXExtensions(), Text: true}
	Text      = Format{Name: "text", Extensions: markdown.TextExtensions(), Text: true}
	Mbox      = Format{Name: "mbox", Extensions: email.MboxExtensions()}
	EML       = Format{Name: "eml", Extensions: []string{".eml"}}
	EmailJSON = Format{Name: "email-json", Extensions: []string{".json", ".jsonl"}, NotWalked: true}
	// HTML is decoded by the chunker, by the charset the page declares.
	HTML = Format{Name: "html", Extensions: html.Extensions()}
	Code = Format{Name: "code", Extensions: code.Extensions(), Text: true}
)

// Config is a chunker's configuration type: Validate names a bad field by
// its option name, wrapping chunking.ErrInvalidOptions.
type Config interface {
	Validate() error
}

// Define returns the entry of a chunker called name whose configuration
// is a C: def returns the defaults, build makes the chunker from a valid
// C, and specs bind each option to its field of C. Set the entry's other
// fields on the result.
func Define[C Config, K chunking.Chunker](name string, def func() C, build func(C) (K, error), specs ...Spec[C]) Entry {
	d := def()
	opts := make([]Option, len(specs))
	for i, s := range specs {
		opts[i] = s.opt
		opts[i].Default = s.get(&d)
	}
	e := Entry{Name: name, options: opts, specs: specs}
	e.build = func(layers []map[string]any, chunker bool) (map[string]any, chunking.Chunker, error) {
		cfg := def()
		for _, layer := range layers {
			if err := replace(name, specs, &cfg, &d, layer); err != nil {
				return nil, nil, err
			}
			for _, k := range slices.Sorted(maps.Keys(layer)) { // errors follow one order
				i := slices.IndexFunc(specs, func(s Spec[C]) bool { return s.opt.Name == k })
				if i < 0 {
					return nil, nil, unknownOption(name, k, opts)
				}
				v, err := decode(specs[i].opt.Kind, layer[k])
				if err != nil {
					return nil, nil, invalid("chunker %s: %s: %v", name, k, err)
				}
				if err := specs[i].set(&cfg, v); err != nil {
					return nil, nil, invalid("chunker %s: %s: %v", name, k, err)
				}
			}
		}
		if err := cfg.Validate(); err != nil {
			return nil, nil, fmt.Errorf("chunker %s: %w", name, err)
		}
		resolved := make(map[string]any, len(specs))
		replaced := map[string]bool{}
		for i, s := range specs {
			if len(s.replaces) > 0 && !reflect.DeepEqual(s.get(&cfg), opts[i].Default) {
				for _, n := range s.replaces {
					replaced[n] = true
				}
			}
		}
		for i, s := range specs {
			v := s.get(&cfg)
			if replaced[s.opt.Name] || s.omitDefault && reflect.DeepEqual(v, opts[i].Default) {
				continue
			}
			resolved[s.opt.Name] = v
		}
		if !chunker {
			return resolved, nil, nil
		}
		c, err := build(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("chunker %s: %w", name, err)
		}
		return resolved, c, nil
	}
	return e
}

// replace applies the Replaces rule of specs to one layer before its
// values are set on cfg: a layer that sets an option with Replaces to a
// value other than its default (in d, the defaults) and one it replaces
// is an error (unless s Beats them: s wins); otherwise the side the layer
// sets resets the other side of cfg to d's values.
func replace[C Config](chunker string, specs []Spec[C], cfg, d *C, layer map[string]any) error {
	for _, s := range specs {
		if len(s.replaces) == 0 {
			continue
		}
		raw, ok := layer[s.opt.Name]
		if !ok {
			continue
		}
		v, err := decode(s.opt.Kind, raw)
		if err != nil {
			return invalid("chunker %s: %s: %v", chunker, s.opt.Name, err)
		}
		var tmp C = *d
		if err := s.set(&tmp, v); err != nil {
			return invalid("chunker %s: %s: %v", chunker, s.opt.Name, err)
		}
		active := !reflect.DeepEqual(s.get(&tmp), s.get(d))
		var both []string
		for _, n := range s.replaces {
			if _, ok := layer[n]; ok && active {
				both = append(both, n)
			}
		}
		if len(both) > 0 && !s.beats {
			return invalid("chunker %s: %s replaces %s: set %s or %s, not both",
				chunker, s.opt.Name, strings.Join(s.replaces, ", "), s.opt.Name, strings.Join(both, " and "))
		}
		// The side this layer sets wins: reset the other.
		for _, o := range specs {
			switch {
			case active && slices.Contains(s.replaces, o.opt.Name):
			case !active && o.opt.Name == s.opt.Name:
			default:
				continue
			}
			if err := o.set(cfg, o.get(d)); err != nil {
				return invalid("chunker %s: %s: %v", chunker, o.opt.Name, err)
			}
		}
	}
	for _, s := range specs { // a layer setting a replaced option turns the replacing one off
		if len(s.replaces) == 0 {
			continue
		}
		if _, set := layer[s.opt.Name]; set {
			continue
		}
		if slices.ContainsFunc(s.replaces, func(n string) bool { _, ok := layer[n]; return ok }) {
			if err := s.set(cfg, s.get(d)); err != nil {
				return invalid("chunker %s: %s: %v", chunker, s.opt.Name, err)
			}
		}
	}
	return nil
}

// unknownOption is the error of an option name the chunker lacks: it
// suggests a close name, or lists the chunker's options.
func unknownOption(chunker, name string, opts []Option) error {
	msg := fmt.Sprintf("unknown option %q for chunker %s", name, chunker)
	var known []string
	for _, o := range opts {
		known = append(known, o.Name)
	}
	e := &optionError{msg: msg, sentinel: chunking.ErrUnknownOption}
	switch s := suggest(name, known); {
	case s != "":
		e.msg += fmt.Sprintf(" (did you mean %s?)", s)
	case len(known) > 0:
		e.chunker, e.option = chunker, name
		e.msg += " (its options: " + strings.Join(known, ", ") + ")"
	default:
		e.chunker, e.option = chunker, name
		e.msg += " (it has no options)"
	}
	return e
}

// Options returns the chunker's options, in the order help texts list
// them (a fresh slice).
func (e Entry) Options() []Option {
	out := slices.Clone(e.options)
	for i := range out {
		if l, ok := out[i].Default.([]int); ok {
			out[i].Default = slices.Clone(l)
		}
	}
	return out
}

// Resolve decodes layers of raw options onto the chunker's defaults and
// returns the complete canonical option map (see the package
// documentation, "Decoding", also for its errors).
func (e Entry) Resolve(layers ...map[string]any) (map[string]any, error) {
	m, _, err := e.build(layers, false)
	return m, err
}

// New builds the chunker from layers of raw options, as Resolve decodes
// them.
func (e Entry) New(layers ...map[string]any) (chunking.Chunker, error) {
	_, c, err := e.build(layers, true)
	return c, err
}

// WalkExtensions returns the file extensions a folder walk picks for the
// chunker built from layers of raw options, as New decodes them: those of
// the formats it reads, but for formats marked NotWalked, so that a
// folder run sends it what a request with the file's id would (markdown:
// .md, .markdown, .mdx, .txt, .text), narrowed by the options where they
// narrow what the chunker reads (code with language python: .py, .pyi
// and .pyw, not every language's). Its errors are Resolve's.
func (e Entry) WalkExtensions(layers ...map[string]any) ([]string, error) {
	if e.walk == nil {
		var exts []string
		for _, f := range e.Formats {
			for _, x := range f.Extensions {
				if !f.NotWalked && !slices.Contains(exts, x) {
					exts = append(exts, x)
				}
			}
		}
		return exts, nil
	}
	resolved, err := e.Resolve(layers...)
	if err != nil {
		return nil, err
	}
	return e.walk(resolved), nil
}

// Normalize checks raw options as Resolve does and returns only those raw
// sets, converted to their kind's Go type: what a client sends on the
// wire, so that the worker's defaults still apply to the others.
func (e Entry) Normalize(raw map[string]any) (map[string]any, error) {
	if _, err := e.Resolve(raw); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		o := e.options[slices.IndexFunc(e.options, func(o Option) bool { return o.Name == k })]
		out[k], _ = decode(o.Kind, v) // Resolve decoded it already
	}
	return out, nil
}

// Default returns the registry of chunkstream's chunkers: markdown, email,
// twostep, html and code, built anew. Add a chunker or option here.
func Default() *Registry {
	mdSpecs := []Spec[markdown.Config]{
		IntOption("min_char", "sections shorter than this many characters (tokens with tokenizer) absorb the next one (reference MarkdownChunker min_char)",
			func(c *markdown.Config) *int { return &c.MinChar }),
		IntOption("max_char", "largest chunk in characters (tokens with tokenizer), overlap included (reference MarkdownChunker max_char)",
			func(c *markdown.Config) *int { return &c.MaxChar }),
		IntOption("chunk_overlap", "characters (tokens with tokenizer) of whole words repeated between chunks of one split section (reference MarkdownChunker chunk_overlap)",
			func(c *markdown.Config) *int { return &c.ChunkOverlap }),
		StringOption("tokenizer", tokenizerUsage("min_char, max_char and chunk_overlap", "characters"),
			func(c *markdown.Config) *string { return &c.Tokenizer }).OmitDefault(),
		IntOption("target_char", "target mode: the mean chunk in characters, none longer than 1.5× (unless oversize); sets min_char, max_char and chunk_overlap itself; 0 (the default) is off (chunkstream's own, not a reference parameter)",
			func(c *markdown.Config) *int { return &c.TargetChar }).OmitDefault().Replaces("min_char", "max_char", "chunk_overlap", "target_tokens"),
		IntOption("target_tokens", "target_char in tokens of tokenizer, which it needs (chunkstream's own, not a reference parameter)",
			func(c *markdown.Config) *int { return &c.TargetTokens }).OmitDefault().Replaces("min_char", "max_char", "chunk_overlap", "target_char"),
	}
	md := Define("markdown", markdown.DefaultConfig, markdown.New, mdSpecs...)
	md.Formats = []Format{Markdown, MDX, Text}
	md.Size, md.Unit = "max_char", Characters
	md.Targets = []string{"target_char", "target_tokens"}

	// html's configuration is markdown's (html.Config is markdown.Config):
	// the same options size the chunks of the page's Markdown rendering.
	ht := Define("html", html.DefaultConfig, html.New, mdSpecs...)
	ht.Formats = []Format{HTML}
	ht.Size, ht.Unit = "max_char", Characters
	ht.Targets = md.Targets
	ht.Marks = []string{"title", "lang"}

	em := Define("email", email.DefaultConfig, email.New,
		IntOption("max_emails_per_chunk", "most messages in one chunk, ≥ 1 (reference max_emails_per_chunk)",
			func(c *email.Config) *int { return &c.MaxEmailsPerChunk }),
		IntOption("max_chars", "most characters in one chunk, header included, ≥ 256 (reference max_chars)",
			func(c *email.Config) *int { return &c.MaxChars }),
		IntOption("overlap_emails", "messages repeated between consecutive windows of a path, ≥ 0 (reference overlap_emails)",
			func(c *email.Config) *int { return &c.OverlapEmails }),
		stripQuotesOption(),
		BoolOption("mboxo", "read mbox files as mboxo (only >From is unescaped) instead of mboxrd (chunkstream's own, not a reference parameter)",
			func(c *email.Config) *bool { return &c.Mboxo }),
	)
	em.Formats = []Format{Mbox, EML, EmailJSON}
	em.Size, em.Unit = "max_chars", Characters
	em.ChunkFolder = func(ctx context.Context, c chunking.Chunker, path string) ([]chunking.Chunk, []chunking.Warning, error) {
		return c.(*email.Chunker).ChunkFolder(ctx, path)
	}
	em.Split = email.SplitThreads
	em.Marks = []string{"thread_id"}

	ts := Define("twostep", twostep.DefaultConfig, twostep.New,
		IntOption("max_chunk_size", "chunk budget in words (tokens with tokenizer); longer sections are split into sentences (reference two-step chunker max_chunk_size)",
			func(c *twostep.Config) *int { return &c.MaxChunkSize }),
		IntOption("chunk_overlap", "characters (tokens with tokenizer) of the previous chunk prefixed to each chunk (starting at a word) (reference two-step chunker chunk_overlap)",
			func(c *twostep.Config) *int { return &c.ChunkOverlap }),
		IntOption("word_overlap", "words of the previous chunk prefixed to each chunk (with tokenizer: whole words of at most this many tokens); above 0 it beats chunk_overlap (reference two-step chunker word_overlap)",
			func(c *twostep.Config) *int { return &c.WordOverlap }).Beats("chunk_overlap"),
		BoolOption("add_headers", "start each chunk with the header lines of its hierarchy it lacks (reference two-step chunker add_headers)",
			func(c *twostep.Config) *bool { return &c.AddHeaders }),
		BoolOption("merge_small_chunks", "merge consecutive compatible chunks while they fit the budget (reference two-step chunker merge_small_chunks)",
			func(c *twostep.Config) *bool { return &c.MergeSmallChunks }),
		intSetOption("headers_to_split_on", "header levels (1-6) that start a section (reference two-step chunker headers_to_split_on)",
			func(c *twostep.Config) *[]int { return &c.HeadersToSplitOn }).WithFlag("headers"),
		StringOption("tokenizer", tokenizerUsage("max_chunk_size, word_overlap and chunk_overlap", "words (chunk_overlap: characters)"),
			func(c *twostep.Config) *string { return &c.Tokenizer }).OmitDefault(),
		IntOption("target_char", "target mode: the mean chunk in characters, none longer than 1.5× (unless one unit is); sets max_chunk_size, chunk_overlap and word_overlap itself; 0 (the default) is off (chunkstream's own, not a reference parameter)",
			func(c *twostep.Config) *int { return &c.TargetChar }).OmitDefault().Replaces("max_chunk_size", "chunk_overlap", "word_overlap", "target_tokens"),
		IntOption("target_tokens", "target_char in tokens of tokenizer, which it needs (chunkstream's own, not a reference parameter)",
			func(c *twostep.Config) *int { return &c.TargetTokens }).OmitDefault().Replaces("max_chunk_size", "chunk_overlap", "word_overlap", "target_char"),
	)
	ts.Formats = []Format{Markdown, MDX, Text}
	ts.Size, ts.Unit = "max_chunk_size", Words
	ts.Targets = []string{"target_char", "target_tokens"}
	ts.Marks = []string{"headers", "file_format"}

	cd := Define("code", code.DefaultConfig, code.New,
		IntOption("max_char", "largest chunk in characters (tokens with tokenizer), its ending whitespace not counted; a declaration that fits is never split",
			func(c *code.Config) *int { return &c.MaxChar }),
		StringOption("language", `the language of every document, one of `+strings.Join(code.Languages(), ", ")+`; "" (the default) takes it from the file's extension`,
			func(c *code.Config) *string { return &c.Language }).OmitDefault(),
		StringOption("tokenizer", tokenizerUsage("max_char", "characters"),
			func(c *code.Config) *string { return &c.Tokenizer }).OmitDefault(),
		IntOption("target_char", "target mode: the mean chunk in characters, none longer than 1.5× (unless oversize); sets max_char itself; 0 (the default) is off (chunkstream's own, not a reference parameter)",
			func(c *code.Config) *int { return &c.TargetChar }).OmitDefault().Replaces("max_char", "target_tokens"),
		IntOption("target_tokens", "target_char in tokens of tokenizer, which it needs (chunkstream's own, not a reference parameter)",
			func(c *code.Config) *int { return &c.TargetTokens }).OmitDefault().Replaces("max_char", "target_char"),
	)
	cd.Formats = []Format{Code}
	cd.walk = func(resolved map[string]any) []string {
		lang, _ := resolved["language"].(string)
		return code.ExtensionsOf(lang)
	}
	cd.Size, cd.Unit = "max_char", Characters
	cd.Targets = []string{"target_char", "target_tokens"}
	cd.Marks = []string{"language", "symbols"}

	r, err := New(md, em, ts, ht, cd)
	if err != nil {
		panic(err) // the entries above are fixed: a test builds them
	}
	return r
}

// tokenizerUsage is the usage of a chunker's tokenizer option.
func tokenizerUsage(sizes, units string) string {
	return "count " + sizes + " in tokens of this encoding (" + strings.Join(tokens.Names(), ", ") +
		`) instead of ` + units + `; "" (the default) counts ` + units + ` (chunkstream's own, not a reference parameter)`
}

// stripQuotesOption binds strip_quotes (a boolean or "auto").
func stripQuotesOption() Spec[email.Config] {
	s := fieldOption("strip_quotes", BoolOrAuto,
		`remove quoted history matching an ancestor, and signatures; "auto" (the default) strips real mail and keeps canonical JSON rows (chunkstream's own, not a reference parameter)`,
		func(c *email.Config) *email.QuoteStripping { return &c.StripQuotes })
	s.set = func(c *email.Config, v any) error {
		switch v {
		case true:
			c.StripQuotes = email.StripAlways
		case false:
			c.StripQuotes = email.StripNever
		default:
			c.StripQuotes = email.StripAuto
		}
		return nil
	}
	s.get = func(c *email.Config) any {
		switch c.StripQuotes {
		case email.StripAlways:
			return true
		case email.StripNever:
			return false
		}
		return "auto"
	}
	return s
}

// Wrap returns e whose chunkers pass through wrap, with the resolved
// options they were built from (metrics, tracing, faults in tests).
func (e Entry) Wrap(wrap func(resolved map[string]any, c chunking.Chunker) chunking.Chunker) Entry {
	build := e.build
	e.build = func(layers []map[string]any, chunker bool) (map[string]any, chunking.Chunker, error) {
		m, c, err := build(layers, chunker)
		if err != nil || !chunker {
			return m, c, err
		}
		return m, wrap(m, c), nil
	}
	return e
}
