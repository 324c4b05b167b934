// Package twostep is the two-step chunker for scientific and technical
// documents (modelled on the Eve pipeline's chunker step): split
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
// bounds. The reference's max_workers (documents chunked in parallel) has
// no field: a Chunker is safe for concurrent use, so callers chunk
// documents in parallel themselves.
//
// # Measures
//
// A word is a maximal run of non-whitespace; whitespace is Unicode
// White_Space plus U+001C–U+001F (package sentences). Characters are code
// points. Every budget comparison counts actual words.
//
// # Token budgets
//
// With Config.Tokenizer set (option tokenizer: "cl100k_base" or
// "o200k_base"; chunkstream's own), max_chunk_size, word_overlap and
// chunk_overlap count tokens of that encoding; without it, words and
// characters, as the reference counts them. The output is not the
// reference's byte for byte: the chunk hash is computed exactly as the
// reference computes it (equal content and metadata give an equal hash),
// and every difference in the chunks is one of the decisions below, each
// listed with its reason in docs/chunkers.md. They touch most real
// documents: executed runs of the reference implementations over real
// documentation found 1 file of 648 and 134 of 10,081 chunked
// identically. In token mode:
//
//   - The budget holds for each chunk's own text (as max_chunk_size does
//     in words: overlap and added header lines come on top), counted
//     exactly: no chunk's own text has more than max_chunk_size tokens
//     unless it is one oversize unit.
//   - A section is split when its tokens exceed the budget (counting
//     stops past it). Units are counted on their own and packed by their
//     sum plus a token per line break between them (the search); the
//     piece's text is then counted whole and, when over, gives back its
//     last units (and a heading left last) to the next piece.
//   - Merging counts the joined text ("\n\n" seam included) whole,
//     incrementally.
//   - word_overlap N and chunk_overlap N both prefix the longest run of
//     whole words at the end of the previous chunk's own text of at most
//     N tokens (word_overlap wins when both are set), found by bisection
//     over the word starts.
//   - A run without spaces (CJK) that holds sentence ends may be cut at
//     them, as in word mode a long section is; a unit is never cut.
//   - Spans follow the same rule in every unit (see Spans below): they are
//     the source offsets of the units a chunk holds after the back-off,
//     and of its overlap, a run of whole words of the previous chunk's
//     own text.
//
// # Decisions the reference leaves open
//
//   - Formats: markdown ("md"), mdx and text; Document.Format wins, else the
//     extension of Path (.mdx → mdx, .txt/.text → text, anything else →
//     markdown). Any other Format is an error wrapping
//     chunking.ErrUnsupportedFormat. MDX is read as Markdown without the
//     Markdown chunker's MDX cleaning (JSX lines are ordinary text). Text
//     documents have no headers, code blocks or tables; LaTeX and math
//     units still apply. file_format is Path's extension (lowercase, no
//     dot) when it has one, else md, mdx or txt; file is Path, omitted when
//     empty.
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
//   - Sentences end as Punkt (NLTK's sentence splitter, which the reference
//     runs) ends them, except where package sentences documents a
//     deliberate difference; boundaries also fall at blank lines, at the end
//     of a heading line and before list items, block quotes and table rows.
//     TestPunktAgreement measures the agreement with Punkt's Go port
//     (docs/chunkers.md, Sentences, has the figures).
//   - Packing is greedy over units; a chunk's text is the source from its
//     first unit's start to its last unit's end, so line breaks, lists and
//     indentation between units are kept. A unit over the budget is a chunk
//     of its own with oversize: true (a 10 MB paragraph without a sentence
//     end is one such chunk). A heading line inside a long section (one not
//     split on, or one nested in a quote or list item: "> ### Title") is
//     never left at the end of a chunk when it fits at the
//     start of the next one with the unit that follows it. A section within
//     the budget is one chunk whatever it contains.
//   - Merging joins with "\n\n" as the reference does (not the source gap). The
//     current chunk's level is that of its first piece (its headers are
//     kept); a chunk without headers (text before the first header) is
//     compatible with every chunk, so it may absorb headed chunks, which
//     then carry no headers.
//   - Overlap: word_overlap N is the source text from the N-th last word of
//     the previous chunk's own text to its end (line breaks inside kept);
//     chunk_overlap N is the longest suffix of at most N characters starting
//     at a word start (none when the last word is longer). It applies
//     between all consecutive chunks of a document, across sections.
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
//   - Metadata: headers (always present, [] without headers), index, file
//     (when Path is set), file_format, oversize (only when true), then the
//     document's metadata, whose values win on a clash.
//   - Warnings (WarnUnclosed): one per unclosed \begin{X} (outside code
//     spans and inline math) in a section that had to be cut, with its
//     line: it was kept as text, so the cut may fall inside it. Nothing
//     else warns.
//
// # Cost
//
// One goldmark block parse, one word count per section, and for long
// sections one linear scan for units and one for sentences: every step is
// linear in the document, including thousands of unmatched '$' or
// \begin and megabytes without a sentence end. A document shares one copy
// of its text among its chunks.
package twostep
