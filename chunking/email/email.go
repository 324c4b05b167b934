package email

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/fileio"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

const minMaxChars = 256

// Document formats the chunker reads.
const (
	formatMbox      = "mbox"
	formatEML       = "eml"
	formatEmailJSON = "email-json"
)

// QuoteStripping says which messages lose their quoted history and
// signature.
type QuoteStripping int

const (
	// StripAuto, the default, strips real mail (mbox, eml, folders) and
	// keeps canonical JSON rows as given.
	StripAuto QuoteStripping = iota
	// StripAlways strips every message, canonical rows included.
	StripAlways
	// StripNever keeps every message whole.
	StripNever
)

// String returns the value as strip_quotes writes it: "auto", "true" or
// "false".
func (q QuoteStripping) String() string {
	switch q {
	case StripAuto:
		return "auto"
	case StripAlways:
		return "true"
	case StripNever:
		return "false"
	}
	return fmt.Sprintf("QuoteStripping(%d)", int(q))
}

// Config is the email chunker's configuration; start from DefaultConfig.
// StripQuotes and Mboxo are chunkstream's own, the others the reference's.
type Config struct {
	// MaxEmailsPerChunk (max_emails_per_chunk, default 10): the most
	// messages in one chunk; at least 1.
	MaxEmailsPerChunk int
	// MaxChars (max_chars, default 2048): the most characters in one
	// chunk, header included; at least 256.
	MaxChars int
	// OverlapEmails (overlap_emails, default 2): messages repeated
	// between consecutive windows of a path; at least 0 (at most
	// MaxEmailsPerChunk-1 take effect).
	OverlapEmails int
	// StripQuotes (strip_quotes, default StripAuto): which messages lose
	// quoted history matching an ancestor, and their signature.
	StripQuotes QuoteStripping
	// Mboxo (mboxo, default false): read mbox files as mboxo (only
	// ">From " is unescaped) instead of mboxrd.
	Mboxo bool
}

// DefaultConfig returns the defaults: 10 messages, 2048 characters, 2
// messages of overlap, quotes stripped from real mail, mboxrd.
func DefaultConfig() Config {
	return Config{MaxEmailsPerChunk: 10, MaxChars: 2048, OverlapEmails: 2}
}

// Validate checks the bounds above; an error wraps
// chunking.ErrInvalidOptions and names the parameter.
func (cfg Config) Validate() error {
	switch {
	case cfg.MaxEmailsPerChunk < 1:
		return fmt.Errorf("%w: max_emails_per_chunk must be ≥ 1, got %d", chunking.ErrInvalidOptions, cfg.MaxEmailsPerChunk)
	case cfg.MaxChars < minMaxChars:
		return fmt.Errorf("%w: max_chars must be ≥ %d, got %d", chunking.ErrInvalidOptions, minMaxChars, cfg.MaxChars)
	case cfg.OverlapEmails < 0:
		return fmt.Errorf("%w: overlap_emails must be ≥ 0, got %d", chunking.ErrInvalidOptions, cfg.OverlapEmails)
	case cfg.StripQuotes < StripAuto || cfg.StripQuotes > StripNever:
		return fmt.Errorf("%w: strip_quotes must be StripAuto, StripAlways or StripNever, got %d", chunking.ErrInvalidOptions, int(cfg.StripQuotes))
	}
	return nil
}

// Chunker chunks mailboxes into thread-path windows. It is safe for
// concurrent use.
type Chunker struct {
	cfg     Config
	overlap int // effective: min(OverlapEmails, MaxEmailsPerChunk-1)
}

// New returns a Chunker for cfg, or cfg's Validate error.
func New(cfg Config) (*Chunker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Chunker{cfg: cfg, overlap: min(cfg.OverlapEmails, cfg.MaxEmailsPerChunk-1)}, nil
}

// Config returns the configuration the chunker was built with.
func (c *Chunker) Config() Config { return c.cfg }

// Extensions returns the file extensions of mail files: .eml and the
// mailboxes' (MboxExtensions); ChunkFolder also reads Maildirs.
func Extensions() []string { return append([]string{".eml"}, MboxExtensions()...) }

// MboxExtensions returns the extensions of mbox files: .mbox, .mboxrd
// and .mbx, whatever the variant (mboxrd unless the mboxo option says).
func MboxExtensions() []string { return []string{".mbox", ".mboxrd", ".mbx"} }

// formatOf returns doc.Format, else the format doc.Path's extension
// names, else "".
func formatOf(doc chunking.Document) string {
	if doc.Format != "" {
		return doc.Format
	}
	switch ext := chunking.Ext(doc.Path); {
	case slices.Contains(MboxExtensions(), ext):
		return formatMbox
	case ext == ".eml":
		return formatEML
	case ext == ".json" || ext == ".jsonl":
		return formatEmailJSON
	}
	return ""
}

// Chunk chunks one document, which is one mailbox: an mbox (Format
// "mbox", or a .mbox/.mboxrd/.mbx Path), one message ("eml", .eml) or
// canonical rows ("email-json", .json/.jsonl). Any other format wraps
// chunking.ErrUnsupportedFormat.
func (c *Chunker) Chunk(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.Collect(c.ChunkFunc)(context.Background(), doc)
}

// ChunkFunc is Chunk handing out the chunks one at a time, thread by
// thread, after reading and threading the whole mailbox (see
// chunking.StreamChunker).
func (c *Chunker) ChunkFunc(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	return c.chunkPolled(poll.New(ctx), doc, yield)
}

