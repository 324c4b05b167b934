// Package mdblocks is chunkstream's one Markdown block scanner. It parses
// a document with goldmark's CommonMark block parsers only (inline parsers
// would double the cost) plus a display-math block parser, and reports the
// top-level blocks as byte offsets, so chunkers slice the source instead
// of re-rendering it.
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
// ScanPolled and ScanFuncPolled (one segment at a time, in bounded
// memory) stop the parse even inside a segment once a chunker's
// poll.Poller sees its context end (goldmark cannot be stopped, so the
// reader it reads lines from panics and the scanner recovers): a worker's
// time budget stops even a document that is one long segment, such as a
// list nested thousands of lines deep.
//
// # Decisions
//
//   - Only top-level blocks are reported. A heading inside a list item,
//     block quote, HTML block or code block is part of that block and is
//     never a section header.
//
//   - Spans are line-aligned: Start is a line start; End is just past the
//     last line's LF (a CR stays inside the line) or the end of the
//     source. Trailing blank lines are left out; blocks never overlap and
//     only blank lines lie between them. A block runs to the next
//     top-level block, so lazy continuation lines and closing fences
//     belong to it.
//
//   - Front matter is recognised before goldmark sees the text: the first
//     line is exactly "---" (YAML) or "+++" (TOML), trailing spaces
//     allowed, and a later line is the same delimiter; without one, "---"
//     is a thematic break.
//
//   - A leading UTF-8 byte-order mark belongs to no block.
//
//   - Heading titles come from the source, inline markup as written: ATX
//     titles trimmed, without a closing sequence of #s after a space or
//     tab (or making up the whole text); setext lines trimmed and joined
//     by single spaces.
//
//   - Tables (GFM) are found in paragraphs: a row followed by a delimiter
//     row (cells of -, optional colons, at least one pipe) with as many
//     cells; the paragraph's following lines are body rows, and lines
//     before the header row a paragraph of their own. Header cells are
//     counted with every unescaped pipe and with pipes in code spans
//     protected; either count may match. A delimiter row goldmark reads as
//     something else (a list item "- | -") is not seen.
//
//   - Display math is a block parser (blank lines inside do not split
//     it): a line starting (after at most three spaces) with "$$", `\[` or
//     `\begin{X}` opens a block only when its closing exists (a later line
//     ending with "$$" / `\]`, or the matching `\end{X}`, same-name
//     nesting counted), so an unclosed opener stays text. "$$x$$" alone on
//     a line is a one-line block; "$$x$$ more" and `\[Optional\] more` are
//     text. Math interrupts paragraphs. One lazily built index per
//     document finds the closings, so the parse stays linear.
//
//   - Link reference definitions stay paragraphs (goldmark's link
//     reference transformer is not used).
//
//   - Fenced code: Closed is false for a fence running to the end of the
//     document (or of its container); its body then runs to End.
//
//   - Speed: goldmark walks every block's lines after the block parse; a
//     paragraph transformer empties paragraph lines so that walk costs
//     nothing (without it the scan took 1.5–1.8× as long in
//     BenchmarkDropParagraphLines). Scan costs about 0.7× goldmark's plain
//     block parse (ParseOnly).
//
//   - Nesting is bounded: list items and block quotes nest at most
//     MaxNesting (32) deep. For every line goldmark asks each open
//     container whether the line continues it, and each scans the line's
//     indentation: a list nested d deep over d lines, each indented one
//     level more (d² bytes), costs about d³ (2,400 deep, 5.8 MB, took half
//     a minute and 300 MB), and d markers on one line cost d². The list
//     and block quote parsers are wrapped so that a marker that would open
//     a container deeper than MaxNesting opens nothing and the line reads
//     as text; each line then costs at most about 4 × MaxNesting scans.
//     Documents nested at most MaxNesting deep parse exactly as without
//     the bound. Over it, only the deeper content reads differently, and
//     rarely where the top-level block ends (a fence opened deeper does
//     not open, so a following unindented line continues the list
//     lazily). CommonMark sets no limit; other parsers cap nesting the
//     same way. ParseOnly, goldmark's own parse, is not bounded.
//
//   - Memory: a document longer than SegmentSize (2 MiB) is parsed in
//     segments (see SegmentSize): the blocks are those of one parse, and
//     goldmark's tree never holds more than a segment.
//
//   - Work is tested by counting, not timing: the bytes of the lines
//     goldmark's parsers are handed and the bytes allocated grow linearly
//     on adversarial inputs and deep nestings.
//
// Scan never fails and never panics on any input, including invalid
// UTF-8 and NUL bytes; checking the encoding is the chunkers' job.
package mdblocks
