package mdblocks

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxNesting is the deepest nesting of containers (list items and block
// quotes, one inside the other) that Scan lets goldmark build. For every
// line goldmark asks each open container whether the line continues it,
// and each of them scans the line's indentation: a list nested d deep over
// d lines, each indented one level more, costs about d³. A list or quote
// marker that would open a container deeper than this is read as text
// instead (a paragraph line, or the continuation of one), so each line
// costs at most MaxNesting such scans. Documents nested at most MaxNesting
// deep parse exactly as without the bound.
const MaxNesting = 32

// boundedBlockParsers returns goldmark's CommonMark block parsers with the
// list and block quote parsers bounded to maxNesting containers.
func boundedBlockParsers(maxNesting int) []util.PrioritizedValue {
	bps := parser.DefaultBlockParsers()
	for i, v := range bps {
		switch v.Value {
		case parser.NewListParser():
			bps[i].Value = boundedList{BlockParser: parser.NewListParser(), max: maxNesting}
		case parser.NewBlockquoteParser():
			bps[i].Value = boundedQuote{BlockParser: parser.NewBlockquoteParser(), max: maxNesting}
		}
	}
	return bps
}

// boundedList is goldmark's list parser, refusing to open a list whose
// items would be nested deeper than max containers. Items of a list that
// is already open are never refused (the list item parser is not
// wrapped): they are as deep as their list.
type boundedList struct {
	parser.BlockParser
	max int
}

// Open opens a list as goldmark does, unless its parent is already max
// containers deep. goldmark's list parser only reads the line (it does
// not advance the reader) and clears flags of the parse that must be
// cleared whether or not the list opens, so it is always called.
func (b boundedList) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	node, state := b.BlockParser.Open(parent, reader, pc)
	if node != nil && containerDepth(parent, b.max) >= b.max {
		return nil, parser.NoChildren
	}
	return node, state
}

// boundedQuote is goldmark's block quote parser, refusing to open a quote
// nested deeper than max containers.
type boundedQuote struct {
	parser.BlockParser
	max int
}

// Open opens a block quote as goldmark does, unless its parent is already
// max containers deep. goldmark's quote parser advances the reader past
// the marker, so the depth is checked first.
func (b boundedQuote) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if containerDepth(parent, b.max) >= b.max {
		return nil, parser.NoChildren
	}
	return b.BlockParser.Open(parent, reader, pc)
}

// containerDepth returns the number of list items and block quotes among
// n and its ancestors, counting no further than limit.
func containerDepth(n ast.Node, limit int) int {
	d := 0
	for ; n != nil && d < limit; n = n.Parent() {
		switch n.Kind() {
		case ast.KindListItem, ast.KindBlockquote:
			d++
		}
	}
	return d
}
