package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDocSection(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "# Title\n\nintro\n\n## A\n\none\n\n```sh\n## not a heading\n# nor this\n```\n\n### A.1\n\ntwo\n\n## B\n\nthree\n"
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "p.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		rel, title, want string
		ok               bool
	}{
		{"docs/p.md", "A", "\none\n\n```sh\n## not a heading\n# nor this\n```\n\n### A.1\n\ntwo\n\n", true},
		{"docs/p.md", "B", "\nthree\n", true},
		{"docs/p.md", "A.1", "", false}, // only level-2 sections
		{"docs/p.md", "C", "", false},
		{"docs/missing.md", "A", "", false},
	}
	for _, tt := range tests {
		got, ok := DocSection(t, tt.rel, tt.title)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DocSection(%s, %q) = %q, %v, want %q, %v", tt.rel, tt.title, got, ok, tt.want, tt.ok)
		}
	}
}
