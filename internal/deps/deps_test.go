package deps

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

const module = "github.com/chunkstream/chunkstream"

// rule restricts what the packages under prefix may depend on, directly
// or transitively (forbidden) and directly (allowed third-party roots).
type rule struct {
	prefix    string
	forbidden []string // import path prefixes never reachable from prefix
}

var rules = []rule{
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

// stdlibOnly are the packages that depend on the standard library alone,
// so that a program can import them and nothing else of the module (a
// search client building bm25 query vectors).
var stdlibOnly = []string{module + "/bm25"}

// Only the thin mains read the environment into config or handle signals.
var mainsOnly = []string{"github.com/caarlos0/env/v11", "os/signal"}

type pkg struct {
	path    string
	imports []string
	deps    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	root := testutil.RepoRoot(t)
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			continue
		}
		pkgs = append(pkgs, pkg{parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list returned no packages")
	}
	return pkgs
}

// violations returns what p breaks of the rules.
func violations(p pkg) []string {
	var out []string
	for _, r := range rules {
		if p.path != r.prefix && !strings.HasPrefix(p.path, r.prefix+"/") {
			continue
		}
		for _, d := range append(p.deps, p.imports...) {
			for _, f := range r.forbidden {
				if d == f || strings.HasPrefix(d, f) {
					out = append(out, p.path+" depends on "+d+", which DESIGN.md forbids below "+r.prefix)
				}
			}
		}
	}
	if !strings.HasPrefix(p.path, module+"/cmd/") {
		for _, imp := range p.imports {
			for _, m := range mainsOnly {
				if imp == m {
					out = append(out, p.path+" imports "+imp+"; only cmd/* may")
				}
			}
		}
	}
	return out
}

func TestBoundaries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, p := range listPackages(t) {
		for _, v := range violations(p) {
			t.Error(v)
		}
	}
}

func TestRulesCatchViolations(t *testing.T) {
	// The checker itself must be able to fail.
	tests := []pkg{
		{path: module + "/chunking/markdown", deps: []string{"github.com/nats-io/nats.go"}},
		{path: module + "/chunking", deps: []string{"github.com/qdrant/go-client/qdrant"}},
		{path: module + "/messages", imports: []string{"github.com/nats-io/nats.go"}},
		{path: module + "/worker", imports: []string{"os/signal"}},
		{path: module + "/topology", deps: []string{module + "/worker"}},
	}
	for _, p := range tests {
		if len(violations(p)) == 0 {
			t.Errorf("violations(%s -> %v%v) = none, want one", p.path, p.imports, p.deps)
		}
	}
	if v := violations(pkg{path: module + "/cmd/worker", imports: []string{"os/signal", "github.com/caarlos0/env/v11"}}); len(v) != 0 {
		t.Errorf("violations(cmd/worker) = %v, want none", v)
	}
}

func TestStandardLibraryOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, p := range stdlibOnly {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", p)
		cmd.Dir = testutil.RepoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		if !bytes.Contains(out, []byte(p+" false\n")) {
			t.Fatalf("go list -deps %s does not list the package itself:\n%s", p, out)
		}
		for _, d := range nonStandard(p, string(out)) {
			t.Errorf("%s depends on %s; it may use the standard library only", p, d)
		}
	}
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
}
