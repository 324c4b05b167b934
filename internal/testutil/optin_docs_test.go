package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOptInsDocumented: the opt-in variables the module's tests use (the
// names passed to OptIn and Enabled in any of its Go files) are exactly
// OptIns, and README.md's "Set up" section and the "Opt-in tests" part of
// docs/development.md's "Building and testing" name exactly these, so the
// README's list of what skips is true.
func TestOptInsDocumented(t *testing.T) {
	root := RepoRoot(t)
	registered := map[string]bool{}
	for _, v := range OptIns() {
		registered[v.Name] = true
	}
	used := optInsUsed(t, root)
	for name, where := range used {
		if !registered[name] {
			t.Errorf("%s: %s is passed to OptIn or Enabled but is not one of testutil.OptIns", where, name)
		}
	}
	for name := range registered {
		if _, ok := used[name]; !ok {
			t.Errorf("%s is one of testutil.OptIns but no test uses it", name)
		}
	}

	readme, ok := DocSection(t, "README.md", "Set up")
	if !ok {
		t.Fatal(`README.md has no "## Set up" section`)
	}
	building, ok := DocSection(t, "docs/development.md", "Building and testing")
	if !ok {
		t.Fatal(`docs/development.md has no "## Building and testing" section`)
	}
	optIns, ok := Subsection(building, "Opt-in tests")
	if !ok {
		t.Fatal(`docs/development.md's "Building and testing" has no "### Opt-in tests"`)
	}
	for _, doc := range []struct{ name, text string }{
		{`README.md's "Set up"`, readme},
		{`docs/development.md's "Opt-in tests"`, optIns},
	} {
		named := map[string]bool{}
		for _, m := range testVariable.FindAllString(doc.text, -1) {
			named[m] = true
		}
		if got, want := slices.Sorted(maps.Keys(named)), slices.Sorted(maps.Keys(registered)); !slices.Equal(got, want) {
			t.Errorf("%s names the test variables %v, want the opt-in variables %v", doc.name, got, want)
		}
	}
}

// testVariable matches a variable of the tests' own in the docs.
var testVariable = regexp.MustCompile(`CHUNKSTREAM_TEST_[A-Z0-9_]+`)

// optInsUsed returns the variables passed to OptIn and Enabled in the Go
// files of the module under root (nested modules, testdata and vendor
// left out), each with the place of one use. A name must be a string
// constant of this package or a literal.
func optInsUsed(t *testing.T, root string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	consts := map[string]string{} // this package's string constants
	self, err := parser.ParseFile(fset, filepath.Join(root, "internal", "testutil", "optin.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range self.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	used := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case p == root:
			case name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, "."):
				return filepath.SkipDir
			default:
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "internal/testutil/optin.go" || rel == "internal/testutil/optin_test.go" {
			return nil // the definitions and their own test
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		inTestutil := f.Name.Name == "testutil" && filepath.Dir(rel) == "internal/testutil"
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn string
			switch f := call.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := f.X.(*ast.Ident); ok && x.Name == "testutil" {
					fn = f.Sel.Name
				}
			case *ast.Ident:
				if inTestutil {
					fn = f.Name
				}
			}
			args := call.Args
			switch fn {
			case "OptIn":
				args = args[min(1, len(args)):]
			case "Enabled":
			default:
				return true
			}
			for _, a := range args {
				where := fset.Position(a.Pos()).String()
				var name string
				switch a := a.(type) {
				case *ast.BasicLit:
					name, _ = strconv.Unquote(a.Value)
				case *ast.SelectorExpr:
					name = consts[a.Sel.Name]
				case *ast.Ident:
					name = consts[a.Name]
				}
				if name == "" {
					t.Errorf("%s: the variable passed to testutil.%s is neither a literal nor a constant of testutil", where, fn)
					continue
				}
				if _, seen := used[name]; !seen {
					used[name] = where
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

// TestREADMETestCommand: the README's test command is go test -race ./...
// with no other flag or variable: the default run passes as written, and
// what needs more is asked for by the opt-in variables, never by flags.
func TestREADMETestCommand(t *testing.T) {
	var tests []Command
	for _, c := range ReadmeCommands(t, "go") {
		if len(c.Args) > 0 && c.Args[0] == "test" {
			tests = append(tests, c)
		}
	}
	if len(tests) != 1 || !slices.Equal(tests[0].Args, []string{"test", "-race", "./..."}) || len(tests[0].Env) != 0 {
		t.Errorf("README.md's go test commands = %+v, want one: go test -race ./...", tests)
	}
}

// TestTestVariablesDocumented: every environment variable the module's
// tests and benchmarks read (os.Getenv or os.LookupEnv of a literal or of
// a string constant of the package or of testutil, and the scenarios'
// envInt and envDuration, in test code: _test.go files and the test
// helper packages) is named in docs/development.md's "Building and
// testing", opt-in or not.
func TestTestVariablesDocumented(t *testing.T) {
	root := RepoRoot(t)
	building, ok := DocSection(t, "docs/development.md", "Building and testing")
	if !ok {
		t.Fatal(`docs/development.md has no "## Building and testing" section`)
	}
	read := testVariablesRead(t, root)
	if len(read) == 0 {
		t.Fatal("no test reads an environment variable: the scan is broken")
	}
	t.Logf("variables the tests read: %v", slices.Sorted(maps.Keys(read)))
	for name, where := range read {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(building) {
			t.Errorf("%s: the tests read %s, which docs/development.md's \"Building and testing\" does not name", where, name)
		}
	}
}

// testVariablesRead returns the variables of this project (CHUNKSTREAM_…,
// EMAIL_…) that test code reads, each with the place of one read.
func testVariablesRead(t *testing.T, root string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	read := map[string]string{}
	constsOf := map[string]map[string]string{} // by folder
	testutilConsts := packageConsts(t, fset, filepath.Join(root, "internal", "testutil"))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || d.Name() == "vendor" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Base(filepath.Dir(p))
		if !strings.HasSuffix(p, "_test.go") && !(strings.HasSuffix(p, ".go") && (strings.HasSuffix(dir, "test") || dir == "testutil")) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		consts, ok := constsOf[filepath.Dir(p)]
		if !ok {
			consts = packageConsts(t, fset, filepath.Dir(p))
			constsOf[filepath.Dir(p)] = consts
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var arg ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr: // os.Getenv(name), os.LookupEnv(name)
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "os" && (fn.Sel.Name == "Getenv" || fn.Sel.Name == "LookupEnv") {
					arg = call.Args[0]
				}
			case *ast.Ident: // the scenarios' envInt(t, name, def), envDuration(t, name, def)
				if (fn.Name == "envInt" || fn.Name == "envDuration") && len(call.Args) == 3 {
					arg = call.Args[1]
				}
			}
			var name string
			switch a := arg.(type) {
			case *ast.BasicLit:
				name, _ = strconv.Unquote(a.Value)
			case *ast.Ident:
				name = consts[a.Name]
			case *ast.SelectorExpr:
				if x, ok := a.X.(*ast.Ident); ok && x.Name == "testutil" {
					name = testutilConsts[a.Sel.Name]
				}
			}
			if strings.HasPrefix(name, "CHUNKSTREAM_") || strings.HasPrefix(name, "EMAIL_") {
				if _, seen := read[name]; !seen {
					read[name] = fset.Position(call.Pos()).String()
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return read
}

// packageConsts returns the string constants declared in the Go files of
// dir.
func packageConsts(t *testing.T, fset *token.FileSet, dir string) map[string]string {
	t.Helper()
	consts := map[string]string{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return consts
}
