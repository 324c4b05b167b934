package producer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOSFile: reading a file with plain system calls gives what
// readFile gives through os.DirFS: the content, into the buffer given
// when it is large enough, the limit (by size, and for a file that
// grows while read), the error of a file not there naming it as fsys
// does, and a folder's error.
func TestReadOSFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.md": "# A\n\nSome text.\n", "empty.md": "", "big.md": strings.Repeat("x", 5000)}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	buf := make([]byte, 0, 1<<10)
	for _, name := range []string{"a.md", "empty.md", "big.md", "missing.md", "sub"} {
		want, wantErr := readFile(fsys, name, nil, 1<<20)
		got, err := readOSFile(filepath.Join(dir, name), fsys, name, buf, 1<<20)
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: %q, %v; readFile: %q, %v", name, got, err, want, wantErr)
		}
		if err != nil && wantErr != nil && err.Error() != wantErr.Error() && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: error %q, readFile's %q", name, err, wantErr)
		}
		if name == "missing.md" && (!errors.Is(err, fs.ErrNotExist) || err.Error() != wantErr.Error()) {
			t.Errorf("missing file: %v, want readFile's %v", err, wantErr)
		}
	}
	if got, _ := readOSFile(filepath.Join(dir, "a.md"), fsys, "a.md", buf, 1<<20); &got[:1][0] != &buf[:1][0] {
		t.Error("a file that fits the buffer was read into another")
	}
	var big *overLimitError
	if _, err := readOSFile(filepath.Join(dir, "big.md"), fsys, "big.md", nil, 1000); !errors.As(err, &big) || big.size != 5000 {
		t.Errorf("over the limit: %v, want an overLimitError of 5000 bytes", err)
	}
}
