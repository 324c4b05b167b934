package deps

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

const module = "github.com/chunkstream/chunkstream"

// allowed is what one package may import directly besides the standard
// library: packages of the module (relative to the module root) and
// third-party module roots (a root allows every package below it).
type allowed struct {
	module     []string
	thirdParty []string
}

// allow is the layout table of docs/design.md ("Packages"), one entry per
// package of the module. TestDesignTable keeps the two equal.
var allow = map[string]allowed{
	"bm25":                     {thirdParty: []string{"github.com/kljensen/snowball", "github.com/twmb/murmur3"}},
	"fault":                    {},
	"eval":                     {module: []string{"bm25", "chunking"}},
	"chunking":                 {module: []string{"internal/codec"}, thirdParty: []string{"go.yaml.in/yaml/v3"}},
	"chunking/internal/fileio": {module: []string{"chunking"}},
	"chunking/internal/poll":   {},
	"chunking/internal/mdblocks": {
		module:     []string{"chunking/internal/poll"},
		thirdParty: []string{"github.com/yuin/goldmark"},
	},
	"chunking/internal/sentences": {module: []string{"chunking/internal/poll"}},
	"chunking/internal/measure":   {module: []string{"chunking/internal/sentences", "internal/tokens"}},
	"chunking/internal/srcspan":   {module: []string{"chunking"}},
	"chunking/internal/golden":    {module: []string{"chunking"}},
	"chunking/internal/spantest":  {module: []string{"chunking"}},
	"chunking/markdown": {module: []string{
		"chunking", "chunking/internal/fileio", "chunking/internal/mdblocks", "chunking/internal/measure",
		"chunking/internal/poll", "chunking/internal/sentences", "chunking/internal/srcspan", "internal/codec", "internal/tokens"}},
	"chunking/twostep": {module: []string{
		"chunking", "chunking/internal/fileio", "chunking/internal/mdblocks", "chunking/internal/measure",
		"chunking/internal/poll", "chunking/internal/sentences", "chunking/internal/srcspan", "internal/codec",
		"internal/tokens"}},
	"chunking/code": {module: []string{"chunking", "chunking/internal/fileio", "chunking/internal/measure",
		"chunking/internal/poll", "chunking/internal/srcspan", "internal/codec", "internal/tokens"}},
	"chunking/email": {
		module:     []string{"chunking", "chunking/internal/fileio", "chunking/internal/poll"},
		thirdParty: []string{"github.com/emersion/go-message", "golang.org/x/net"},
	},
	"chunking/html": {
		module: []string{"chunking", "chunking/internal/fileio", "chunking/internal/poll", "chunking/internal/srcspan",
			"chunking/markdown"},
		thirdParty: []string{"golang.org/x/net", "golang.org/x/text"},
	},
	"chunking/registry": {module: []string{
		"chunking", "chunking/code", "chunking/email", "chunking/html", "chunking/internal/mdblocks", "chunking/markdown", "chunking/twostep",
		"internal/codec", "internal/tokens"}},
	"chunking/registry/registrytest": {module: []string{"chunking", "chunking/markdown", "chunking/registry"}},
	"messages": {
		module:     []string{"chunking", "fault", "internal/codec"},
		thirdParty: []string{"github.com/google/uuid", "github.com/vmihailenco/msgpack/v5"},
	},
	"topology": {module: []string{"fault"}, thirdParty: []string{"github.com/nats-io/nats.go"}},
	"worker": {
		module: []string{"chunking", "chunking/registry", "fault", "internal/codec", "internal/outage", "internal/tracing", "messages",
			"topology"},
		thirdParty: []string{"github.com/nats-io/nats.go", "github.com/nats-io/nuid", "github.com/prometheus/client_golang",
			"go.opentelemetry.io/otel/trace"},
	},
	"worker/embed": {
		module:     []string{"fault", "internal/batch", "internal/tokens", "internal/tracing"},
		thirdParty: []string{"github.com/prometheus/client_golang", "go.opentelemetry.io/otel/trace"},
	},
	"worker/qdrantsink": {
		module:     []string{"bm25", "chunking", "fault", "internal/batch", "internal/tracing", "worker", "worker/qdrantsink/internal/grpccodec"},
		thirdParty: []string{"github.com/qdrant/go-client", "go.opentelemetry.io/otel/trace", "google.golang.org/grpc", "google.golang.org/protobuf"},
	},
	"worker/subjectsink": {
		module:     []string{"fault", "internal/batch", "internal/tracing", "messages", "worker"},
		thirdParty: []string{"github.com/nats-io/nats.go", "github.com/synadia-io/orbit.go/jetstreamext"},
	},
	"worker/qdrantsink/qdranttest": {module: []string{"bm25", "worker/qdrantsink/internal/grpccodec"}, thirdParty: []string{
		"github.com/google/uuid", "github.com/qdrant/go-client", "google.golang.org/grpc", "google.golang.org/protobuf"}},
	"worker/qdrantsink/internal/grpccodec": {thirdParty: []string{"google.golang.org/grpc", "google.golang.org/protobuf"}},
	"worker/embed/embedtest":               {},
	"worker/sinktest": {
		module:     []string{"chunking", "fault", "messages", "worker"},
		thirdParty: []string{"github.com/google/uuid"},
	},
	"worker/clustertest": {},
	"producer": {
		module: []string{"chunking", "chunking/email", "chunking/registry", "fault", "internal/codec", "internal/outage",
			"internal/tracing", "messages", "topology"},
		thirdParty: []string{"github.com/nats-io/nats.go", "github.com/nats-io/nuid", "github.com/synadia-io/orbit.go/jetstreamext",
			"go.opentelemetry.io/otel/attribute",
			"go.opentelemetry.io/otel/trace"},
	},
	"cmd/internal/chunkflags": {module: []string{"chunking/registry", "cmd/internal/envflag"}},
	"cmd/internal/envflag":    {module: []string{"fault"}},
	"cmd/internal/natsconn": {
		module:     []string{"cmd/internal/envflag"},
		thirdParty: []string{"github.com/nats-io/nats.go"},
	},
	"cmd/internal/otelenv": {thirdParty: []string{
		"go.opentelemetry.io/otel/attribute", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
		"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/trace"}},
	"internal/tracing": {thirdParty: []string{
		"go.opentelemetry.io/otel/attribute", "go.opentelemetry.io/otel/codes", "go.opentelemetry.io/otel/propagation",
		"go.opentelemetry.io/otel/trace"}},
	"internal/tracing/tracingtest": {
		module:     []string{"internal/testutil"},
		thirdParty: []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/trace"},
	},
	"internal/codec":             {},
	"internal/outage":            {module: []string{"fault"}},
	"internal/batch":             {},
	"internal/jstest":            {thirdParty: []string{"github.com/nats-io/nats-server/v2", "github.com/nats-io/nats.go", "github.com/nats-io/nats.go/jetstream"}},
	"internal/testutil":          {},
	"internal/tokens":            {thirdParty: []string{"github.com/tiktoken-go/tokenizer"}},
	"internal/tokens/tokenstest": {module: []string{"internal/testutil"}},
	"internal/deps":              {},
	"cmd/chunk": {
		module: []string{"chunking", "chunking/registry", "cmd/internal/chunkflags", "cmd/internal/envflag", "eval", "internal/tokens",
			"worker/embed"},
		thirdParty: []string{"github.com/caarlos0/env/v11"},
	},
	"cmd/internal/local": {
		module:     []string{"chunking", "chunking/registry", "producer", "worker"},
		thirdParty: []string{"github.com/nats-io/nats-server/v2", "github.com/nats-io/nats.go", "go.opentelemetry.io/otel/trace"},
	},
	"cmd/internal/tty": {},
	"bench/retrieval":  {module: []string{"chunking", "chunking/registry", "eval", "internal/tokens"}},
	"examples/consumer": {
		module:     []string{"messages"},
		thirdParty: []string{"github.com/nats-io/nats.go"},
	},
	"cmd/worker": {
		module: []string{
			"chunking", "chunking/registry", "cmd/internal/chunkflags", "cmd/internal/envflag", "cmd/internal/local",
			"cmd/internal/natsconn", "cmd/internal/otelenv", "cmd/internal/tty", "messages", "worker", "worker/embed",
			"worker/qdrantsink", "worker/subjectsink"},
		thirdParty: []string{
			"github.com/caarlos0/env/v11", "github.com/nats-io/nats.go",
			"github.com/prometheus/client_golang", "github.com/schollz/progressbar/v3", "go.opentelemetry.io/otel/trace"},
	},
	"cmd/producer": {
		module: []string{
			"chunking/registry", "fault", "cmd/internal/chunkflags", "cmd/internal/envflag", "cmd/internal/natsconn",
			"cmd/internal/otelenv", "cmd/internal/tty", "messages", "producer", "topology", "worker/embed", "worker/qdrantsink"},
		thirdParty: []string{"github.com/caarlos0/env/v11", "github.com/nats-io/nats.go", "github.com/schollz/progressbar/v3"},
	},
}

