package mdblocks

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxNesting is the deepest nesting of list items and block quotes that
// Scan lets goldmark build (see the package documentation).
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
// items would be nested deeper than max containers (an open list's items
// are as deep as the list).
type boundedList struct {
	parser.BlockParser
	max int
}

// Open opens a list as goldmark does, unless its parent is already max
// containers deep. goldmark's parser is always called: it only reads the
// line, and clears parse flags that must be cleared either way.
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
// max containers deep (checked first: goldmark's parser advances the
// reader).
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