// chunkPolled is ChunkFunc polling pl (tests read its count and end it).
func (c *Chunker) chunkPolled(pl *poll.Poller, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	name := cmp.Or(doc.Path, "document")
	if pl.Check() {
		return nil, fmt.Errorf("email: %s: %w", name, pl.Err())
	}
	var warns []chunking.Warning
	var err error
	switch f := formatOf(doc); f {
	case formatEmailJSON:
		warns, err = c.rowsFunc(doc, pl, yield)
	case formatMbox, formatEML:
		mb, w := mailboxOf([]chunking.Document{doc}, c.cfg.Mboxo, pl)
		warns = append(w, c.mailboxFunc(mb, doc.Metadata, pl, yield)...)
	default:
		return nil, fmt.Errorf("%w: email chunker reads mbox, eml and email-json, not %q (%s)", chunking.ErrUnsupportedFormat, f, doc.Path)
	}
	if pl.Stopped() {
		return nil, fmt.Errorf("email: %s: %w", name, pl.Err())
	}
	return warns, err
}

// strip reports whether quotes are stripped; real is false for rows.
func (c *Chunker) strip(real bool) bool {
	switch c.cfg.StripQuotes {
	case StripAlways:
		return true
	case StripNever:
		return false
	}
	return real
}

// rowsFunc chunks a document of canonical rows.
func (c *Chunker) rowsFunc(doc chunking.Document, pl *poll.Poller, yield func(chunking.Chunk) bool) ([]chunking.Warning, error) {
	rows, warns, err := parseRows(doc.Path, doc.Content)
	if err != nil {
		return warns, err
	}
	pl.Add(len(doc.Content))
	ids, threads, quotes := rowsToThreads(doc.Path, rows, &warns)
	slices.SortStableFunc(warns, func(a, b chunking.Warning) int { return a.Line - b.Line })
	strip := c.strip(false)
	for i, ms := range threads {
		if pl.Check() {
			return nil, nil
		}
		if strip {
			stripped := stripThread(quotes[i].bodies, quotes[i].parents, pl)
			if pl.Stopped() {
				return nil, nil
			}
			for k, m := range ms {
				m.body = stripped[k]
			}
		}
		if !yieldAll(chunkThread(ids[i], ms, c.cfg.MaxEmailsPerChunk, c.cfg.MaxChars, c.overlap), doc.Metadata, pl, yield) {
			break
		}
	}
	return warns, nil
}

// yieldAll passes chunks to yield, with md merged into their metadata,
// and reports whether to go on.
func yieldAll(chunks []chunking.Chunk, md chunking.Metadata, pl *poll.Poller, yield func(chunking.Chunk) bool) bool {
	for _, ch := range chunks {
		if pl.Add(len(ch.Content())); pl.Check() {
			return false
		}
		if len(md) > 0 {
			ch = chunking.NewChunk(ch.Content(), ch.Metadata().Merge(md)).WithSpan(ch.Span())
		}
		if !yield(ch) {
			return false
		}
	}
	return true
}

// ChunkFile reads and chunks one file as Chunk does, its format following
// the extension; ChunkFolder reads folders, Maildirs and mboxes without
// a mail extension.
func (c *Chunker) ChunkFile(ctx context.Context, p string) ([]chunking.Chunk, []chunking.Warning, error) {
	return fileio.File(ctx, "email", p, fileio.Collect(c.ChunkFunc))
}

// ChunkFolder chunks the mailbox at path (see ReadMailbox), or a
// .json/.jsonl file of canonical rows. Messages are threaded across the
// whole mailbox. Problems inside messages are warnings; the error is for
// a path that cannot be read or the end of ctx.
func (c *Chunker) ChunkFolder(ctx context.Context, path string) ([]chunking.Chunk, []chunking.Warning, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() && formatOf(chunking.Document{Path: path}) == formatEmailJSON {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("email: %w", err)
		}
		return fileio.Collect(c.ChunkFunc)(ctx, chunking.Document{Path: path, Content: data})
	}
	mb, warns, err := ReadMailbox(ctx, path, c.cfg.Mboxo)
	if err != nil {
		return nil, warns, err
	}
	pl := poll.New(ctx)
	var out []chunking.Chunk
	w := c.mailboxFunc(mb, nil, pl, func(ch chunking.Chunk) bool { out = append(out, ch); return true })
	if pl.Stopped() {
		return nil, nil, fmt.Errorf("email: %s: %w", path, pl.Err())
	}
	return out, append(warns, w...), nil
}

// ChunkMailbox chunks documents in memory as one mailbox, as ChunkFolder
// chunks a folder's files (give them in walk order): mbox documents are
// split, others read as one message each, and all are threaded together;
// documents of canonical rows are chunked each on its own, first. It
// lets callers time the chunker without I/O.
func (c *Chunker) ChunkMailbox(docs []chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
	pl := new(poll.Poller)
	var mail []chunking.Document
	var out []chunking.Chunk
	var warns []chunking.Warning
	collect := func(ch chunking.Chunk) bool { out = append(out, ch); return true }
	for _, d := range docs {
		switch formatOf(d) {
		case formatEmailJSON:
			w, err := c.rowsFunc(d, pl, collect)
			if err != nil {
				return nil, warns, err
			}
			warns = append(warns, w...)
		case formatMbox, formatEML:
			mail = append(mail, d)
		}
	}
	mb, w := mailboxOf(mail, c.cfg.Mboxo, pl)
	w2 := c.mailboxFunc(mb, nil, pl, collect)
	return out, append(append(warns, w...), w2...), nil
}

var (
	_ chunking.Chunker       = (*Chunker)(nil)
	_ chunking.StreamChunker = (*Chunker)(nil)
)
