package code_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// decl is a declaration an oracle found: [start, end) without its doc
// comment or decorators, and full, the start with them.
type decl struct {
	start, end, full int
	name             string
}

// fileFacts is what the oracles say of one file: whether it parses, its
// declarations, and the ranges of its tokens that span lines (a cut must
// not fall inside one).
type fileFacts struct {
	ok     bool
	decls  []decl
	tokens [][2]int
}

// goFacts parses Go source with go/parser and go/scanner: every function,
// method and type, var and const declaration (whole groups and each spec
// with its own doc), and the multi-line tokens.
func goFacts(src []byte) fileFacts {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return fileFacts{}
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var out fileFacts
	out.ok = true
	add := func(doc *ast.CommentGroup, start, end token.Pos, name string) {
		d := decl{start: off(start), end: off(end), name: name}
		d.full = d.start
		if doc != nil {
			d.full = off(doc.Pos())
		}
		out.decls = append(out.decls, d)
	}
	for _, dl := range f.Decls {
		switch d := dl.(type) {
		case *ast.FuncDecl:
			add(d.Doc, d.Pos(), d.End(), d.Name.Name)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			add(d.Doc, d.Pos(), d.End(), d.Tok.String())
			if d.Lparen.IsValid() {
				for _, s := range d.Specs {
					var doc *ast.CommentGroup
					switch s := s.(type) {
					case *ast.TypeSpec:
						doc = s.Doc
					case *ast.ValueSpec:
						doc = s.Doc
					}
					add(doc, s.Pos(), s.End(), "spec")
				}
			}
		}
	}
	var s scanner.Scanner
	file := fset.AddFile("", -1, len(src))
	s.Init(file, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if strings.Contains(lit, "\n") && (tok == token.STRING || tok == token.COMMENT) {
			start := file.Offset(pos)
			out.tokens = append(out.tokens, [2]int{start, start + len(lit)})
		}
	}
	return out
}

// pyOracle reads file paths on stdin and writes, per file, a JSON line
// of what Python's own parser says: ok, every def and class at any depth
// as [start, end, full] byte offsets (full from its first decorator), and
// the byte ranges of tokens that span lines.
const pyOracle = `
import ast, io, json, sys, tokenize
for path in sys.stdin.read().split("\n"):
    if not path:
        continue
    out = {"ok": False, "decls": [], "tokens": []}
    try:
        src = open(path, "rb").read()
        text = src.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        tree = ast.parse(text)
        starts = [0]
        for line in text.encode("utf-8").split(b"\n"):
            starts.append(starts[-1] + len(line) + 1)
        at = lambda l, c: starts[l - 1] + c
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                full = min([at(d.lineno, d.col_offset) for d in n.decorator_list] + [at(n.lineno, n.col_offset)])
                # the decorator's "@" is one byte before its expression
                if n.decorator_list:
                    full -= 1
                out["decls"].append([at(n.lineno, n.col_offset), at(n.end_lineno, n.end_col_offset), full, n.name])
        for t in tokenize.tokenize(io.BytesIO(text.encode("utf-8")).readline):
            if t.start[0] != t.end[0] and t.type in (tokenize.STRING, getattr(tokenize, "FSTRING_START", -1)):
                out["tokens"].append([at(*t.start), at(*t.end)])
        out["ok"] = True
    except Exception:
        pass
    print(json.dumps(out))
`

// pyFacts runs pyOracle over files of dir; it skips t without python3.
func pyFacts(t testing.TB, dir string, files []string) []fileFacts {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here: the Python oracle is Python's own parser")
	}
	var in bytes.Buffer
	for _, f := range files {
		in.WriteString(filepath.Join(dir, filepath.FromSlash(f)) + "\n")
	}
	cmd := exec.Command("python3", "-c", pyOracle)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 oracle: %v", err)
	}
	var facts []fileFacts
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var r struct {
			OK     bool     `json:"ok"`
			Decls  [][4]any `json:"decls"`
			Tokens [][2]int `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		ff := fileFacts{ok: r.OK, tokens: r.Tokens}
		for _, d := range r.Decls {
			ff.decls = append(ff.decls, decl{start: int(d[0].(float64)), end: int(d[1].(float64)), full: int(d[2].(float64)), name: d[3].(string)})
		}
		facts = append(facts, ff)
	}
	if len(facts) != len(files) {
		t.Fatalf("python3 oracle answered for %d of %d files", len(facts), len(files))
	}
	return facts
}

// lcResult is LangChain's run over a list of files: its RESULT fields and,
// per file, the byte ranges of its chunks and (JavaScript, TypeScript)
// the declarations and the tokens spanning lines TypeScript's parser finds.
type lcResult struct {
	chunks [][][2]int
	decls  [][]decl
	tokens [][][2]int
	result []string
}

// runLangChain runs bench/code-splitters/lc-code.mjs over files of dir;
// it skips t when node or the harness's packages are missing.
func runLangChain(t testing.TB, dir string, files []string, lang string, size int, decls bool) lcResult {
	t.Helper()
	root := testutil.RepoRoot(t)
	harness := filepath.Join(root, "bench", "code-splitters")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node here: LangChain.js runs under Node.js")
	}
	if _, err := os.Stat(filepath.Join(harness, "node_modules", "@langchain", "textsplitters")); err != nil {
		t.Skip("bench/code-splitters has no node_modules (npm ci there)")
	}
	tmp := t.TempDir()
	list := filepath.Join(tmp, "files")
	if err := os.WriteFile(list, []byte(strings.Join(files, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(harness, "lc-code.mjs"), "--dir", dir, "--files", list, "--lang", lang,
		"--size", strconv.Itoa(size), "--out", filepath.Join(tmp, "out.jsonl")}
	if decls {
		args = append(args, "--decls")
	}
	out, err := exec.Command("node", args...).Output()
	if err != nil {
		t.Fatalf("node lc-code.mjs: %v", err)
	}
	res := lcResult{result: strings.Split(strings.TrimSpace(string(out)), "\t")}
	data, err := os.ReadFile(filepath.Join(tmp, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			Chunks [][2]int `json:"chunks"`
			Decls  [][2]int `json:"decls"`
			Tokens [][2]int `json:"tokens"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		res.chunks = append(res.chunks, r.Chunks)
		var ds []decl
		for _, d := range r.Decls {
			ds = append(ds, decl{start: d[0], end: d[1], full: d[0]})
		}
		res.decls = append(res.decls, ds)
		res.tokens = append(res.tokens, r.Tokens)
	}
	return res
}

// oracleFacts returns what the oracles say of each of docs, files of dir
// in a tree: go/parser for Go, Python's own parser for Python, and for
// JavaScript and TypeScript TypeScript's parser, through lc, a run of the
// LangChain harness with declarations.
func oracleFacts(t testing.TB, tree, dir string, files []string, docs []chunking.Document, lc func() lcResult) []fileFacts {
	t.Helper()
	var facts []fileFacts
	switch tree {
	case "go":
		for _, d := range docs {
			facts = append(facts, goFacts(d.Content))
		}
	case "python":
		facts = pyFacts(t, dir, files)
	default:
		r := lc()
		for i, ds := range r.decls {
			facts = append(facts, fileFacts{ok: true, decls: ds, tokens: r.tokens[i]})
		}
	}
	return facts
}
