// Package tty tells the commands whether they write to a terminal: progress
// bars and human-readable logs are for people, files and pipes get none
// and JSON.
package tty

import (
	"io"
	"os"
)

// Is reports whether w is a terminal (a character device).
func Is(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