// libraryTests are the packages whose tests stay within the library: the
// tests of bm25 and of everything under chunking may import, besides what
// the package may, other packages under chunking and libraryTestImports.
// Tests elsewhere may import any package of the module (the pipeline is
// tested end to end) and any third-party module.
var libraryTests = []string{"bm25", "chunking"}

// libraryTestImports are the test-only imports libraryTests may use: the
// repository helper, the reference tokenizer harness (the token tests'
// oracle), goldmark (the block scanner's tests read its AST) and the Punkt
// port, the sentence tests' oracle and never a dependency.
var libraryTestImports = allowed{
	module:     []string{"internal/testutil", "internal/tokens/tokenstest"},
	thirdParty: []string{"github.com/yuin/goldmark", "github.com/neurosnap/sentences"},
}

// rule restricts what the packages under prefix may depend on, directly
// or transitively.
type rule struct {
	prefix    string
	forbidden []string // import path prefixes never reachable from prefix
}

var rules = []rule{
	{
		// The libraries trace through the OpenTelemetry API alone: the SDK
		// and its exporters are the commands' choice (cmd/internal/otelenv).
		prefix:    module + "/worker",
		forbidden: []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	},
	{
		prefix:    module + "/producer",
		forbidden: []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
	},
	{
		// chunking is a library people use on its own: no NATS, Qdrant,
		// msgpack, gRPC, Prometheus, env config or signals anywhere below it.
		// The Punkt port is the sentence tests' oracle, never a dependency.
		prefix: module + "/chunking",
		forbidden: []string{
			"github.com/nats-io/", "github.com/qdrant/", "github.com/vmihailenco/msgpack",
			"google.golang.org/grpc", "github.com/prometheus/", "github.com/caarlos0/env",
			"os/signal", module + "/worker", module + "/messages", module + "/producer", module + "/cmd",
			"github.com/neurosnap/sentences",
		},
	},
	{
		// Wire types are plain data: no transport, no sinks.
		prefix: module + "/messages",
		forbidden: []string{
			"github.com/nats-io/", "github.com/qdrant/", "google.golang.org/grpc",
			"github.com/prometheus/", "github.com/caarlos0/env", "os/signal", module + "/worker",
		},
	},
	{
		// The topology is shared by the worker and the producer: the NATS
		// client and nothing of either side.
		prefix: module + "/topology",
		forbidden: []string{
			"github.com/qdrant/", "google.golang.org/grpc", "github.com/prometheus/", "github.com/caarlos0/env",
			"os/signal", module + "/worker", module + "/producer", module + "/chunking", module + "/messages",
		},
	},
}

