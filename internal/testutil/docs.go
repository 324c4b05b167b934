package testutil

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// DocSection returns the body of the section "## title" of the Markdown
// file at rel (a path relative to the repository root, "/"-separated):
// the lines after the heading up to the next heading of level 1 or 2,
// its "###" subsections included. Lines inside code fences are never
// headings. ok is false when the file or the section does not exist.
func DocSection(t testing.TB, rel, title string) (body string, ok bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(t), filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			return "", false
		}
		t.Fatal(err)
	}
	return under(string(data), 2, title)
}

// Subsection returns the part of section (a DocSection) under the heading
// "### title", up to the next "###" heading; ok is false when there is no
// such heading.
func Subsection(section, title string) (body string, ok bool) {
	return under(section, 3, title)
}

// under returns the lines of text under the heading of level level and
// title, up to the next heading of that level or a higher one.
func under(text string, level int, title string) (body string, ok bool) {
	var b strings.Builder
	in, fence := false, false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
		}
		n := len(line) - len(strings.TrimLeft(line, "#"))
		if !fence && n >= 1 && n <= level && strings.HasPrefix(line[n:], " ") {
			if in {
				break
			}
			in = n == level && strings.TrimSpace(line[n:]) == title
			ok = ok || in
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String(), ok
}

// tableFlag matches a flag in a table cell: `-name` or `-name ARG`.
var tableFlag = regexp.MustCompile("`-([a-z0-9-]+)[ `=]")

// TableFlags returns the flags named in cell col (0-based) of the rows of
// the Markdown tables in text: `-name`, `-name ARG` or `-name=…`, several
// to a cell allowed. A test that checks a table with it fails when a row
// is removed, even if the flag is still mentioned in the prose around it.
func TableFlags(text string, col int) map[string]bool {
	out := map[string]bool{}
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		// An escaped \| is text inside a cell, not a border.
		cells := strings.Split(strings.ReplaceAll(line[1:], `\|`, "\x00"), "|")
		if col >= len(cells) {
			continue
		}
		for _, m := range tableFlag.FindAllStringSubmatch(cells[col], -1) {
			out[m[1]] = true
		}
	}
	return out
}
