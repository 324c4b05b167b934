// Package srcspan turns byte ranges of a document into chunking.Spans:
// the 1-based lines of the range's first and last byte, and whether the
// chunk's content is exactly the bytes of the range. The chunkers share
// it.
package srcspan

import (
	"bytes"

	"github.com/chunkstream/chunkstream/chunking"
)

// Lines finds the spans of ranges of one document. Line numbers come from
// a cursor that moves to each offset asked for, so ranges in roughly
// increasing order cost time linear in the document. A Lines is not safe
// for concurrent use.
type Lines struct {
	src  []byte
	off  int // the cursor
	line int // line breaks in src[:off]
}

// New returns a Lines for the original document src.
func New(src []byte) *Lines { return &Lines{src: src} }

// At returns the 1-based line holding byte off.
func (l *Lines) At(off int) int {
	if off >= l.off {
		l.line += bytes.Count(l.src[l.off:off], newline)
	} else {
		l.line -= bytes.Count(l.src[off:l.off], newline)
	}
	l.off = off
	return l.line + 1
}

var newline = []byte{'\n'}

// Span returns the span of src[start:end] (start < end) for a chunk of
// content: Verbatim when content is exactly those bytes.
func (l *Lines) Span(start, end int, content string) chunking.Span {
	first := l.At(start)
	last := l.At(end - 1)
	return chunking.Span{Start: start, End: end, FirstLine: first, LastLine: last,
		Verbatim: len(content) == end-start && content == string(l.src[start:end])}
}
