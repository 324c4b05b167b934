//go:build cgo

package code

import (
	"context"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// TreeSitter reports whether this build parses JavaScript and TypeScript
// (tree-sitter, which needs cgo).
const TreeSitter = true

func grammar(name string) *sitter.Language {
	switch name {
	case "javascript":
		return javascript.GetLanguage()
	case "typescript":
		return typescript.GetLanguage()
	}
	return tsx.GetLanguage()
}

// parseJS returns the parse of a tree-sitter language.
func parseJS(name string) func(context.Context, []byte, string, func(int, int) bool, *poll.Poller) (outline, error) {
	return func(ctx context.Context, src []byte, module string, fits func(int, int) bool, pl *poll.Poller) (outline, error) {
		p := sitter.NewParser()
		defer p.Close()
		p.SetLanguage(grammar(name))
		tree, err := p.ParseCtx(ctx, nil, src)
		if err != nil {
			return outline{}, err
		}
		defer tree.Close()
		pl.Add(len(src))
		root := tree.RootNode()
		w := &tsWalker{src: src, fits: fits, pl: pl, cur: sitter.NewTreeCursor(root)}
		for i, c := range src {
			if c == '\n' {
				w.nl = append(w.nl, i)
			}
		}
		defer w.cur.Close()
		w.cuts = append(w.cuts, cut{at: 0})
		w.split(root, "", "", true)
		for i := range w.cuts {
			if w.cuts[i].path == "" { // outside any declaration: the module
				w.cuts[i].path = module
			}
		}
		var errs errList
		if root.HasError() {
			tsErrors(root, &errs)
		}
		return outline{cuts: w.cuts, errs: errs.list(), imports: w.imports.String()}, nil
	}
}

// tsWalker finds the cuts of a tree-sitter tree.
type tsWalker struct {
	src     []byte
	fits    func(start, end int) bool
	pl      *poll.Poller
	cur     *sitter.TreeCursor
	cuts    []cut
	imports strings.Builder
	nl      []int // offsets of the line breaks
}

// lineBegin returns the start of the line holding off.
func (w *tsWalker) lineBegin(off int) int {
	i, _ := slices.BinarySearch(w.nl, off) // line breaks before off
	if i == 0 {
		return 0
	}
	return w.nl[i-1] + 1
}

// multiLine reports whether src[start:end] holds a line break.
func (w *tsWalker) multiLine(start, end int) bool {
	i, _ := slices.BinarySearch(w.nl, start)
	return i < len(w.nl) && w.nl[i] < end
}

// kid is a named child of a node.
type kid struct {
	n          *sitter.Node
	start, end int
	typ        string
}

// kids returns n's named children.
func (w *tsWalker) kids(n *sitter.Node) []kid {
	var out []kid
	w.cur.Reset(n)
	if !w.cur.GoToFirstChild() {
		return nil
	}
	for {
		c := w.cur.CurrentNode()
		if c.IsNamed() {
			out = append(out, kid{n: c, start: int(c.StartByte()), end: int(c.EndByte()), typ: c.Type()})
		}
		if !w.cur.GoToNextSibling() {
			return out
		}
	}
}

// atoms are node types never cut inside: tokens, strings and comments.
func atom(typ string) bool {
	return strings.Contains(typ, "string") || strings.Contains(typ, "comment") || typ == "regex" ||
		typ == "jsx_text" || typ == "template_literal_type"
}

// split emits the cuts inside n, whose path is path: a cut at each named
// child that starts a line (a comment directly above a child, and a child
// starting mid-line, staying with what precedes), a cut at n's closing
// line, and the cuts inside children that do not fit. At the top (the
// program), the top-level import statements are collected. The first
// child's cut is made only below the top; above it, the cut before n
// stands.
func (w *tsWalker) split(n *sitter.Node, path, _ string, top bool) {
	if w.pl.Add(1) {
		return
	}
	kids := w.kids(n)
	if len(kids) == 0 {
		return
	}
	oneLine := !w.multiLine(kids[0].start, kids[len(kids)-1].end)
	type group struct {
		start, end int  // the group's cut offset and end
		line       bool // it may be cut before: it starts a line (or n is one line)
		main       kid  // the first child that is not a comment
		members    []kid
	}
	var groups []group
	for k, c := range kids {
		if top && c.typ == "import_statement" {
			if w.imports.Len() > 0 {
				w.imports.WriteByte('\n')
			}
			w.imports.Write(w.src[c.start:c.end])
		}
		ls, startsLine := w.lineStart(c.start)
		newGroup := startsLine || oneLine && k > 0
		if newGroup && len(groups) > 0 {
			g := &groups[len(groups)-1]
			if g.main.n == nil && startsLine && w.directlyAbove(g.end, c.start) {
				newGroup = false // a comment directly above c
			}
		}
		at := ls
		if !startsLine {
			at = c.start
		}
		if newGroup || len(groups) == 0 {
			groups = append(groups, group{start: at, line: startsLine || oneLine})
		}
		g := &groups[len(groups)-1]
		g.end = c.end
		g.members = append(g.members, c)
		if g.main.n == nil && !strings.Contains(c.typ, "comment") && c.typ != "decorator" {
			g.main = c
		}
	}
	for k, g := range groups {
		p := path
		if g.main.n != nil {
			if name := w.declName(g.main, top); name != "" {
				p = join(path, name)
			}
		}
		if g.line && (k > 0 || !top && g.start > int(n.StartByte())) {
			if g.start > w.cuts[len(w.cuts)-1].at {
				w.cuts = append(w.cuts, cut{at: g.start, path: p})
			}
		} else if top {
			w.cuts[len(w.cuts)-1].path = p
		}
		end := int(n.EndByte())
		if k+1 < len(groups) {
			end = groups[k+1].start
		}
		if w.fits(w.lineBegin(g.start), end) { // with what precedes it on its first line
			continue
		}
		if m := g.main; m.n != nil && m.start > g.start && w.fits(m.start, end) {
			// it fits without the comments above it: cut them off rather than cut it
			if ls, ok := w.lineStart(m.start); ok && ls > w.cuts[len(w.cuts)-1].at {
				w.cuts = append(w.cuts, cut{at: ls, path: p})
				continue
			}
		}
		for _, m := range g.members {
			if atom(m.typ) || w.fits(w.lineBegin(m.start), m.end) {
				continue // it fits with what precedes it on its first line
			}
			mp := path
			if m == g.main {
				mp = p
			} else if name := w.declName(m, false); name != "" {
				mp = join(path, name)
			}
			inner := m.n
			if m.typ == "export_statement" { // split the declaration it exports
				if d := m.n.ChildByFieldName("declaration"); d != nil {
					inner = d
				}
			}
			w.split(inner, mp, "", false)
		}
	}
	// the closing line ("}") of n, when it starts a line after the last child
	if !top {
		last := kids[len(kids)-1].end
		if rest := w.src[last:int(n.EndByte())]; w.multiLine(last, int(n.EndByte())) {
			if ls, ok := w.lineStart(last + firstNonSpace(rest)); ok && ls > w.cuts[len(w.cuts)-1].at && ls < int(n.EndByte()) {
				w.cuts = append(w.cuts, cut{at: ls, path: path})
			}
		}
	}
}

// lineStart returns the start of the line holding off, and whether only
// spaces and tabs precede off on it.
func (w *tsWalker) lineStart(off int) (int, bool) {
	i := off
	for i > 0 && (w.src[i-1] == ' ' || w.src[i-1] == '\t') {
		i--
	}
	return i, i == 0 || w.src[i-1] == '\n'
}

// directlyAbove reports whether the text between end and start is one
// line break (and spaces): nothing, not even a blank line, between.
func (w *tsWalker) directlyAbove(end, start int) bool {
	nl := 0
	for _, c := range w.src[end:start] {
		switch c {
		case '\n':
			nl++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return nl == 1
}

// declName returns the name a declaration node gives its symbol path,
// or "".
func (w *tsWalker) declName(k kid, top bool) string {
	n := k.n
	switch k.typ {
	case "export_statement":
		if d := n.ChildByFieldName("declaration"); d != nil {
			return w.declName(kid{n: d, typ: d.Type()}, top)
		}
		return ""
	case "function_declaration", "generator_function_declaration", "class_declaration", "abstract_class_declaration",
		"class", "interface_declaration", "type_alias_declaration", "enum_declaration", "method_definition",
		"method_signature", "abstract_method_signature", "public_field_definition", "field_definition",
		"internal_module", "module", "function_signature":
		name := n.ChildByFieldName("name")
		if name == nil && k.typ == "field_definition" {
			name = n.ChildByFieldName("property")
		}
		if name == nil {
			return ""
		}
		return name.Content(w.src)
	case "lexical_declaration", "variable_declaration":
		if !top {
			return "" // a local variable is no symbol
		}
		for _, d := range w.kids(n) {
			if d.typ == "variable_declarator" {
				if name := d.n.ChildByFieldName("name"); name != nil && name.Type() == "identifier" {
					return name.Content(w.src)
				}
			}
		}
	case "ambient_declaration":
		for _, d := range w.kids(n) {
			if s := w.declName(d, top); s != "" {
				return s
			}
		}
	}
	return ""
}

// tsErrors collects the error and missing nodes under n.
func tsErrors(n *sitter.Node, errs *errList) {
	if n.IsMissing() {
		errs.add(int(n.StartByte()), "missing "+n.Type())
		return
	}
	if n.IsError() {
		errs.add(int(n.StartByte()), "syntax error")
		return
	}
	for i := range int(n.ChildCount()) {
		c := n.Child(i)
		if c.HasError() || c.IsMissing() {
			tsErrors(c, errs)
		}
	}
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return len(b)
}
