package deploy

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// repo is the main module's root, the parent of this module.
const repo = ".."

// envVar is one configuration variable declared by an `env:"NAME"` struct
// tag in the main module's source.
type envVar struct {
	Name       string
	Default    string
	HasDefault bool
	Pos        string // file:line, for messages
}

// sourceInfo is what the deploy tests read from the main module's source.
type sourceInfo struct {
	Env   map[string]envVar          // by variable name; the OTEL_* ones cmd/internal/otelenv reads too
	Flags map[string]map[string]bool // command folder (cmd/worker) → flag names
}

var (
	sourceOnce sync.Once
	source     sourceInfo
	sourceErr  error
)

// mainSource parses the main module's non-test Go files under worker/,
// cmd/, messages/, producer/, topology/ and internal/ once.
func mainSource(t *testing.T) sourceInfo {
	t.Helper()
	sourceOnce.Do(func() { source, sourceErr = parseSource(repo) })
	if sourceErr != nil {
		t.Fatal(sourceErr)
	}
	return source
}

// structField is a field of a struct type with an env-related tag.
type structField struct {
	env, envDefault, envPrefix string
	hasDefault                 bool
	typeName                   string // for envPrefix: the nested struct type
	pos                        string
}

func parseSource(root string) (sourceInfo, error) {
	info := sourceInfo{Env: map[string]envVar{}, Flags: map[string]map[string]bool{}}
	// Struct types by package folder and name, for envPrefix resolution.
	types := map[string]map[string][]structField{}
	nested := map[string]bool{} // "dir.Type" used through envPrefix
	fset := token.NewFileSet()
	for _, top := range []string{"worker", "cmd", "messages", "producer", "topology", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			dir, _ := filepath.Rel(root, filepath.Dir(path))
			dir = filepath.ToSlash(dir)
			if types[dir] == nil {
				types[dir] = map[string][]structField{}
			}
			collectStructs(fset, f, dir, types[dir], nested)
			if strings.HasPrefix(dir, "cmd/") {
				if info.Flags[dir] == nil {
					info.Flags[dir] = map[string]bool{}
				}
				collectFlags(f, info.Flags[dir])
			}
			if dir == "cmd/internal/otelenv" {
				collectOTEL(fset, f, info.Env)
			}
			return nil
		})
		if err != nil {
			return info, err
		}
	}
	// Expand every struct type that is not only used nested, with no prefix.
	for dir, byName := range types {
		for name := range byName {
			if nested[dir+"."+name] || nested["pkg:"+filepath.Base(dir)+"."+name] {
				continue
			}
			expandEnv(types, dir, name, "", info.Env, 0)
		}
	}
	return info, nil
}

func expandEnv(types map[string]map[string][]structField, dir, name, prefix string, out map[string]envVar, depth int) {
	if depth > 8 {
		return
	}
	for _, f := range types[dir][name] {
		switch {
		case f.env != "":
			v := envVar{Name: prefix + f.env, Default: f.envDefault, HasDefault: f.hasDefault, Pos: f.pos}
			if old, ok := out[v.Name]; !ok || (!old.HasDefault && v.HasDefault) {
				out[v.Name] = v
			}
		case f.envPrefix != "" && f.typeName != "":
			tdir, tname := dir, f.typeName
			if i := strings.LastIndex(tname, "."); i >= 0 {
				// pkg.Type: find the folder whose last element is pkg.
				pkg := tname[:i]
				tname = tname[i+1:]
				for d := range types {
					if filepath.Base(d) == pkg {
						if _, ok := types[d][tname]; ok {
							tdir = d
						}
					}
				}
			}
			expandEnv(types, tdir, tname, prefix+f.envPrefix, out, depth+1)
		}
	}
}

func collectStructs(fset *token.FileSet, f *ast.File, dir string, out map[string][]structField, nested map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		for _, fld := range st.Fields.List {
			if fld.Tag == nil {
				continue
			}
			raw, err := strconv.Unquote(fld.Tag.Value)
			if err != nil {
				continue
			}
			tag := reflect.StructTag(raw)
			sf := structField{pos: fset.Position(fld.Pos()).String()}
			if v, ok := tag.Lookup("env"); ok {
				sf.env = strings.Split(v, ",")[0]
			}
			sf.envDefault, sf.hasDefault = tag.Lookup("envDefault")
			sf.envPrefix = tag.Get("envPrefix")
			if sf.envPrefix != "" {
				sf.typeName = typeName(fld.Type)
				if sf.typeName != "" && !strings.Contains(sf.typeName, ".") {
					nested[dir+"."+sf.typeName] = true
				} else if sf.typeName != "" {
					nested["pkg:"+sf.typeName] = true
				}
			}
			if sf.env == "" && sf.envPrefix == "" {
				continue
			}
			out[ts.Name.Name] = append(out[ts.Name.Name], sf)
		}
		return true
	})
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
	}
	return ""
}

// flagFuncs are the flag package's definers whose first string argument is
// the flag name (XVar forms take it second).
var flagFunc = regexp.MustCompile(`^(Bool|String|Int|Int64|Uint|Uint64|Float64|Duration|Func|BoolFunc|TextVar|Var|BoolVar|StringVar|IntVar|Int64Var|UintVar|Uint64Var|Float64Var|DurationVar)$`)

func collectFlags(f *ast.File, out map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !flagFunc.MatchString(sel.Sel.Name) {
			return true
		}
		idx := 0
		if strings.HasSuffix(sel.Sel.Name, "Var") {
			idx = 1
		}
		if len(call.Args) <= idx {
			return true
		}
		if lit, ok := call.Args[idx].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out[s] = true
			}
		}
		return true
	})
}

