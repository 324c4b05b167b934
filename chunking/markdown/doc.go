// Package markdown is chunkstream's Markdown (and MDX) chunker: the
// reference MarkdownChunker's parameters (min_char 1024, max_char 2048,
// chunk_overlap 128), metadata keys and output, with the reference's
// mistakes fixed.
//
//	cfg := markdown.DefaultConfig() // min_char 1024, max_char 2048, chunk_overlap 128
//	cfg.MaxChar = 1000
//	c, err := markdown.New(cfg)
//	chunks, warnings, err := c.Chunk(chunking.Document{Path: "docs/a.md", Content: src})
//
// New validates a Config; Chunk is pure and safe for concurrent use, and
// ChunkFunc, ChunkFile and ChunkFolder say on each method how they read
// and stop. Blocks come from chunking/internal/mdblocks (goldmark, blocks
// only); chunk text is sliced from the source by offsets, never
// re-rendered.
//
// # Pipeline
//
// Sections are cut before every top-level H1–H3 heading, short ones are
// fused (while len(current) < min_char and len(current)+len(next)+2 ≤
// max_char), long ones are cut into pieces and packed, and the chunks are
// numbered; docs/chunkers.md (Markdown) describes each step, the
// decisions below make them precise.
//
// # Token budgets
//
// With Config.Tokenizer set, min_char, max_char and chunk_overlap count
// tokens instead of characters; docs/chunkers.md (Token budgets) has the
// rules, and lists with its reason every way the output differs from the
// reference's (the chunk hash is computed as the reference computes it).
// Beyond that page:
//
//   - Each section's text is counted once, into a tokens.Index: fusing
//     counts the join by scanning only the joint with the group before
//     it, and a section split into chunks has its paragraphs, lines,
//     words, chunks and overlaps counted through the index, each span by
//     scanning its two ends only; the counts are those of each span
//     counted alone (TestTokenIndexDifferential), and the work is about
//     1.2 scans per byte of a documentation corpus, against 2.3 when each
//     span was counted on its own (TestTokenWork). A section of 2 GiB or
//     more is counted span by span. The overlap's start is found by
//     bisection.
//   - Code, table and math parts follow the rules of character mode
//     (below) with every size in tokens: the word ends of a line too long
//     for a part are bisected up to a prefix known to be over, and the
//     floor of a quarter of max_char for code and math holds in tokens.
//     The line break a part loses when it ends a chunk is counted for
//     what it saves in tokens, not assumed to save one: for code and
//     math, what the closing line loses without it (in cl100k_base a
//     token for "```", none for "~~~"); for a table, what its last row
//     loses (none when the row ends in "|", which joins the break), looked
//     at row by row. Each part is then counted whole for the oversize
//     flag: where tokens merge across its line breaks, a part within the
//     budget by the sum may be over it by a token or so, and is marked
//     oversize (in a corpus of 10,081 documentation files chunked at 128
//     and at 512 tokens, no part is).
//
// # Target mode
//
// With Config.TargetChar (or TargetTokens) the chunker sets its own
// sizes from the target (TargetSizes) and cuts long sections and units
// into near-equal shares, each chunk closed where that costs least: its
// squared deviation from the share plus the cost of the boundary after it
// (measure.Cut: nothing for a paragraph end, then list item, line,
// sentence, whitespace and character, each worth twice the deviation of
// the one before; never after a heading; a paragraph ending with a colon
// stays with what it introduces). The choice is made as pieces come,
// over the pieces that fit in the ceiling, so memory stays bounded by it
// and each piece is weighed a bounded number of times (TestTargetLinear);
// docs/chunkers.md (Target mode) has the rule and the measurements
// behind it. The code is target.go and the branches
// that test splitter.target; with the target off none of it runs, so
// the reference mode's output is unchanged byte for byte.
//
// # Decisions the reference leaves open
//
//   - Section text runs from the section's first block to the end of its
//     last block, without trailing whitespace. Fused sections are joined
//     by exactly "\n\n" (the reference's join), whatever separated them
//     in the source, CRLF documents included.
//   - A leading blank line trimmed from a chunk is a whole line of
//     whitespace: the first line kept keeps its indentation.
//   - Fenced code, tables and display math are atomic only at the top
//     level (code inside a list item splits like text).
//   - Separators attach to the text before them, so a sentence end stays
//     with its sentence.
//   - Overlap (docs/chunkers.md) is never taken from a re-wrapped part,
//     is a proper suffix of the previous chunk, and shrinks when the next
//     piece would not fit with it.
//   - A heading line that moves to the next chunk (docs/chunkers.md)
//     starts it instead of an overlap.
//   - A piece or block fits when its text without trailing whitespace
//     does (a code block of exactly max_char characters plus its line
//     break stays whole, alone in its chunk).
//   - Too-long code, tables and math split into parts as docs/chunkers.md
//     (Atomic blocks, Tables) describes, with the reasons for the table
//     rule. Beyond it: a part that fits only once its last line break is
//     dropped is never packed with another piece; parts never start or
//     end with blank lines (a code or math block whose lines are all
//     blank is its fences, or "$$" lines, alone); a code part's bare
//     closing fence is added even when the original fence was unclosed
//     (every part stays valid Markdown), and the last part of a closed
//     block keeps the original closing line (which may be longer than the
//     opening fence); math that is not "$$" on its own lines (`\[`,
//     `\begin{X}`, "$$ x" openers) is wrapped whole, delimiters included,
//     in "$$" lines; the first row a repeated table header must fit with
//     may be a piece of a row.
//   - Spans (chunking.Span): a chunk cut from one section, or one whole
//     section, is verbatim: its span is the bytes of its content. Fused
//     sections span from the first one's start to the last one's end, and
//     are verbatim only when the source separates them by exactly "\n\n".
//     A part of a split code block, table or math block spans the body
//     lines or table rows it holds (the first line through the last),
//     not the fence, header or "$$" lines it repeats or adds; a chunk
//     holding such a part and other pieces spans from its first piece (or
//     overlap) to its last. For MDX the offsets and lines are of the file
//     before cleaning (CleanMDXMap maps them back), and a chunk is
//     verbatim only when no cleaning happened inside it.
//   - Warnings (values, with File and Line): an unclosed code fence
//     (WarnUnclosed); a block emitted (partly) as oversize
//     (WarnOversize). For MDX, lines refer to the cleaned text.
//   - MDX (docs/chunkers.md has the cleaning steps): fences are found line by line at any
//     indentation; a tag ends at its first '>' (attribute values holding
//     '>' are not recognised); import statements may span lines up to a
//     line ending in from '…'; only runs of "\n" (not "\r\n") collapse.
//   - Formats accepted: "", "markdown", "md", "mdx", "text", "txt" (text is
//     chunked as Markdown, like the reference). Invalid UTF-8 is an error
//     wrapping chunking.ErrNotUTF8 naming the document and the offset of
//     the first bad byte. NUL bytes are ordinary characters. A leading
//     byte-order mark is dropped.
package markdown