// narrowDeps are the packages that depend, even indirectly, on the
// standard library and the listed module roots alone, so that a program
// can import them and nothing else of the module (a search client
// building bm25 query vectors).
var narrowDeps = map[string][]string{
	module + "/bm25": {"github.com/kljensen/snowball", "github.com/twmb/murmur3"},
}

// Only the thin mains read the environment into config or handle signals.
var mainsOnly = []string{"github.com/caarlos0/env/v11", "os/signal"}

// pkg is one package as go list describes it.
type pkg struct {
	path        string
	imports     []string // of the package's own files
	deps        []string // transitive, of the package's own files
	testImports []string // of its _test.go files, both test packages
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	root := testutil.RepoRoot(t)
	cmd := exec.Command("go", "list", "-e", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 4)
		if len(parts) != 4 {
			continue
		}
		pkgs = append(pkgs, pkg{parts[0], strings.Fields(parts[1]), strings.Fields(parts[2]), strings.Fields(parts[3])})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list returned no packages")
	}
	return pkgs
}

// isStandard reports whether path is a standard library package: its
// first element has no dot (the go command's rule).
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// rel returns path relative to the module root, and whether it is in the
// module.
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// under reports whether path is root or below it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// permits reports whether a allows importing imp (a non-standard path).
func (a allowed) permits(imp string) bool {
	if r, ok := rel(imp); ok {
		return slices.Contains(a.module, r)
	}
	return slices.ContainsFunc(a.thirdParty, func(root string) bool { return under(imp, root) })
}

