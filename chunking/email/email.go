package email

import (
	"context"
	"fmt"
	slashpath "path"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
)

// Option names (the reference's parameter names, snake_case).
const (
	OptMaxEmailsPerChunk = "max_emails_per_chunk"
	OptMaxChars          = "max_chars"
	OptOverlapEmails     = "overlap_emails"
	OptStripQuotes       = "strip_quotes"
	OptMboxo             = "mboxo"
)

// Defaults and bounds of the options (spec §4).
const (
	DefaultMaxEmailsPerChunk = 10
	DefaultMaxChars          = 2048
	DefaultOverlapEmails     = 2
	MinMaxChars              = 256
)

// Document formats the chunker reads.
const (
	FormatMbox      = "mbox"
	FormatEML       = "eml"
	FormatEmailJSON = "email-json"
)

// Specs returns the chunker's options.
func Specs() []chunking.OptionSpec {
	return []chunking.OptionSpec{
		{Name: OptMaxEmailsPerChunk, Kind: chunking.IntOption, Default: DefaultMaxEmailsPerChunk,
			Usage: "most messages in one chunk, ≥ 1 (reference max_emails_per_chunk)"},
		{Name: OptMaxChars, Kind: chunking.IntOption, Default: DefaultMaxChars,
			Usage: "most characters in one chunk, header included, ≥ 256 (reference max_chars)"},
		{Name: OptOverlapEmails, Kind: chunking.IntOption, Default: DefaultOverlapEmails,
			Usage: "messages repeated between consecutive windows of a path, ≥ 0 (reference overlap_emails)"},
		{Name: OptStripQuotes, Kind: chunking.BoolOption, Default: true,
			Usage: "remove quoted history matching an ancestor and signatures (default true for real mail, false for canonical JSON rows; chunkstream's own, not a reference parameter)"},
		{Name: OptMboxo, Kind: chunking.BoolOption, Default: false,
			Usage: "read mbox files as mboxo (only >From is unescaped) instead of mboxrd (chunkstream's own, not a reference parameter)"},
	}
}

// Chunker chunks mailboxes into thread-path windows. It is immutable and
// safe for concurrent use.
type Chunker struct {
	maxEmails   int
	maxChars    int
	overlap     int // effective: min(overlap, maxEmails-1)
	stripQuotes *bool
	mboxo       bool
}

// New validates opts and returns a Chunker. Errors wrap
// chunking.ErrInvalidOptions and name the option.
func New(opts chunking.Options) (*Chunker, error) {
	c := &Chunker{
		maxEmails: opts.Int(OptMaxEmailsPerChunk, DefaultMaxEmailsPerChunk),
		maxChars:  opts.Int(OptMaxChars, DefaultMaxChars),
		overlap:   opts.Int(OptOverlapEmails, DefaultOverlapEmails),
		mboxo:     opts.Bool(OptMboxo, false),
	}
	for name, v := range opts {
		switch name {
		case OptMaxEmailsPerChunk, OptMaxChars, OptOverlapEmails:
			if _, ok := v.(int); !ok {
				return nil, fmt.Errorf("%w: %s: want an integer, got %T", chunking.ErrInvalidOptions, name, v)
			}
		case OptStripQuotes, OptMboxo:
			if _, ok := v.(bool); !ok {
				return nil, fmt.Errorf("%w: %s: want a boolean, got %T", chunking.ErrInvalidOptions, name, v)
			}
		default:
			return nil, fmt.Errorf("%w %q", chunking.ErrUnknownOption, name)
		}
	}
	if c.maxEmails < 1 {
		return nil, fmt.Errorf("%w: %s must be ≥ 1, got %d", chunking.ErrInvalidOptions, OptMaxEmailsPerChunk, c.maxEmails)
	}
	if c.maxChars < MinMaxChars {
		return nil, fmt.Errorf("%w: %s must be ≥ %d, got %d", chunking.ErrInvalidOptions, OptMaxChars, MinMaxChars, c.maxChars)
	}
	if c.overlap < 0 {
		return nil, fmt.Errorf("%w: %s must be ≥ 0, got %d", chunking.ErrInvalidOptions, OptOverlapEmails, c.overlap)
	}
	c.overlap = min(c.overlap, c.maxEmails-1)
	if v, ok := opts[OptStripQuotes].(bool); ok {
		c.stripQuotes = &v
	}
	return c, nil
}

