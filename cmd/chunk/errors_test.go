package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/registry"
)

// TestErrorsNameTheFileOnce: a file that fails is named once in its
// message, by the path given or, in a folder, by the folder and the
// chunker's name for it; every line has one "chunk <verb>: " prefix.
func TestErrorsNameTheFileOnce(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(bad, []byte("# A\n\nab\xffc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.md")
	entries := registry.Default().Entries()
	summary := regexp.MustCompile(`(?m)^chunk split: \d+ files, .*\n`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"split", bad}, "chunk split: markdown: " + bad + ": invalid UTF-8 at byte 7\n"},
		{[]string{"split", dir}, "chunk split: " + dir + ": markdown: bad.md: invalid UTF-8 at byte 7\n"},
		{[]string{"split", missing}, "chunk split: stat " + missing + ": no such file or directory\n"},
		{[]string{"view", "-o", filepath.Join(dir, "v.html"), bad}, "chunk view: markdown: " + bad + ": invalid UTF-8 at byte 7\n"},
	} {
		code, _, errOut := runApp(t, entries, tc.args...)
		if got := summary.ReplaceAllString(errOut, ""); code != exitFailure || got != tc.want {
			t.Errorf("chunk %q = %d, stderr\n%q\nwant 1 and\n%q", tc.args, code, got, tc.want)
		}
	}
}
