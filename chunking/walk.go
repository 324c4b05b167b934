package chunking

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WalkFolder lists the files under dir that a folder chunker reads, with
// the walk rules shared by every chunker and the producer:
//
//   - the walk is recursive;
//   - files and folders whose name starts with "." are skipped (dir
//     itself is always read);
//   - symbolic links to folders are not followed; a symbolic link to a
//     regular file is listed like the file;
//   - only files whose extension is in exts are listed, compared without
//     regard to case ("md" and ".MD" both match "x.Md"); an empty exts
//     lists every file;
//   - the paths returned are relative to dir, with "/" separators, sorted
//     by byte order.
//
// A sub-folder or entry that cannot be read is reported as a Warning (File
// = its relative path) and the walk goes on. A dir that cannot be read or
// is not a folder is an error, as is a cancelled ctx.
func WalkFolder(ctx context.Context, dir string, exts []string) ([]string, []Warning, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("chunking: walk: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("chunking: walk %s: not a folder", dir)
	}
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
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, rerr := filepath.Rel(dir, path)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
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
			target, serr := os.Stat(path)
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
		if len(want) > 0 && !want[strings.ToLower(filepath.Ext(d.Name()))] {
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
