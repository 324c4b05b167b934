package code_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// Trees of real source no one here wrote, read in place: "go", the Go
// standard library (GOROOT/src); "python", Python's (its sysconfig stdlib
// path, less site-packages); "js", the folder CHUNKSTREAM_CODE_JS_DIR
// names (default: npm's own files, beside node); "ts", the folder
// CHUNKSTREAM_CODE_TS_DIR names (TypeScript and TSX, for example a
// checkout of a public TypeScript project).
var (
	treesOnce sync.Once
	treeDirs  map[string]string
)

// treeDir returns the folder of a named tree, or "" when it is absent.
func treeDir(name string) string {
	treesOnce.Do(func() {
		treeDirs = map[string]string{}
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			if d := filepath.Join(strings.TrimSpace(string(out)), "src"); isDir(d) {
				treeDirs["go"] = d
			}
		}
		if out, err := exec.Command("python3", "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output(); err == nil {
			if d := strings.TrimSpace(string(out)); isDir(d) {
				treeDirs["python"] = d
			}
		}
		js := os.Getenv("CHUNKSTREAM_CODE_JS_DIR")
		if js == "" {
			if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
				js = filepath.Join(strings.TrimSpace(string(out)), "npm")
			}
		}
		if isDir(js) {
			treeDirs["js"] = js
		}
		if ts := os.Getenv("CHUNKSTREAM_CODE_TS_DIR"); isDir(ts) {
			treeDirs["ts"] = ts
		}
	})
	return treeDirs[name]
}

func isDir(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir()
}

// treeFiles returns the files of a tree with one of exts, relative to
// dir, sorted, every step-th of them (1: all), without testdata and
// site-packages folders; it skips t, in one line, when the tree is absent.
func treeFiles(t testing.TB, name string, step int, exts ...string) (string, []string) {
	t.Helper()
	dir := treeDir(name)
	if dir == "" {
		t.Skipf("no %s source tree here (see corpus_test.go)", name)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "site-packages", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && slices.Contains(exts, filepath.Ext(p)) {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	var out []string
	for i, f := range files {
		if i%step == 0 {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Skipf("no %v files in %s", exts, dir)
	}
	return dir, out
}

// readDocs reads files of dir as documents.
func readDocs(t testing.TB, dir string, files []string) ([]chunking.Document, int64) {
	t.Helper()
	var docs []chunking.Document
	var total int64
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, chunking.Document{Path: f, Content: b})
		total += int64(len(b))
	}
	return docs, total
}