// FormatOf returns the document format: doc.Format when set, else the one
// doc.Path's extension names (.mbox/.mboxrd, .eml, .json/.jsonl), else "".
func FormatOf(doc chunking.Document) string {
	if doc.Format != "" {
		return doc.Format
	}
	switch strings.ToLower(slashpath.Ext(doc.Path)) {
	case ".mbox", ".mboxrd", ".mbx":
		return FormatMbox
	case ".eml":
		return FormatEML
	case ".json", ".jsonl":
		return FormatEmailJSON
	}
	return ""
}

// Chunk chunks one document, which is one mailbox: an mbox, one .eml
// message, or canonical rows (a JSON array or JSON Lines).
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	switch f := FormatOf(doc); f {
	case FormatEmailJSON:
		return c.chunkRows(doc)
	case FormatMbox:
		mb, warns := ParseMbox(doc.Path, doc.Content, c.mboxo)
		chunks, w2 := c.ChunkMailbox(mb)
		return withMetadata(chunks, doc.Metadata), append(warns, w2...), nil
	case FormatEML:
		mb, warns := ParseEML(doc.Path, doc.Content)
		chunks, w2 := c.ChunkMailbox(mb)
		return withMetadata(chunks, doc.Metadata), append(warns, w2...), nil
	default:
		return nil, nil, fmt.Errorf("%w: email chunker reads mbox, eml and email-json, not %q (%s)", chunking.ErrUnsupportedFormat, f, doc.Path)
	}
}

func (c *Chunker) strip(def bool) bool {
	if c.stripQuotes != nil {
		return *c.stripQuotes
	}
	return def
}

func (c *Chunker) chunkRows(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	rows, warns, err := parseRows(doc.Path, doc.Content)
	if err != nil {
		return nil, warns, err
	}
	ids, threads, quotes := rowsToThreads(doc.Path, rows, &warns)
	slices.SortStableFunc(warns, func(a, b chunking.Warning) int { return a.Line - b.Line })
	strip := c.strip(false)
	var out []chunking.Chunk
	for i, ms := range threads {
		if strip {
			stripped := stripThread(quotes[i].bodies, quotes[i].parents)
			for k, m := range ms {
				m.body = stripped[k]
			}
		}
		out = append(out, chunkThread(ids[i], ms, c.maxEmails, c.maxChars, c.overlap)...)
	}
	return withMetadata(out, doc.Metadata), warns, nil
}

func withMetadata(chunks []chunking.Chunk, md chunking.Metadata) []chunking.Chunk {
	if len(md) == 0 {
		return chunks
	}
	for i, ch := range chunks {
		chunks[i] = chunking.NewChunk(ch.Content(), ch.Metadata().Merge(md))
	}
	return chunks
}

// ChunkPath chunks the mailbox at path: a folder of .eml files, a Maildir,
// an mbox file, one .eml file, or a .json/.jsonl file of canonical rows.
func ChunkPath(ctx context.Context, path string, opts chunking.Options) ([]chunking.Chunk, []chunking.Warning, error) {
	c, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	return c.ChunkPath(ctx, path)
}

// ChunkDocuments chunks documents already in memory as one mailbox (the
// files of a folder, in order): mbox documents are split, others read as
// one message each. Canonical rows are chunked per document. It is what
// ChunkPath does after reading the files, for callers that time the
// chunker without I/O.
func (c *Chunker) ChunkDocuments(docs []chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	var mail []chunking.Document
	var out []chunking.Chunk
	var warns []chunking.Warning
	for _, d := range docs {
		switch FormatOf(d) {
		case FormatEmailJSON:
			ch, w, err := c.chunkRows(d)
			if err != nil {
				return nil, warns, err
			}
			out, warns = append(out, ch...), append(warns, w...)
		case FormatMbox, FormatEML:
			mail = append(mail, d)
		}
	}
	mb, w := MailboxOf(mail, ReadOptions{Mboxo: c.mboxo})
	ch, w2 := c.ChunkMailbox(mb)
	return append(out, ch...), append(append(warns, w...), w2...), nil
}
