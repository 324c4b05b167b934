package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/chunkstream/chunkstream/chunking/registry"
)

// TestViewCodeBySymbol: code chunks are coloured by their leading symbol
// (class s0 to s7): the chunks of one split declaration share a colour,
// neighbours led by different symbols do not, and each chunk's hover
// text names its language and symbol paths.
func TestViewCodeBySymbol(t *testing.T) {
	stored := filepath.Join(t.TempDir(), "render.jsonl")
	if code, _, errOut := runApp(t, registry.Default().Entries(), "split", "-chunker", "code", "-max-char", "120", "-o", stored, "testdata/view/render.go"); code != exitOK {
		t.Fatalf("chunk split: %s", errOut)
	}
	for name, args := range map[string][]string{
		"file":       {"-chunker", "code", "-max-char", "120", "testdata/view/render.go"},
		"collection": {"-file", "testdata/view/render.go", stored},
	} {
		t.Run(name, func(t *testing.T) { checkCodeView(t, renderView(t, filepath.Join(t.TempDir(), "view.html"), args...)) })
	}
}

func checkCodeView(t *testing.T, page string) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkInert(t, root)
	marks := findAll(root, func(n *html.Node) bool { return n.Data == "mark" && hasClass(n, "chunk") })
	if len(marks) < 4 {
		t.Fatalf("%d chunk marks, want the file split into several chunks", len(marks))
	}
	colour := map[int]string{} // chunk -> its s class
	title := map[int]string{}
	for _, m := range marks {
		k, _ := strconv.Atoi(attr(m, "data-chunk"))
		var s string
		for _, c := range strings.Fields(attr(m, "class")) {
			if len(c) == 2 && c[0] == 's' {
				s = c
			}
		}
		if s == "" {
			t.Errorf("chunk %d: class %q has no symbol colour", k, attr(m, "class"))
		}
		colour[k], title[k] = s, attr(m, "title")
	}
	lead := func(k int) string {
		_, after, _ := strings.Cut(title[k], "go: ")
		first, _, _ := strings.Cut(after, "\n")
		first, _, _ = strings.Cut(first, ",")
		return first
	}
	render := 0
	for k := range len(colour) {
		if !strings.Contains(title[k], "go: ") {
			t.Errorf("chunk %d: hover text %q names no symbol", k, title[k])
		}
		if lead(k) == "big.Render" {
			render++
			if colour[k] != colour[1] {
				t.Errorf("chunk %d of big.Render has colour %s, chunk 1 %s", k, colour[k], colour[1])
			}
		}
		if k > 0 && lead(k) != lead(k-1) && colour[k] == colour[k-1] {
			t.Errorf("chunks %d (%s) and %d (%s) share colour %s", k-1, lead(k-1), k, lead(k), colour[k])
		}
	}
	if render < 2 {
		t.Errorf("%d chunks led by big.Render, want it split into several", render)
	}
}
