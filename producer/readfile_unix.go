//go:build linux || darwin

package producer

import (
	"errors"
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
	if st.Size > limit {
		return nil, &overLimitError{size: st.Size}
	}
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+512)
	}
	buf = buf[:0]
	for {
		if int64(len(buf)) > limit {
			return nil, &overLimitError{size: int64(len(buf))}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Read(fd, buf[len(buf):cap(buf)])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n <= 0 {
			return buf, nil
		}
		asked := cap(buf) - len(buf)
		buf = buf[:len(buf)+n]
		if n < asked && int64(len(buf)) == st.Size {
			// A short read that ends where Fstat said the file ends is
			// its end: no read for the zero that would confirm it.
			return buf, nil
		}
	}
}

// retryEINTR calls f until it fails with something else than EINTR.
func retryEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
