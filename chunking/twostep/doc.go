// Package twostep is the two-step chunker for scientific and technical
// documents (modelled on a reference two-step chunker; docs/chunkers.md names it): split
// by headers, then split long sections into sentences and atomic units and
// pack them by words; merge small chunks; add overlaps and header lines.
//
// # Use
//
//	cfg := twostep.DefaultConfig()
//	cfg.MaxChunkSize = 256
//	c, err := twostep.New(cfg)
//	chunks, warnings, err := c.Chunk(doc) // pure, concurrency-safe
//
// ChunkFunc, ChunkFile and ChunkFolder say on each method how they read
// and stop, and Config documents each option with its reference name and
// bounds. docs/chunkers.md defines words and characters (What every
// chunker shares), describes each step (Two-step) and lists with its
// reason every way the output differs from the reference's (the chunk hash
// is computed as the reference computes it); the decisions below make the
// steps precise.
//
// # Token budgets
//
// With Config.Tokenizer set, max_chunk_size, word_overlap and
// chunk_overlap count tokens (docs/chunkers.md, Token budgets). Beyond
// that page: units are packed by the sum of their tokens plus a token per
// line break between them, before the piece's text is counted whole;
// merging counts the joined text incrementally; the overlap's start is
// found by bisection over the word starts; spans are the source offsets
// of the units a chunk holds after the back-off, and of its overlap.
//
// # Target mode
//
// With Config.TargetChar (or TargetTokens) sizes count characters (or
// tokens), the budget is the target's ceiling (measure.Ceiling), long
// sections are cut into near-equal shares (measure.Balanced), each chunk
// ending where that costs least (measure.Cut: its deviation from the
// share plus the boundary's cost, as in the Markdown chunker), code
// blocks and tables longer than the ceiling are cut at their line ends,
// and small chunks merge only while that brings them nearer the target;
// there is no overlap. docs/chunkers.md (Target mode) has the rule and
// the measurements. With the target off nothing changes.
//
// # Decisions the reference leaves open
//
//   - Formats: markdown ("md"), mdx and text; Document.Format wins, else the
//     extension of Path (.mdx → mdx, .txt/.text → text, anything else →
//     markdown). Any other Format is an error wrapping
//     chunking.ErrUnsupportedFormat. MDX is read as Markdown without the
//     Markdown chunker's MDX cleaning (JSX lines are ordinary text). Text
//     documents have no blocks, but LaTeX and math units still apply.
//     file_format is Path's extension lowercased.
//   - Blocks come from chunking/internal/mdblocks (one goldmark block
//     parse). Only top-level headings split; a heading at a level not in
//     headers_to_split_on is ordinary text. The hierarchy keeps only split
//     levels; a header clears the deeper levels.
//   - Section text runs from its header line to the last non-blank line
//     before the next split header (trailing whitespace trimmed). A section
//     holding only split header lines, followed directly by a deeper split
//     header, is joined to that section and takes its hierarchy (repeatedly:
//     "# A⏎## B⏎### C⏎text" is one section ["#A","##B","###C"]).
//   - Sentence split applies to a section of more than max_chunk_size
//     words. Units: each heading line; each atomic block from mdblocks —
//     fenced and indented code, tables (all rows), display math blocks
//     ($$, \[, \begin at a line start, blank lines inside allowed) and
//     front matter; in the other blocks, display math found mid-text
//     (\begin{X}…\end{X} with same-name nesting, even across blank lines;
//     $$…$$ and \[…\] within a paragraph) is a unit of its own, and the
//     text between is cut into sentences. Environments of different names
//     that cross are one unit (their union). An unclosed opener is text.
//     A display unit found mid-word is widened to whole words, so that no
//     word is split between chunks.
//   - mdblocks reports top-level blocks only, so a fenced code block nested
//     in a list item or block quote is found here: a line whose prefix is
//     only indentation, list markers and '>' followed by 3+ '`' or '~',
//     closed by a later such line with at least as many of the same
//     character, is an atomic unit from its line start (an unclosed one is
//     text). Likewise a nested pipe table: a line starting with '|' after
//     such a prefix, a delimiter row, and the following '|' lines (nested
//     tables without outer pipes are not detected). Atomic units keep their
//     first line's indentation.
//   - Inline spans in which no sentence ends: $…$ (the reference's rule: opened by
//     '$' before a non-space, closed by '$' after a non-space and not before
//     a digit; so "$5 and $10" is text but "$5 for $x$" is one span, as in
//     Pandoc), \(…\), code spans, and references "Fig. 3", "Figure 3.5",
//     "Figs.", "Tab. 2", "Table 2", "Eq. (4)", "Eqn. 4", "Equation 4"
//     (either initial case; space, no-break space or '~' after the word).
//     A bare reference number's trailing period belongs to the reference,
//     so "See Fig. 3. The result holds." is one sentence (as in the reference);
//     a parenthesised one ends at ')', so "See Eq. (4). It holds." is two.
//     None of these spans runs across a blank line.
//   - HTML blocks, lists, block quotes and thematic breaks are text: cut
//     into sentences like paragraphs (a long HTML block may be cut inside).
//   - Sentences end as package sentences documents; TestPunktAgreement
//     measures the agreement with Punkt's Go port (docs/chunkers.md,
//     Sentences, has the figures).
//   - Packing (docs/chunkers.md): the heading line kept with the unit after
//     it may be one not split on, or one nested in a quote or list item
//     ("> ### Title").
//   - Merging joins with "\n\n", not the source gap. The current chunk's
//     level is that of its first piece (its headers are
//     kept); a chunk without headers (text before the first header) is
//     compatible with every chunk, so it may absorb headed chunks, which
//     then carry no headers.
//   - Overlap (docs/chunkers.md) is source text: line breaks inside it are
//     kept.
//   - add_headers: a hierarchy header counts as present when the chunk's
//     own text starts with it, line for line, in hierarchy order (compared
//     whole against the heading's source lines, setext included, and against
//     "## Title"); missing ones are inserted as "## Title" lines, shallowest
//     first, before the overlap (so with both, a chunk whose own text starts
//     with its header line reads "# A⏎<overlap> ## B⏎…", as the reference's order
//     has it).
//   - Spans (chunking.Span): a chunk's span runs from the start of its
//     text (or of its overlap, in the previous chunk's text) to the end of
//     its text. Merged chunks span from the first piece to the last; a
//     chunk is verbatim when its content is exactly those bytes, which
//     merged pieces (joined by "\n\n" whatever separated them), overlaps
//     (joined by one space) and add_headers lines usually prevent.
//   - Warnings (WarnUnclosed, docs/chunkers.md) count no \begin{X} inside
//     code spans or inline math. Nothing else warns.
//
// # Cost
//
// One goldmark block parse, one word count per section, and for long
// sections one linear scan for units and one for sentences: every step is
// linear in the document, including thousands of unmatched '$' or
// \begin and megabytes without a sentence end. A document shares one copy
// of its text among its chunks.
package twostep