// violations returns what p breaks of the allow-list and the rules.
func violations(p pkg) []string {
	var out []string
	name, inModule := rel(p.path)
	a, listed := allow[name]
	switch {
	case !inModule:
		return []string{p.path + " is not a package of the module"}
	case !listed:
		out = append(out, p.path+" is not in the layout table: add its row to docs/design.md and internal/deps")
	default:
		for _, imp := range p.imports {
			if !isStandard(imp) && !a.permits(imp) {
				out = append(out, p.path+" imports "+imp+", which the layout table (docs/design.md) does not allow")
			}
		}
		library := slices.ContainsFunc(libraryTests, func(root string) bool { return under(name, root) })
		for _, imp := range p.testImports {
			r, own := rel(imp)
			switch {
			case isStandard(imp) || imp == p.path || a.permits(imp):
			case !library:
			case library && own && under(r, "chunking"):
			case library && libraryTestImports.permits(imp):
			default:
				out = append(out, p.path+"'s tests import "+imp+"; tests of the library packages stay within the library")
			}
		}
	}
	for _, r := range rules {
		if !under(p.path, r.prefix) {
			continue
		}
		for _, d := range append(p.deps, p.imports...) {
			for _, f := range r.forbidden {
				if d == f || strings.HasPrefix(d, f) {
					out = append(out, p.path+" depends on "+d+", which is forbidden below "+r.prefix+" (docs/design.md)")
				}
			}
		}
	}
	if !strings.HasPrefix(p.path, module+"/cmd/") {
		for _, imp := range p.imports {
			if slices.Contains(mainsOnly, imp) {
				out = append(out, p.path+" imports "+imp+"; only cmd/* may")
			}
		}
	}
	return out
}

func TestBoundaries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		name, _ := rel(p.path)
		seen[name] = true
		for _, v := range violations(p) {
			t.Error(v)
		}
	}
	for name := range allow {
		if !seen[name] {
			t.Errorf("the layout table lists %s, which is no package of the module: remove its row from docs/design.md and internal/deps", name)
		}
	}
}

