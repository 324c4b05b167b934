package chunking

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWalkFolder(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		"a.md", "a/b.md", "a.md.txt", "B.MD", "x.mdx", "notes.txt",
		".hidden.md", ".git/config.md", "sub/.secret/s.md", "sub/deep/z.md", "sub/y.Md",
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "o.md"), []byte("o"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlinked folder is not followed; a symlinked file is listed.
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}

	got, warnings, err := WalkFolder(context.Background(), dir, []string{".md", "mdx"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"B.MD", "a.md", "a/b.md", "link.md", "sub/deep/z.md", "sub/y.Md", "x.mdx"}
	if !slices.Equal(got, want) {
		t.Errorf("WalkFolder(.md, mdx) = %q, want %q", got, want)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %v", warnings)
	}
	all, _, err := WalkFolder(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want)+2 { // + a.md.txt, notes.txt
		t.Errorf("WalkFolder(all) = %q", all)
	}

	if _, _, err := WalkFolder(context.Background(), filepath.Join(dir, "none"), nil); err == nil {
		t.Error("WalkFolder(missing) = nil error")
	}
	if _, _, err := WalkFolder(context.Background(), filepath.Join(dir, "a.md"), nil); err == nil {
		t.Error("WalkFolder(file) = nil error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := WalkFolder(ctx, dir, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("WalkFolder(cancelled) = %v, want context.Canceled", err)
	}
}

func TestWalkFolderUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "ok.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := WalkFolder(context.Background(), dir, []string{".md"})
	if err != nil || !slices.Equal(got, []string{"ok.md"}) || len(warnings) != 1 || warnings[0].File != "locked" {
		t.Errorf("WalkFolder = %q, %v, %v; want [ok.md] and one warning for locked", got, warnings, err)
	}
}

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name, err string
	}{
		{"docs/a.md", ""},
		{"caf\u00e9/r\u00e9sum\u00e9.md", ""},
		{"bad\xffname.md", `"bad\xffname.md": file name is not valid UTF-8`},
		{"d\xe9j\xe0/x.md", `"d\xe9j\xe0/x.md": file name is not valid UTF-8`},
	} {
		err := CheckName(tc.name)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err || !errors.Is(err, ErrBadName)) {
			t.Errorf("CheckName(%q) = %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestExt(t *testing.T) {
	for id, want := range map[string]string{
		"docs/a.md": ".md", "Guide.MDX": ".mdx", "README": "", "a.tar.GZ": ".gz", "dir.d/file": "",
		// A URI: the extension of its path, whatever its query and
		// fragment hold.
		"https://docs.example/guide.MDX?v=2":         ".mdx",
		"https://docs.example/guide.mdx?v=1.2":       ".mdx",
		"https://site.example/page.html?next=/home":  ".html",
		"https://site.example/page.html#section-2.1": ".html",
		"https://docs.example/guide.mdx#step-1.2":    ".mdx",
		"https://git.example/x.py?ref=v1.2":          ".py",
		"https://example.org/menu":                   "",
		"https://example.org/v1.2/":                  "",
		"s3://bucket/dir/file.TXT":                   ".txt",
		"urn:docs:guide.md":                          ".md",
		// A plain name: "?" and "#" are name characters, and the
		// extension ends before one.
		"page.html#intro": ".html", "inbox#thread1": "", "h#x.md": ".md", "q?v=1.md": ".md",
		"a/b:c.md": ".md", // not a URI: a colon in a first path element
	} {
		if got := Ext(id); got != want {
			t.Errorf("Ext(%q) = %q, want %q", id, got, want)
		}
	}
}
