package mdblocks

import (
	"bytes"
	"sort"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// KindMathBlock is the goldmark node kind of a display math block.
var KindMathBlock = ast.NewNodeKind("MathBlock")

// mathDelim says how a display math block opened.
type mathDelim uint8

const (
	delimDollars mathDelim = iota + 1 // $$ … $$
	delimBracket                      // \[ … \]
	delimEnv                          // \begin{X} … \end{X}
)

// mathBlock is the goldmark node of a display math block.
type mathBlock struct {
	ast.BaseBlock
	delim mathDelim
	// closeAt is an offset (in the parsed text) in the closing line.
	closeAt int
	closed  bool
}

// Kind implements ast.Node.
func (n *mathBlock) Kind() ast.NodeKind { return KindMathBlock }

// Dump implements ast.Node.
func (n *mathBlock) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// IsRaw implements ast.Node: the block's lines are not inline-parsed.
func (n *mathBlock) IsRaw() bool { return true }

// mathIndex makes every Open a lookup, so that unclosed openers never
// cost a scan to the end of the document each.
type mathIndex struct {
	dollarEnds  []int       // starts of lines whose trimmed text ends with "$$"
	bracketEnds []int       // starts of lines whose trimmed text ends with `\]`
	envClose    map[int]int // offset of `\begin{X}` → offset of its matching `\end{X}`
}

// mathSourceKey holds, in a parse's context, the *mathSource of the text
// being parsed.
var mathSourceKey = parser.NewContextKey()

// mathSource locates the parsed segment in the document, whose index,
// built on the first math opener, a closing line in a later segment is
// found in.
type mathSource struct {
	base   int // offset of the parsed text in the document
	shared *lazyMathIndex
}

type lazyMathIndex struct {
	doc []byte
	idx *mathIndex
}

func buildMathIndex(src []byte) *mathIndex {
	idx := &mathIndex{envClose: map[int]int{}}
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := bytes.TrimRight(src[start:end], " \t\r")
		if bytes.HasSuffix(line, []byte("$$")) {
			idx.dollarEnds = append(idx.dollarEnds, start)
		} else if bytes.HasSuffix(line, []byte(`\]`)) {
			idx.bracketEnds = append(idx.bracketEnds, start)
		}
		start = end + 1
	}
	// Match \begin{X} with \end{X}, same names nesting, in one pass.
	stacks := map[string][]int{}
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		rest := src[i:]
		switch {
		case bytes.HasPrefix(rest, []byte(`\begin{`)):
			if name, ok := envName(rest[len(`\begin{`):]); ok {
				stacks[string(name)] = append(stacks[string(name)], i)
			}
		case bytes.HasPrefix(rest, []byte(`\end{`)):
			if name, ok := envName(rest[len(`\end{`):]); ok {
				if st := stacks[string(name)]; len(st) > 0 {
					idx.envClose[st[len(st)-1]] = i
					stacks[string(name)] = st[:len(st)-1]
				}
			}
		}
		i++
	}
	return idx
}

// envName returns the environment name before the closing brace.
func envName(b []byte) ([]byte, bool) {
	for i := 0; i < len(b) && i < 64; i++ {
		switch c := b[i]; {
		case c == '}':
			return b[:i], i > 0
		case c == '*' || c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			return nil, false
		}
	}
	return nil, false
}

// firstAfter returns the first element of sorted xs greater than v, or -1.
func firstAfter(xs []int, v int) int {
	i := sort.SearchInts(xs, v+1)
	if i == len(xs) {
		return -1
	}
	return xs[i]
}

// mathParser is a goldmark block parser for display math (see the package
// documentation).
type mathParser struct{}

func (mathParser) Trigger() []byte { return []byte{'$', '\\'} }

func (mathParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos >= len(line) {
		return nil, parser.NoChildren
	}
	rest := line[pos:]
	ms, _ := pc.Get(mathSourceKey).(*mathSource)
	if ms == nil {
		ms = &mathSource{shared: &lazyMathIndex{doc: reader.Source()}}
		pc.Set(mathSourceKey, ms)
	}
	if ms.shared.idx == nil {
		ms.shared.idx = buildMathIndex(ms.shared.doc)
	}
	idx := ms.shared.idx
	here := ms.base + seg.Start + pos // offset of the opener in the document
	trimmed := bytes.TrimRight(rest, " \t\r\n")
	node := &mathBlock{}
	switch {
	case bytes.HasPrefix(rest, []byte("$$")):
		inner := trimmed[2:]
		if k := bytes.Index(inner, []byte("$$")); k >= 0 {
			if k+2 != len(inner) {
				return nil, parser.NoChildren // "$$x$$ text": inline, not a block
			}
			node.delim, node.closed = delimDollars, true
			break
		}
		at := firstAfter(idx.dollarEnds, here)
		if at < 0 {
			return nil, parser.NoChildren
		}
		node.delim, node.closeAt = delimDollars, at-ms.base
	case bytes.HasPrefix(rest, []byte(`\[`)):
		if k := bytes.Index(trimmed[2:], []byte(`\]`)); k >= 0 {
			if k+2 != len(trimmed[2:]) {
				return nil, parser.NoChildren // `\[Optional\] text`: escaped brackets, not math
			}
			node.delim, node.closed = delimBracket, true
			break
		}
		at := firstAfter(idx.bracketEnds, here)
		if at < 0 {
			return nil, parser.NoChildren
		}
		node.delim, node.closeAt = delimBracket, at-ms.base
	case bytes.HasPrefix(rest, []byte(`\begin{`)):
		end, ok := idx.envClose[here]
		if !ok {
			return nil, parser.NoChildren
		}
		node.delim = delimEnv
		if end-ms.base < seg.Stop {
			node.closed = true
		} else {
			node.closeAt = end - ms.base
		}
	default:
		return nil, parser.NoChildren
	}
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (mathParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	n := node.(*mathBlock)
	if n.closed {
		return parser.Close
	}
	_, seg := reader.PeekLine()
	if seg.Stop > n.closeAt {
		n.closed = true
	}
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}

func (mathParser) CanInterruptParagraph() bool { return true }

func (mathParser) CanAcceptIndentedLine() bool { return false }
