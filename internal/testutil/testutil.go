package testutil

import (
	"os"
	"path/filepath"
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
