// Package mdblocks is chunkstream's one Markdown block scanner. It parses
// a document with goldmark's CommonMark block parsers only (inline parsers
// would double the cost) plus a display-math block parser, and reports the
// top-level blocks as byte offsets, so chunkers slice the source instead
// of re-rendering it.
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
// poll.Poller sees its context end: goldmark cannot be stopped, so the
// reader it reads lines from panics and the scanner recovers. Scan never
// fails and never panics on any input, including invalid UTF-8 and NUL
// bytes; checking the encoding is the chunkers' job. Its work is tested
// by counting (bytes handed to the parsers, bytes allocated), not timing.
//
// docs/chunkers.md ("Markdown blocks") has every decision: top-level
// blocks only, line-aligned spans, front matter, heading titles, tables,
// display math, the nesting bound (MaxNesting) and segments
// (SegmentSize).
package mdblocks