func TestRulesCatchViolations(t *testing.T) {
	// The checker itself must be able to fail.
	bad := []pkg{
		// forbidden transitively
		{path: module + "/chunking/markdown", deps: []string{"github.com/nats-io/nats.go"}},
		{path: module + "/chunking", deps: []string{"github.com/qdrant/go-client/qdrant"}},
		{path: module + "/topology", deps: []string{module + "/worker"}},
		// not in the allow-list
		{path: module + "/messages", imports: []string{"github.com/nats-io/nats.go"}},
		{path: module + "/chunking/markdown", imports: []string{module + "/messages"}},
		{path: module + "/chunking/markdown", imports: []string{module + "/chunking/twostep"}},
		{path: module + "/worker", imports: []string{module + "/producer"}},
		{path: module + "/bm25", imports: []string{"github.com/google/uuid"}},
		{path: module + "/producer", imports: []string{"github.com/nats-io/nats-server/v2/server"}},
		{path: module + "/newpkg"},
		// signals outside cmd
		{path: module + "/worker", imports: []string{"os/signal"}},
		// library tests reaching into the pipeline
		{path: module + "/chunking/markdown", testImports: []string{module + "/worker"}},
		{path: module + "/bm25", testImports: []string{"github.com/nats-io/nats.go"}},
	}
	for _, p := range bad {
		if len(violations(p)) == 0 {
			t.Errorf("violations(%s -> %v %v %v) = none, want one", p.path, p.imports, p.deps, p.testImports)
		}
	}
	good := []pkg{
		{path: module + "/cmd/worker", imports: []string{"os/signal", "github.com/caarlos0/env/v11", module + "/worker"}},
		{path: module + "/worker", imports: []string{"github.com/nats-io/nats.go/jetstream", "net/http", module + "/messages"}},
		{path: module + "/chunking/email", imports: []string{"github.com/emersion/go-message/mail", "golang.org/x/net/html"}},
		{path: module + "/chunking/twostep", testImports: []string{
			module + "/chunking/registry", module + "/internal/testutil", "github.com/neurosnap/sentences/english"}},
		{path: module + "/worker", testImports: []string{module + "/producer", "github.com/nats-io/nats-server/v2/server"}},
	}
	for _, p := range good {
		if v := violations(p); len(v) != 0 {
			t.Errorf("violations(%s) = %v, want none", p.path, v)
		}
	}
}

// designTable reads the layout table of docs/design.md: package → its
// allowed imports, as the table writes them.
func designTable(doc string) (map[string]allowed, error) {
	_, sec, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		return nil, fmt.Errorf("no \"## Packages\" section")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)` \\|[^|]*\\|([^|]*)\\|([^|]*)\\|\\s*$")
	names := regexp.MustCompile("`([^`]+)`")
	list := func(cell string) []string {
		var out []string
		for _, m := range names.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	table := map[string]allowed{}
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		if _, dup := table[m[1]]; dup {
			return nil, fmt.Errorf("package %s has two rows", m[1])
		}
		table[m[1]] = allowed{module: list(m[2]), thirdParty: list(m[3])}
	}
	if len(table) == 0 {
		return nil, fmt.Errorf("the \"## Packages\" section has no table rows")
	}
	return table, nil
}

// tableDiff lists the differences between the layout table of the docs
// and the allow-list.
func tableDiff(doc map[string]allowed, list map[string]allowed) []string {
	var out []string
	set := func(s []string) string { s = slices.Clone(s); slices.Sort(s); return strings.Join(s, ", ") }
	for name, a := range list {
		d, ok := doc[name]
		switch {
		case !ok:
			out = append(out, "docs/design.md has no row for "+name)
		case set(d.module) != set(a.module):
			out = append(out, fmt.Sprintf("%s: docs/design.md allows module packages [%s], internal/deps [%s]", name, set(d.module), set(a.module)))
		case set(d.thirdParty) != set(a.thirdParty):
			out = append(out, fmt.Sprintf("%s: docs/design.md allows outside modules [%s], internal/deps [%s]", name, set(d.thirdParty), set(a.thirdParty)))
		}
	}
	for name := range doc {
		if _, ok := list[name]; !ok {
			out = append(out, "docs/design.md has a row for "+name+", which internal/deps lacks")
		}
	}
	slices.Sort(out)
	return out
}

// TestDesignTable keeps the layout table of docs/design.md and the
// allow-list equal.
func TestDesignTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := designTable(string(data))
	if err != nil {
		t.Fatalf("docs/design.md: %v", err)
	}
	for _, d := range tableDiff(doc, allow) {
		t.Error(d)
	}
}

