package code

import (
	"context"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// TestSplitWorkLinear: the work (counted, not timed) of chunking deeply
// nested blocks grows with the input's size, not with size times depth:
// four times the input is at most five times the work. (Python's
// nesting needs a column per level, so its size grows as the square of
// its depth already.)
func TestSplitWorkLinear(t *testing.T) {
	c, err := New(Config{MaxChar: 200})
	if err != nil {
		t.Fatal(err)
	}
	work := func(path, src string) int {
		pl := poll.New(context.Background())
		if _, err := c.chunkPolled(context.Background(), pl, chunking.Document{Path: path, Content: []byte(src)}, func(chunking.Chunk) bool { return true }); err != nil {
			t.Fatal(err)
		}
		return pl.Work()
	}
	for _, tc := range []struct {
		path string
		gen  func(n int) string
	}{
		{"a.js", func(n int) string { return strings.Repeat("function f() {\n", n) + strings.Repeat("}\n", n) }},
		{"a.ts", func(n int) string { return strings.Repeat("if (x) {\n  g()\n", n) + strings.Repeat("}\n", n) }},
		{"a.go", func(n int) string {
			return "package p\nfunc f() {\n" + strings.Repeat("{\n", n) + strings.Repeat("}\n", n) + "}\n"
		}},
	} {
		small, large := tc.gen(2000), tc.gen(8000)
		ws, wl := work(tc.path, small), work(tc.path, large)
		if r := float64(wl) / float64(ws); r > 5 {
			t.Errorf("%s: %d bytes: work %d; %d bytes: work %d: 4 times the input, %.1f times the work", tc.path, len(small), ws, len(large), wl, r)
		}
	}
}
