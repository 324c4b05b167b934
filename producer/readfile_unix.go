//go:build linux || darwin

package producer

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readOSFile is readFile for a file of the operating system's file
// system (path; name in fsys, which is its os.DirFS), read with plain
// system calls: os.Open readies every descriptor for the poller (four
// fcntl calls and a refused epoll registration for a regular file),
// which was as costly as the open and the read together over a folder
// of small files. A file is read in one read when Fstat's size holds.
// What is not a regular file is read through the descriptor opened.
func readOSFile(path string, fsys fs.FS, name string, buf []byte, limit int64) ([]byte, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		// Read what is open: opening a FIFO again would wait for
		// another writer.
		f := os.NewFile(uintptr(fd), path) // named as os.DirFS names it
		defer f.Close()
		return readOpen(f, buf, limit)
	}
	defer syscall.Close(fd)
	return readAll(fdReader{fd: fd, name: name}, buf, st.Size, limit)
}

// fdReader reads a descriptor with plain system calls.
type fdReader struct {
	fd   int
	name string // as errors name the file
}

func (r fdReader) Read(p []byte) (int, error) {
	var n int
	err := retryEINTR(func() (err error) {
		n, err = syscall.Read(r.fd, p)
		return err
	})
	switch {
	case err != nil:
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: err}
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// retryEINTR calls f until it fails with something else than EINTR.
func retryEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
