package markdown_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// Example_quickStart is the Go quick start of the README, statement for
// statement (TestREADMEQuickStart keeps them equal), so the README's code
// compiles and prints what this example's output says.
func Example_quickStart() {
	cfg := markdown.DefaultConfig() // min_char 1024, max_char 2048, chunk_overlap 128
	cfg.MinChar, cfg.MaxChar, cfg.ChunkOverlap = 1, 500, 50
	c, err := markdown.New(cfg) // validates: an error names the bad option
	if err != nil {
		log.Fatal(err)
	}
	doc := chunking.Document{Path: "guide.md", Content: []byte("# Guide\n\nIntro text.\n\n## Install\n\nRun the installer.\n")}
	chunks, _, err := c.Chunk(doc) // the chunks, and warnings as values
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%s %v %q\n", ch.Span(), ch.Metadata(), ch.Content())
	}
	// Store them as chunk split does: JSONL keeps each chunk's hash and span.
	// chunking.Save and chunking.Load do the same with a file.
	if err := chunking.Encode(os.Stdout, chunking.JSONL, chunks); err != nil {
		log.Fatal(err)
	}
	// Output:
	// lines 1-3 [{h1 Guide} {index 0} {file guide.md}] "# Guide\n\nIntro text."
	// lines 5-7 [{h1 Guide} {h2 Install} {index 1} {file guide.md}] "## Install\n\nRun the installer."
	// {"content":"# Guide\n\nIntro text.","metadata":{"h1":"Guide","index":0,"file":"guide.md"},"hash":"bb7413b598f740791e4fc3de2f6fb40193ca6622a067c9bc8959af6d8cf78ed4","span":{"start":0,"end":20,"first_line":1,"last_line":3,"verbatim":true}}
	// {"content":"## Install\n\nRun the installer.","metadata":{"h1":"Guide","h2":"Install","index":1,"file":"guide.md"},"hash":"7740d366ea1a0cab694ee6cde3774df18eb828bc98a80547efe9f69a19620b27","span":{"start":22,"end":52,"first_line":5,"last_line":7,"verbatim":true}}
}

// readmeQuickStart returns the Go program of the README's section "Use it
// as a Go library": the first ```go block there.
func readmeQuickStart(t *testing.T) string {
	t.Helper()
	sec, ok := testutil.DocSection(t, "README.md", "Use it as a Go library")
	if !ok {
		t.Fatal(`README.md has no section "## Use it as a Go library"`)
	}
	_, after, ok := strings.Cut(sec, "```go\n")
	if !ok {
		t.Fatal("README.md's library section has no ```go block")
	}
	code, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("README.md's ```go block is not closed")
	}
	return code
}

// funcBody parses src and returns the statements of its function name,
// printed without comments or blank lines, the paths it imports, and the
// identifiers the function uses as X in X.Sel (the packages among them).
func funcBody(t *testing.T, what, src, name string) (body string, imports []string, qualifiers map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, what, src, 0) // comments dropped
	if err != nil {
		t.Fatalf("%s does not parse: %v", what, err)
	}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		imports = append(imports, p)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			qualifiers = map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok {
						qualifiers[x.Name] = true
					}
				}
				return true
			})
			var b bytes.Buffer
			if err := format.Node(&b, fset, fn.Body); err != nil {
				t.Fatal(err)
			}
			// Blank lines are where comments were; they do not count.
			var lines []string
			for l := range strings.Lines(b.String()) {
				if strings.TrimSpace(l) != "" {
					lines = append(lines, l)
				}
			}
			return strings.Join(lines, ""), imports, qualifiers
		}
	}
	t.Fatalf("%s has no func %s", what, name)
	return "", nil, nil
}

// TestREADMEQuickStart keeps the README's Go quick start equal to
// Example_quickStart: the same statements in func main, and exactly the
// imports those statements use, so the README's program compiles and does
// what the example's output shows.
func TestREADMEQuickStart(t *testing.T) {
	readme := readmeQuickStart(t)
	mainBody, readmeImports, used := funcBody(t, "README.md's quick start", readme, "main")
	if !strings.HasPrefix(strings.TrimSpace(readme), "package main") {
		t.Error("README.md's quick start is not a whole program (package main)")
	}
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "chunking", "markdown", "readme_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	exampleBody, exampleImports, _ := funcBody(t, "readme_test.go", string(src), "Example_quickStart")
	if mainBody != exampleBody {
		t.Errorf("README.md's quick start differs from Example_quickStart:\nREADME:\n%s\nexample:\n%s", mainBody, exampleBody)
	}
	for _, p := range readmeImports {
		if !slices.Contains(exampleImports, p) {
			t.Errorf("README.md's quick start imports %s, which Example_quickStart's file does not", p)
		}
		if !used[path.Base(p)] {
			t.Errorf("README.md's quick start imports %s and does not use it", p)
		}
	}
	for _, p := range exampleImports {
		if used[path.Base(p)] && !slices.Contains(readmeImports, p) {
			t.Errorf("README.md's quick start uses %s without importing it", p)
		}
	}
}
