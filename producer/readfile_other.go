//go:build !(linux || darwin)

package producer

import "io/fs"

// readOSFile is readFile for a file of the operating system's file
// system; elsewhere than on Linux and macOS it goes through fsys.
func readOSFile(_ string, fsys fs.FS, name string, buf []byte, limit int64) ([]byte, error) {
	return readFile(fsys, name, buf, limit)
}
