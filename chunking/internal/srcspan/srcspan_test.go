package srcspan

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestAt moves the cursor forwards and backwards at random and compares
// each line with a count from the start.
func TestAt(t *testing.T) {
	src := []byte("a\nbb\n\nccc\r\nd\n")
	l := New(src)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		off := r.IntN(len(src))
		if got, want := l.At(off), 1+bytes.Count(src[:off], []byte{'\n'}); got != want {
			t.Fatalf("At(%d) = %d, want %d", off, got, want)
		}
	}
}

func TestSpan(t *testing.T) {
	src := []byte("# T\n\nbody\nmore\n")
	l := New(src)
	tests := []struct {
		start, end  int
		content     string
		first, last int
		verbatim    bool
	}{
		{0, 3, "# T", 1, 1, true},
		{5, 14, "body\nmore", 3, 4, true},
		{0, 9, "# T\n\nbody", 1, 3, true},
		{0, 9, "# T\nbody", 1, 3, false},
		{5, 10, "body\n", 3, 3, true}, // the last byte is the line break of line 3
	}
	for _, tt := range tests {
		sp := l.Span(tt.start, tt.end, tt.content)
		if sp.Start != tt.start || sp.End != tt.end || sp.FirstLine != tt.first || sp.LastLine != tt.last || sp.Verbatim != tt.verbatim {
			t.Errorf("Span(%d, %d, %q) = %+v, want lines %d-%d verbatim %v", tt.start, tt.end, tt.content, sp, tt.first, tt.last, tt.verbatim)
		}
	}
}
