// Package mdblocks is chunkstream's one Markdown block scanner. It parses
// a document with goldmark's CommonMark block parsers only (no inline
// parsers, which would double the cost) plus a small display-math block
// parser, and reports the document's top-level blocks as byte offsets into
// the source, so that chunkers slice the source instead of re-rendering it.
//
// # API
//
//	blocks := mdblocks.Scan(src) // []Block, in source order
//	for _, b := range blocks {
//		text := src[b.Start:b.End] // whole lines, no trailing blank lines
//		switch b.Kind {
//		case mdblocks.Heading: // b.Level, b.Title
//		case mdblocks.FencedCode: // b.FenceChar, b.FenceLen, b.Closed, b.BodyStart/BodyEnd
//		case mdblocks.Table: // src[b.Start:b.BodyStart] = header + delimiter rows
//		case mdblocks.Math: // src[b.BodyStart:b.BodyEnd] = inner lines
//		}
//	}
//
// ScanFunc hands the blocks over one segment at a time (bounded memory).
// ScanPolled and ScanFuncPolled do the same work and charge it, line by
// line, to a chunker's poll.Poller: once the Poller sees its context end,
// the parse stops even in the middle of a segment (goldmark's parser has
// no way to be stopped, so the reader it reads lines from ends it with a
// panic that the scanner recovers), and the stopped segment's blocks are
// dropped. This is what lets a worker's per-document time budget stop a
// document that is one long segment, such as a list nested thousands of
// lines deep with no heading to cut at.
//
// ParseOnly runs goldmark's plain block parse, the benchmark baseline.
//
// # Decisions
//
//   - Only top-level blocks are reported. A heading inside a list item,
//     block quote, HTML block or code block is part of that block and is
//     never a section header.
//
//   - Spans are line-aligned: Start is a line start; End is just past the
//     last line's line break (LF; CRLF input keeps its CR inside the line)
//     or the end of the source. Trailing blank lines (spaces, tabs, CR only)
//     are left out; blocks never overlap and only blank lines lie between
//     them. A block's span runs from its first line to the next top-level
//     block, so lazy continuation lines and closing fences belong to it.
//
//   - Front matter is recognised before goldmark sees the text: the first
//     line is exactly "---" (YAML) or "+++" (TOML), trailing spaces allowed,
//     and a later line is the same delimiter. Without a closing line there
//     is no front matter (the "---" is then a thematic break).
//
//   - A leading UTF-8 byte-order mark belongs to no block (front matter and
//     headings right after it are recognised).
//
//   - Heading titles are computed from the source: ATX titles are trimmed
//     and lose a closing sequence of #s preceded by a space or tab (or
//     making up the whole text); setext titles are their lines trimmed and
//     joined by single spaces. Inline markup is kept as written.
//
//   - Tables (GFM) are found in paragraphs: a row followed by a delimiter
//     row (cells of -, optional colons, at least one pipe) with the same
//     number of cells; every following line of the paragraph is a body
//     row. Paragraph lines before the header row become their own
//     paragraph block. Header cells are counted both with every unescaped
//     pipe and with pipes inside code spans protected; either count
//     matching the delimiter row makes a table. A delimiter row that
//     goldmark reads as something else (a list item "- | -") is not seen.
//
//   - Display math is a goldmark block parser (so blank lines inside do
//     not split it): a line starting (after at most three spaces) with
//     "$$", `\[` or `\begin{X}` opens a block only when its closing exists
//     — a later line ending with "$$" / `\]`, or the matching `\end{X}`
//     with same-name nesting counted — so an unclosed opener stays text.
//     "$$x$$" alone on a line is a one-line block; "$$x$$ more" and
//     `\[Optional\] more` (escaped brackets) are text.
//     Math interrupts paragraphs. The closing lines are found by one
//     lazily built index per document, so the parse stays linear.
//
//   - Link reference definitions stay paragraphs (goldmark's link
//     reference transformer is not used).
//
//   - Fenced code: Closed is false for a fence running to the end of the
//     document (or of its container); its body then runs to End.
//
//   - Speed: goldmark walks every block's lines after the block parse even
//     with no inline parsers; a paragraph transformer empties paragraph
//     lines so that walk costs nothing (spans come from positions, not
//     lines). Scan costs about 0.7× goldmark's plain block parse
//     (ParseOnly).
//
//   - Nesting is bounded: list items and block quotes nest at most
//     MaxNesting (32) deep. For every line goldmark asks each open
//     container whether the line continues it, and each scans the line's
//     indentation, so its time grows with the open containers times the
//     line's length: a list nested d deep over d lines, each indented one
//     level more (d² bytes), costs about d³ (800 deep took a second; 2,400
//     deep, 5.8 MB, half a minute and 300 MB), and d markers on one line
//     cost d². The list and block quote parsers are wrapped so that a
//     marker that would open a container deeper than MaxNesting opens
//     nothing: the line is read as text, like any line that opens no block
//     (a paragraph, the continuation of the paragraph open at that depth,
//     or indented code). Each line then costs at most about 4 × MaxNesting
//     scans of its length, whatever the nesting, and documents nested at
//     most MaxNesting deep parse exactly as without the bound. Over it,
//     only the content deeper than MaxNesting reads differently, and with
//     it, rarely, where the top-level block ends: a fence opened deeper
//     does not open, so a following unindented line is a lazy
//     continuation of the list instead of a paragraph or setext heading
//     of its own. CommonMark sets no limit; other parsers cap nesting
//     the same way, and 32 is far beyond what documents written by people
//     use. ParseOnly, goldmark's own parse, is not bounded.
//
//   - Memory: a document longer than SegmentSize (2 MiB) is parsed in
//     segments cut before a column-0 ATX heading that follows a blank
//     line, kept only when no fenced code, HTML block (types 1–5) or math
//     block is open at the cut (else the segment is parsed again twice as
//     long): the blocks are those of one parse, and goldmark's tree never
//     holds more than a segment.
//
//   - Work is tested by counting, not timing: the tests count the bytes
//     of the lines goldmark's parsers are handed and the bytes allocated,
//     and check that both grow linearly on adversarial inputs and deep
//     nestings; CPU time is measured by the benchmarks only.
//
// Scan never fails and never panics on any input, including invalid
// UTF-8 and NUL bytes; checking the encoding is the chunkers' job.
package mdblocks
