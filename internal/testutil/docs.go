package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DocSection returns the body of the section "## title" of the Markdown
// file at rel (a path relative to the repository root, "/"-separated):
// the lines after the heading up to the next heading of level 1 or 2,
// its "###" subsections included. Lines inside code fences are never
// headings. ok is false when the file or the section does not exist, so
// tests can check a table wherever it lives while it moves between the
// README and docs/.
func DocSection(t testing.TB, rel, title string) (body string, ok bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(t), filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			return "", false
		}
		t.Fatal(err)
	}
	var b strings.Builder
	in, fence := false, false
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
		}
		if !fence && (strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ")) {
			if in {
				break
			}
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == title && strings.HasPrefix(line, "## ")
			ok = ok || in
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String(), ok
}
