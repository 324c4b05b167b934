package testutil

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
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

func TestSubsectionAndTableFlags(t *testing.T) {
	sec := "intro\n### `chunk split`\n| flag | meaning |\n| --- | --- |\n| `-o FILE` | out |\n| `-a`, `-b` | two |\n" +
		"```\n### not a heading\n```\n| `-c` | in the fence's section |\n### Chunker flags\n| chunker | flag |\n| x | `-max-char N` |\n| x | `-strip-quotes=true\\|false` |\n| x | `-e` \\| `-f` |\n"
	split, ok := Subsection(sec, "`chunk split`")
	if !ok {
		t.Fatal("Subsection(`chunk split`) not found")
	}
	if got := slices.Sorted(maps.Keys(TableFlags(split, 0))); !slices.Equal(got, []string{"a", "b", "c", "o"}) {
		t.Errorf("TableFlags(split, 0) = %v, want [a b c o]", got)
	}
	chunkers, _ := Subsection(sec, "Chunker flags")
	if got := slices.Sorted(maps.Keys(TableFlags(chunkers, 1))); !slices.Equal(got, []string{"e", "f", "max-char", "strip-quotes"}) {
		t.Errorf("TableFlags(chunkers, 1) = %v, want [e f max-char strip-quotes]", got)
	}
	if got := TableFlags(chunkers, 0); len(got) != 0 {
		t.Errorf("TableFlags(chunkers, 0) = %v, want none", got)
	}
	if _, ok := Subsection(sec, "missing"); ok {
		t.Error("Subsection(missing) found")
	}
}
