//go:build linux || darwin

package producer

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadOSFileFIFO: a FIFO is read through the descriptor opened, not
// opened again (which would wait for a second writer): a writer that
// writes and closes is read whole.
func TestReadOSFileFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.md")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	const text = "# Hi\n\nhello\n"
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.Write([]byte(text))
		_ = f.Close()
	}()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := readOSFile(p, os.DirFS(dir), "p.md", nil, 1<<20)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || string(r.b) != text {
			t.Errorf("readOSFile(FIFO) = %q, %v; want %q", r.b, r.err, text)
		}
	case <-time.After(time.Minute):
		// Free the reader stuck in a second open before failing.
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
		t.Fatal("readOSFile(FIFO) waited for a second writer")
	}
}
