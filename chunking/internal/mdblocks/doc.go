// Package mdblocks is chunkstream's one Markdown block scanner. It reads
// a document's top-level blocks as goldmark's CommonMark block parsers
// (inline parsers would double the cost) plus a display-math block parser
// read them, and reports them as byte offsets, so chunkers slice the source
// instead of re-rendering it.
//
// Two scanners share the work. A fast scanner (fast.go) reads, line by
// line, the blocks it can decide exactly as goldmark's parsers do:
// paragraphs, ATX headings, fenced and indented code, thematic breaks, HTML
// blocks of types 2 to 7 (goldmark's own parser says which line opens
// one), and the extent of lists and block quotes whose every line it can
// place (an item marker, an indented line, a blank line, a line opening a
// block that surely closes them, a lazy line after text that surely is a
// paragraph). Whatever else it meets (a setext underline, display math, an
// HTML block of type 1, a line that might be a lazy continuation, an empty
// list item before a blank line, another list's marker) it
// hands to goldmark from the start of the block that line belongs to up to
// the next safe cut: a line after a blank line that starts at column 0
// with text, an ATX heading or a code fence, where every container and
// paragraph goldmark has open is closed (a top-level fence, HTML block of
// types 1–5 or math block still open there makes the cut move on, twice
// as far each time). goldmark stays the specification: FuzzFastScan
// compares the two on every input with goldmark's one parse of the whole
// document, and TestFastCorpus on a sample of a real corpus, of which the
// fast scanner reads about 97% itself; the scan then costs about a fifth
// of goldmark's plain block parse.
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
// memory) stop the scan even inside a segment once a chunker's
// poll.Poller sees its context end: the fast scanner charges its work
// every few kilobytes; goldmark cannot be stopped, so the reader it reads
// lines from panics and the scanner recovers. Scan never
// fails and never panics on any input, including invalid UTF-8 and NUL
// bytes; checking the encoding is the chunkers' job. Its work is tested
// by counting (bytes of the lines read or handed to goldmark's parsers,
// bytes allocated), not timing.
//
// docs/chunkers.md ("Markdown blocks") has every decision: top-level
// blocks only, line-aligned spans, front matter, heading titles, tables,
// display math, the fast scanner and its hand-overs, the nesting bound
// (MaxNesting) and segments (SegmentSize).
package mdblocks