func TestDesignTableCatchesDrift(t *testing.T) {
	// The comparison itself must be able to fail.
	doc := "x\n## Packages\n\n| package | holds | may import from the module | may import from outside |\n| --- | --- | --- | --- |\n" +
		"| `worker` | the worker | `chunking`, `messages` | `github.com/nats-io/nats.go` |\n" +
		"| `extra` | nothing | — | — |\n\n## Next\n| `ignored` | x | — | — |\n"
	table, err := designTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 {
		t.Fatalf("designTable = %v, want the rows worker and extra", table)
	}
	list := map[string]allowed{
		"worker":   {module: []string{"messages", "chunking", "topology"}, thirdParty: []string{"github.com/nats-io/nats.go"}},
		"missing":  {},
		"ignored":  {},
		"chunking": {thirdParty: []string{"go.yaml.in/yaml/v3"}},
	}
	got := tableDiff(table, list)
	for _, want := range []string{"worker: docs/design.md allows module packages", "no row for missing", "no row for chunking", "a row for extra"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("tableDiff = %q, want a line with %q", got, want)
		}
	}
	same := map[string]allowed{
		"worker": {module: []string{"messages", "chunking"}, thirdParty: []string{"github.com/nats-io/nats.go"}},
		"extra":  {},
	}
	if d := tableDiff(table, same); len(d) != 0 {
		t.Errorf("tableDiff(equal) = %q, want none", d)
	}
}

func TestNarrowDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for p, roots := range narrowDeps {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", p)
		cmd.Dir = testutil.RepoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		if !bytes.Contains(out, []byte(p+" false\n")) {
			t.Fatalf("go list -deps %s does not list the package itself:\n%s", p, out)
		}
		for _, d := range outside(nonStandard(p, string(out)), roots) {
			t.Errorf("%s depends on %s; it may use the standard library and %v only", p, d, roots)
		}
	}
}

// outside returns the packages of deps under none of the module roots.
func outside(deps, roots []string) []string {
	var out []string
	for _, d := range deps {
		if !slices.ContainsFunc(roots, func(r string) bool { return d == r || strings.HasPrefix(d, r+"/") }) {
			out = append(out, d)
		}
	}
	return out
}

// nonStandard returns the packages of a `go list -deps -f '{{.ImportPath}}
// {{.Standard}}'` listing that are not in the standard library, self
// excepted.
func nonStandard(self, listing string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		path, std, _ := strings.Cut(line, " ")
		if std != "true" && path != self {
			out = append(out, path)
		}
	}
	return out
}

func TestNonStandardCatchesDependencies(t *testing.T) {
	// The checker itself must be able to fail.
	self := module + "/bm25"
	listing := "errors true\n" + module + "/internal/testutil false\nmath true\n" + self + " false\n"
	if got := nonStandard(self, listing); len(got) != 1 || got[0] != module+"/internal/testutil" {
		t.Errorf("nonStandard(%q) = %v, want the internal package", listing, got)
	}
	if got := nonStandard(self, "errors true\n"+self+" false\n"); len(got) != 0 {
		t.Errorf("nonStandard(standard only) = %v, want none", got)
	}
	roots := []string{"github.com/twmb/murmur3"}
	deps := []string{"github.com/twmb/murmur3", "github.com/twmb/murmur3x", module + "/internal/testutil"}
	if got := outside(deps, roots); !slices.Equal(got, deps[1:]) {
		t.Errorf("outside(%v, %v) = %v, want %v", deps, roots, got, deps[1:])
	}
}
