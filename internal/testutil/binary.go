package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// NATSServer is the package of the nats-server command, for Binary: it
// builds the server at the version go.mod requires.
const NATSServer = "github.com/nats-io/nats-server/v2"

// binaryEnv names, for the packages that have one, the environment
// variable that points Binary at a prebuilt binary instead of building.
var binaryEnv = map[string]string{
	"./cmd/worker":   "CHUNKSTREAM_TEST_WORKER_BIN",
	"./cmd/producer": "CHUNKSTREAM_TEST_PRODUCER_BIN",
	NATSServer:       "CHUNKSTREAM_TEST_NATS_BIN",
}

// builds are the binaries Binary built in this test binary, by package.
var builds struct {
	mu   sync.Mutex
	main bool   // Main is running the tests
	dir  string // where binaries are built, removed by Main
	pkgs map[string]*build
}

type build struct {
	once sync.Once
	dir  string // the build's own folder: the go command names the file
	path string
	err  error
}

// Main runs the tests of a package that calls Binary, removes the
// binaries built, and returns the exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }
func Main(m *testing.M) int {
	builds.mu.Lock()
	builds.main = true
	builds.mu.Unlock()
	code := m.Run()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		if err := os.RemoveAll(builds.dir); err != nil {
			fmt.Fprintf(os.Stderr, "testutil: removing the binaries built: %v\n", err)
		}
		builds.dir = ""
	}
	return code
}

// Binary returns the path of an executable of the package pkg, a package
// of this module relative to its root ("./cmd/worker") or a command of a
// dependency by import path (NATSServer), built once per test binary
// (package documentation) unless binaryEnv's variable names a prebuilt
// one. A test builds only with CHUNKSTREAM_TEST_PROCESSES=1 (OptIn: the
// default run builds nothing) and is skipped otherwise, as it is when no
// go command is found; a benchmark always builds. It fails the test when
// the build fails or the package's TestMain does not run its tests with
// Main.
func Binary(tb testing.TB, pkg string) string {
	tb.Helper()
	if env, ok := binaryEnv[pkg]; ok {
		if bin := os.Getenv(env); bin != "" {
			return bin
		}
	}
	if _, bench := tb.(*testing.B); !bench { // a benchmark runs only when -bench asks for it
		OptIn(tb, Processes)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("testutil: building %s needs the go command: %v", pkg, err)
	}
	root := RepoRoot(tb)
	builds.mu.Lock()
	if !builds.main {
		builds.mu.Unlock()
		tb.Fatal("testutil: Binary needs the package's TestMain to run its tests with testutil.Main, which removes the binaries")
	}
	if builds.dir == "" {
		if builds.dir, err = os.MkdirTemp("", "chunkstream-test-bin-"); err != nil {
			builds.mu.Unlock()
			tb.Fatalf("testutil: folder for test binaries: %v", err)
		}
		builds.pkgs = map[string]*build{}
	}
	b := builds.pkgs[pkg]
	if b == nil {
		b = &build{dir: filepath.Join(builds.dir, fmt.Sprint(len(builds.pkgs)))}
		builds.pkgs[pkg] = b
	}
	builds.mu.Unlock()

	// Other packages may build at the same time; each builds once.
	b.once.Do(func() { b.path, b.err = goBuild(goCmd, root, b.dir, pkg) })
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// goBuild builds pkg from the module root into its own folder dir and
// returns the executable's path (the go command names it).
func goBuild(goCmd, root, dir, pkg string) (string, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("testutil: building %s: %w", pkg, err)
	}
	cmd := exec.Command(goCmd, "build", "-o", dir+string(filepath.Separator), pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testutil: go build %s: %w\n%s", pkg, err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		return "", fmt.Errorf("testutil: go build %s left %d files in %s, want one executable (%v)", pkg, len(entries), dir, err)
	}
	return filepath.Join(dir, entries[0].Name()), nil
}
