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
// With Config.Tokenizer set (option tokenizer: "cl100k_base" or
// "o200k_base"; chunkstream's own), min_char, max_char and chunk_overlap
// count tokens of that encoding instead of characters, and the pipeline
// above is the same with sizes in tokens. Without it, sizes count
// characters, as the reference's do. The output is not the reference's
// byte for byte: the chunk hash is computed exactly as the reference
// computes it (equal content and metadata give an equal hash), and every
// difference in the chunks is one of the decisions below, each listed
// with its reason in docs/chunkers.md. They touch most real documents:
// executed runs of the reference implementations over real
// documentation found 1 file of 648 and 134 of 10,081 chunked
// identically. In token mode:
//
//   - A chunk's size is the exact token count of its content as emitted:
//     no chunk has more than max_char tokens unless it is marked oversize,
//     and oversize is decided on that exact count.
//   - Tokens of a concatenation are not the sum of its parts' tokens, so
//     fusing counts the joined text itself ("\n\n" seams included), kept
//     incrementally so that each section is read about once.
//   - Splitting a long section counts each piece on its own and packs by
//     the sum (the search); the chunk's text is then counted whole, and
//     when that exceeds max_char the last pieces (and a heading left last)
//     move to the next chunk, then the overlap is dropped, until it fits.
//     On Markdown the sum nearly always bounds the whole (pieces meet at
//     whitespace), so this rarely happens.
//   - The overlap is the longest run of whole pieces, else of whole words,
//     at the end of the previous chunk whose tokens (counted on its own)
//     are at most chunk_overlap, found by bisection.
//   - A word longer than max_char tokens is cut into parts of at most
//     max_char tokens at character boundaries (never inside a character,
//     even where a token would be).
//   - Code, table and math parts follow the rules of character mode
//     (below) with every size in tokens: parts are packed greedily to the
//     full budget; a line too long for a part is cut at the last word end
//     whose piece, counted exactly, fits (the word ends are bisected up to
//     a prefix known to be over), else at the longest run of whole
//     characters that fits; a table row is cut only when it alone has
//     more than max_char tokens; a table's header is repeated only where
//     it leaves a quarter of max_char tokens and fits with the part's
//     first row; and the floor of a quarter of max_char for code and math
//     holds in tokens. Lines are packed by the sum of their own tokens.
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
//   - Spans do not depend on the unit: they are the source offsets of the
//     pieces a chunk holds, found as in character mode (see Spans below).
//   - Counting stops once a text is known to be over the budget, so a
//     megabyte section costs about max_char tokens of counting to find it
//     must be split. Tokens are counted by the module's own counter (exact
//     to OpenAI's tokenizer; see the module's internal/tokens package),
//     about two to three times the time of character mode overall.
//
// # Decisions the reference leaves open
//
//   - Sizes are characters (code points) of the chunk content as emitted,
//     or tokens (see Token budgets).
//   - Section text runs from the section's first block to the end of its
//     last block, without trailing whitespace; the source's own blank
//     lines, indentation, tabs, CRs and non-breaking spaces are kept.
//     Fused sections are joined by exactly "\n\n" (the reference's join),
//     whatever separated them in the source, CRLF documents included.
//   - Chunks are trimmed of leading blank lines (whole lines of
//     whitespace; the first line keeps its indentation) and of all
//     trailing whitespace. A chunk left empty is dropped and takes no
//     index.
//   - Only top-level blocks count: a heading inside a list, quote or HTML
//     block is content, and fenced code, tables and display math are
//     atomic only at the top level (code inside a list item splits like
//     text).
//   - Separators attach to the text before them, so a sentence end (".",
//     "!", "?", optionally followed by closing quotes, brackets or
//     emphasis marks, then whitespace) stays with its sentence; CJK
//     "。！？" end a sentence with no space after them. No abbreviation list:
//     "e.g. " ends a piece, which only matters for sections that must be
//     cut inside a line.
//   - Overlap is taken only between chunks of one split section, only
//     from source text (never from a code block, table or math block, nor
//     from a re-wrapped part), is a proper suffix of the previous chunk,
//     and starts at a word start: the longest run of whole pieces of at
//     most chunk_overlap characters, else the longest run of whole words
//     at the end of the last piece. It shrinks when the next piece would
//     not fit with it. Text without spaces (CJK) is one long word, so it
//     gets no overlap rather than a cut one.
//   - A heading line (H4–H6 inside a section) that would end a chunk
//     moves to the next chunk with the text it heads, which then starts
//     with it instead of an overlap.
//   - A piece or block fits when its text without trailing whitespace
//     does (a code block of exactly max_char characters plus its line
//     break stays whole, alone in its chunk).
//   - Too-long code, tables and math: parts are packed greedily from
//     whole lines to the full budget, so they are as few as it allows: a
//     part may take max_char characters once its last line break is
//     dropped (it is, when the part ends a chunk; a part that fits only
//     so is never packed with another piece). Parts never start or end
//     with blank lines (a code or math block whose lines are all blank
//     is its fences, or "$$" lines, alone). A line too long for a part (a table row: only one
//     longer than max_char alone) becomes several lines, each as long as
//     a part's budget allows: cut at the last word end that fits (the
//     whitespace at the cut belongs to neither line, so it takes no
//     room), else, when a word alone is longer, between characters. A
//     code part's bare closing fence is added even when the original
//     fence was unclosed (every part stays valid Markdown); the last part
//     of a closed block keeps the original closing line (which may be
//     longer than the opening fence). Math that is not "$$" on its own
//     lines (`\[`, `\begin{X}`, "$$ x" openers) is wrapped whole,
//     delimiters included, in "$$" lines. When the wrapper of code or
//     math (fence line + closing fence, or the "$$" lines) is at least
//     max_char long, the block is emitted whole as one oversize chunk.
//     When it leaves less than max_char/4 for the body, parts take
//     max_char/4 characters of body anyway and are marked oversize: this
//     keeps the output linear in the input.
//   - Tables split between rows. The header (the header and delimiter
//     rows) goes in a part only where it fits: the first part starts
//     with it, and a later part does when the header leaves at least
//     max_char/4 for rows and fits with the part's first row (or piece of
//     a row). Every other part is rows alone, packed to max_char; a
//     header that fits with no row is the first part on its own, and
//     only a header longer than max_char alone makes an oversize table
//     part. So no part is oversize where its rows would fit, a split
//     table holds at most its own size plus one header per part, in as
//     few parts as the budget allows, and a table whose header takes more
//     than three quarters of max_char holds the header once. Parts
//     without the header are not valid tables on their own (Markdown
//     reads them as text): that is the price of the budget, paid only
//     where the header does not fit. This deliberately differs from the
//     reference, which splits every table at line breaks like text
//     (parts without their header), from cutting the rows of wide tables
//     into word fragments that each repeat the header (on one real file,
//     36 chunks of 75 thousand characters in all where the reference
//     makes 10 of 17 thousand), and from giving each row that does not
//     fit with the header a part of its own with it (on two real files,
//     25 oversize parts of 2,966–3,008 characters at max_char 2048).
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
//     (WarnUnclosed); a block emitted (partly) as oversize (WarnOversize). For MDX, lines refer to the
//     cleaned text.
//   - MDX: a document is MDX when Format is "mdx" or, without a Format,
//     when Path ends in ".mdx". Fences are found line by line at any
//     indentation; a tag ends at its first '>' (attribute values holding
//     '>' are not recognised); import statements may span lines up to a
//     line ending in from '…'; only runs of "\n" (not "\r\n") collapse.
//   - Formats accepted: "", "markdown", "md", "mdx", "text", "txt" (text is
//     chunked as Markdown, like the reference). Invalid UTF-8 is an error
//     wrapping chunking.ErrNotUTF8 naming the document and the offset of
//     the first bad byte. NUL bytes are ordinary characters. A leading
//     byte-order mark is dropped.
package markdown
