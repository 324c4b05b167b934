package testutil

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the documentation pages whose links are checked: the README
// and every page of docs/, as paths relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(RepoRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 5 {
		t.Fatalf("docs/ has %d pages; moved?", len(pages))
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files
}

// mdLink matches an inline Markdown link or image: [text](target) or
// [text](target "title"); the target is group 1.
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// inlineCode matches a code span, whose text is never a link.
var inlineCode = regexp.MustCompile("`[^`]*`")

// link is one link of a page: its target as written and its line.
type link struct {
	target string
	line   int
}

// pageLinks returns the links of a Markdown text outside code fences and
// code spans.
func pageLinks(text string) []link {
	var out []link
	fence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text (outside code fences): the heading's text lowercased,
// without characters other than letters, digits, spaces, '-' and '_',
// spaces turned into '-'; a repeated anchor gets "-1", "-2", ….
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if len(title) == 0 || title[0] != ' ' || len(line)-len(title) > 6 {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// checkLink reports what is wrong with the link target of the page at rel
// (relative to root), or "" when it resolves: a file in the repository
// and, for an #anchor into a Markdown file, one of its headings. Links
// with a scheme (https:) are not checked.
func checkLink(root, rel, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	if strings.HasPrefix(file, "/") {
		return "an absolute path; link relative to the page"
	}
	dest := rel
	if file != "" {
		dest = path.Join(path.Dir(rel), file)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dest)))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if !headingAnchors(string(data))[anchor] {
		return "no heading with the anchor #" + anchor + " in " + dest
	}
	return ""
}

// TestDocLinks: every relative link of README.md and docs/*.md points to
// a file of the repository and, with an #anchor into a Markdown page, to
// one of its headings.
func TestDocLinks(t *testing.T) {
	root := RepoRoot(t)
	total := 0
	for _, rel := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pageLinks(string(data)) {
			total++
			if why := checkLink(root, rel, l.target); why != "" {
				t.Errorf("%s:%d: link %s: %s", rel, l.line, l.target, why)
			}
		}
	}
	if total < 50 {
		t.Errorf("found %d links in the docs; the link syntax changed?", total)
	}
}

// TestDocsStayInside: every upper-case Markdown file a page names (the
// convention of project notes: README.md) is one of the repository's, so
// no page sends a reader to notes a clone does not have; and no page names
// a machine's absolute path. Lower-case names are examples (bad.md).
func TestDocsStayInside(t *testing.T) {
	root := RepoRoot(t)
	ours := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(d.Name(), ".md") {
			ours[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mdName := regexp.MustCompile(`\b[A-Z][A-Z0-9_-]*\.md\b`)
	absPath := regexp.MustCompile("(^|[\\s(`\"'])/(home|Users|root|work)/")
	for _, rel := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range mdName.FindAllString(line, -1) {
				if !ours[m] {
					t.Errorf("%s:%d: names %s, which is not in the repository", rel, i+1, m)
				}
			}
			if m := absPath.FindString(line); m != "" {
				t.Errorf("%s:%d: names an absolute path %q", rel, i+1, strings.TrimSpace(m))
			}
		}
	}
}

// TestCheckLink runs the checks above on a fixture, so that a broken link
// is known to fail them.
func TestCheckLink(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := "# Page\n\n## The `chunk` command\n\n## Waiting: `-wait`\n\n## Twice\n\n## Twice\n\n```\n## In a fence\n```\n"
	for name, text := range map[string]string{"docs/a.md": page, "README.md": "# R\n", "x.go": "package x\n"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		rel, target string
		ok          bool
	}{
		{"README.md", "docs/a.md", true},
		{"README.md", "docs/a.md#the-chunk-command", true},
		{"README.md", "docs/a.md#waiting--wait", true},
		{"README.md", "docs/a.md#twice-1", true},
		{"docs/a.md", "#page", true},
		{"docs/a.md", "../x.go", true},
		{"docs/a.md", "../README.md#r", true},
		{"README.md", "https://example.org/x", true},
		{"README.md", "docs/b.md", false},
		{"README.md", "docs/a.md#nope", false},
		{"README.md", "docs/a.md#in-a-fence", false},
		{"docs/a.md", "#twice-2", false},
		{"docs/a.md", "../../outside.md", false},
		{"README.md", "/etc/passwd", false},
	} {
		if got := checkLink(root, c.rel, c.target); (got == "") != c.ok {
			t.Errorf("checkLink(%s, %s) = %q, want ok %v", c.rel, c.target, got, c.ok)
		}
	}
	links := pageLinks("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![img](i.png \"t\")")
	if len(links) != 2 || links[0].target != "a.md" || links[1].target != "i.png" {
		t.Errorf("pageLinks = %+v, want a.md and i.png", links)
	}
}
