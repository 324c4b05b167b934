package producer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadLine: readLine never panics, returns lines of at most max
// bytes, and (with no line too long) gives back the input's lines.
func FuzzReadLine(f *testing.F) {
	for _, s := range []string{"", "a\nb\n", "a\r\nb", "\n\n\n", "x\xffy\n{\"v\":1}\r\n"} {
		f.Add([]byte(s), 8)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 16
		}
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var lines [][]byte
		long := false
		for range len(data) + 2 {
			line, tooLong, err := readLine(br, max)
			if len(line) > max {
				t.Fatalf("line of %d bytes, max %d", len(line), max)
			}
			long = long || tooLong
			lines = append(lines, append([]byte(nil), line...))
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if long {
			return
		}
		want := bytes.Split(data, []byte("\n"))
		if len(lines) != len(want) {
			t.Fatalf("%d lines, want %d", len(lines), len(want))
		}
		for i := range want {
			if !bytes.Equal(lines[i], bytes.TrimSuffix(want[i], []byte("\r"))) {
				t.Fatalf("line %d = %q, want %q", i, lines[i], want[i])
			}
		}
	})
}