// collectOTEL adds the OTEL_* variables f names in string literals (the
// ones cmd/internal/otelenv reads through the command's environment) to
// out, without a default.
func collectOTEL(fset *token.FileSet, f *ast.File, out map[string]envVar) {
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && otelName.MatchString(s) {
				out[s] = envVar{Name: s, Pos: fset.Position(lit.Pos()).String()}
			}
		}
		return true
	})
}

var otelName = regexp.MustCompile(`^OTEL_[A-Z0-9_]+$`)

// workerDefault returns the default of a worker variable, failing the test
// when the source does not declare it.
func workerDefault(t *testing.T, name string) string {
	t.Helper()
	v, ok := mainSource(t).Env[name]
	if !ok {
		t.Fatalf("no `env:%q` tag in the main module's worker/cmd source", name)
	}
	if !v.HasDefault {
		t.Fatalf("%s (%s) has no envDefault", name, v.Pos)
	}
	return v.Default
}

func workerDuration(t *testing.T, name string) time.Duration {
	t.Helper()
	s := workerDefault(t, name)
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("default of %s = %q: %v", name, s, err)
	}
	return d
}

// metricsPort is the port of the worker's default metrics address.
func metricsPort(t *testing.T) int {
	t.Helper()
	addr := workerDefault(t, "CHUNKSTREAM_METRICS_ADDR")
	i := strings.LastIndex(addr, ":")
	p, err := strconv.Atoi(addr[i+1:])
	if i < 0 || err != nil {
		t.Fatalf("default CHUNKSTREAM_METRICS_ADDR = %q: no port", addr)
	}
	return p
}

// docSection returns the body of the `## title` section of the Markdown
// file rel (relative to the repository root), or "" when the file or the
// section is absent. Lines inside code fences are never headings.
func docSection(t *testing.T, rel, title string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	var b strings.Builder
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
		}
		if !fence && (strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ")) {
			if in {
				break
			}
			in = strings.HasPrefix(line, "## ") && strings.TrimSpace(line[3:]) == title
			continue
		}
		if in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// docTable returns the section "## title" of the docs page rel (relative
// to the repository root), failing the test when it is absent.
func docTable(t *testing.T, rel, title string) string {
	t.Helper()
	sec := docSection(t, rel, title)
	if sec == "" {
		t.Fatalf("%s has no `## %s` section", rel, title)
	}
	return sec
}

// configEnvTable returns the variable names in the first column of the
// tables of docs/configuration.md: rows starting with "| `NAME`".
func configEnvTable(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^\\|\\s*`((?:NATS|CHUNKSTREAM|OTEL)_[A-Z0-9_]+)`")
	out := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	if len(out) < 40 {
		t.Fatalf("docs/configuration.md names %d variables in its tables; its format changed?", len(out))
	}
	return out
}

func TestSourceHasWorkerConfig(t *testing.T) {
	src := mainSource(t)
	// The shared names every deployment file relies on.
	for _, name := range []string{
		"NATS_URL", "CHUNKSTREAM_INGEST_STREAM", "CHUNKSTREAM_CHUNKS_STREAM", "CHUNKSTREAM_DLQ_STREAM",
		"CHUNKSTREAM_CONSUMER", "CHUNKSTREAM_REPLICAS", "CHUNKSTREAM_METRICS_ADDR",
		"CHUNKSTREAM_DRAIN_TIMEOUT", "CHUNKSTREAM_ACK_WAIT", "CHUNKSTREAM_SINK",
	} {
		if _, ok := src.Env[name]; !ok {
			t.Errorf("worker config has no variable %s", name)
		}
	}
	if !src.Flags["cmd/worker"]["healthcheck"] {
		t.Errorf("cmd/worker defines no -healthcheck flag (used by the Dockerfile HEALTHCHECK)")
	}
}

// TestParseSource runs the parser on a fixture with nested prefixes and
// flags, so the checks above stand on a parser known to work.
func TestParseSource(t *testing.T) {
	info, err := parseSource(filepath.Join("testdata", "src"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]envVar{
		"NATS_URL":                  {Default: "nats://127.0.0.1:4222", HasDefault: true},
		"CHUNKSTREAM_DRAIN_TIMEOUT": {Default: "25s", HasDefault: true},
		"CHUNKSTREAM_NO_DEFAULT":    {},
		"CHUNKSTREAM_QDRANT_ADDR":   {Default: "localhost:6334", HasDefault: true},
		"CHUNKSTREAM_CONSUMER":      {Default: "chunkers", HasDefault: true},
		"OTEL_SERVICE_NAME":         {},
	}
	for name, w := range want {
		got, ok := info.Env[name]
		if !ok || got.Default != w.Default || got.HasDefault != w.HasDefault {
			t.Errorf("parseSource: %s = %+v (found %v), want default %q (has %v)", name, got, ok, w.Default, w.HasDefault)
		}
	}
	for _, bad := range []string{"ADDR", "CONSUMER", "ignored"} {
		if _, ok := info.Env[bad]; ok {
			t.Errorf("parseSource: %s listed without its prefix", bad)
		}
	}
	if len(info.Env) != len(want) {
		t.Errorf("parseSource found %v, want exactly %v", keys(info.Env), keys(want))
	}
	for _, f := range []string{"healthcheck", "local", "timeout"} {
		if !info.Flags["cmd/worker"][f] {
			t.Errorf("parseSource: flag -%s of cmd/worker not found (got %v)", f, keys(info.Flags["cmd/worker"]))
		}
	}
}
