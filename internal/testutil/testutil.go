package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the module's root folder (the one holding go.mod),
// found by walking up from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// SharedDir returns ../shared/<elem...> next to the repository, skipping
// the test when it is absent, so the module's tests work elsewhere.
func SharedDir(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{RepoRoot(t), "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s not present: %v", filepath.Join(elem...), err)
	}
	return p
}

// SourceTree returns a folder of a source tree no one here wrote, read
// in place: "go", the Go distribution's root (GOROOT: src/ holds the
// standard library, doc/ its specification), or "python", Python's
// standard library (python3's sysconfig "stdlib" path); elem names a
// folder inside it. It skips the test, in one line, when the tree or the
// folder is absent.
func SourceTree(t testing.TB, tree string, elem ...string) string {
	t.Helper()
	var root string
	switch tree {
	case "go":
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Skipf("no go command here: %v", err)
		}
		root = strings.TrimSpace(string(out))
	case "python":
		out, err := exec.Command("python3", "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
		if err != nil {
			t.Skipf("no python3 here: %v", err)
		}
		root = strings.TrimSpace(string(out))
	default:
		t.Fatalf("testutil: no source tree %q (want go or python)", tree)
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Skipf("%s source tree has no folder %s", tree, filepath.Join(elem...))
	}
	return p
}
