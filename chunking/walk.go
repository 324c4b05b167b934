package chunking

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// WalkFolder lists the files under dir that a folder chunker reads, by the
// rules every chunker and the producer share: recursively; names starting
// with "." skipped (dir itself is read); symbolic links to folders not
// followed, to regular files listed; only extensions in exts, ignoring
// case and the dot ("md" matches "x.Md"; empty exts lists every file);
// paths relative to dir, "/" separators, in byte order.
//
// An entry that cannot be read is a Warning (File = its relative path)
// and the walk goes on. A dir that cannot be read or is not a folder is
// an error, as is a cancelled ctx.
func WalkFolder(ctx context.Context, dir string, exts []string) ([]string, []Warning, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("chunking: walk: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("chunking: walk %s: not a folder", dir)
	}
	files, warnings, err := WalkFS(ctx, os.DirFS(dir), ".", exts)
	if err != nil {
		return nil, nil, fmt.Errorf("chunking: walk %s: %w", dir, errors.Unwrap(err))
	}
	return files, warnings, nil
}

// WalkFS is WalkFolder in the folder dir of fsys (a slash-separated path,
// "." for its root): the same rules, paths relative to dir.
func WalkFS(ctx context.Context, fsys fs.FS, dir string, exts []string) ([]string, []Warning, error) {
	want := make(map[string]bool, len(exts))
	for _, e := range exts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		want[e] = true
	}
	var files []string
	var warnings []Warning
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel := "."
		if name != dir {
			rel = strings.TrimPrefix(name, dir+"/")
			if dir == "." {
				rel = name
			}
		}
		if err != nil {
			if rel == "." {
				return err
			}
			warnings = append(warnings, Warning{Kind: WarnUnreadable, File: rel, Text: "cannot read: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			if !d.IsDir() {
				return errors.New("not a folder")
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, serr := fs.Stat(fsys, name)
			if serr != nil {
				warnings = append(warnings, Warning{Kind: WarnUnreadable, File: rel, Text: "broken symbolic link: " + serr.Error()})
				return nil
			}
			if !target.Mode().IsRegular() {
				return nil // folders are not followed; devices and pipes are not files
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		if len(want) > 0 && !want[strings.ToLower(path.Ext(d.Name()))] {
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("chunking: walk %s: %w", dir, err)
	}
	slices.Sort(files)
	return files, warnings, nil
}

// Ext returns the extension of a document's path or id, lower case with
// its dot (".md"); "" without one. For a URI (an id with a scheme, as
// net/url parses it) it is the extension of the URI's path, its query and
// fragment left out whatever they hold
// ("https://docs.example/guide.MDX?v=1.2" → ".mdx"). In a plain name "?"
// and "#" are name characters, but the extension ends before one
// ("page.html#intro" → ".html", "inbox#thread1" → ""). The registry and
// every chunker read a document's extension through it, so that the
// format the registry infers is the one the chunker reads.
func Ext(p string) string {
	if strings.Contains(p, ":") { // else no scheme: a plain name
		if u, err := url.Parse(p); err == nil && u.Scheme != "" {
			p = u.Path
			if u.Opaque != "" {
				p = u.Opaque // "urn:docs:guide.md"
			}
		}
	}
	ext := path.Ext(p)
	if i := strings.IndexAny(ext, "?#"); i >= 0 {
		ext = ext[:i]
	}
	return strings.ToLower(ext)
}

// ErrBadName reports a file name that cannot name a document: one that
// is not valid UTF-8, which a document id and chunk metadata "file"
// must be.
var ErrBadName = errors.New("file name is not valid UTF-8")

// CheckName returns an error wrapping ErrBadName when name, a file's
// path as it would name a document, is not valid UTF-8; the error quotes
// it with Go escapes ("bad\xffname.md"), so it prints safely. Every path
// that reads a file as a document checks its name with it before reading
// (chunk split, the chunkers' ChunkFile and ChunkFolder, the producer),
// so that file alone fails and the others are still chunked.
func CheckName(name string) error {
	if utf8.ValidString(name) {
		return nil
	}
	return fmt.Errorf("%q: %w", name, ErrBadName)
}
