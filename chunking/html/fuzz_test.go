package html_test

import (
	"errors"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/html"
)

// FuzzChunk chunks arbitrary bytes as a page with arbitrary small
// options, seeded from the golden pages: it never panics, a page fails
// only with ErrCharset, and the chunks of one that decodes hold
// checkPage's properties and come out the same twice.
func FuzzChunk(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Input, uint16(60), uint16(0), uint16(0))
		f.Add(tc.Input, uint16(2048), uint16(1024), uint16(128))
	}
	f.Add([]byte("<pre>\n<code>x</code>"), uint16(10), uint16(0), uint16(0))
	f.Add([]byte("<table><td><table><td>a<tr>b</table>c<li>d"), uint16(10), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, src []byte, maxChar, minChar, overlap uint16) {
		// At least 8: a smaller budget cuts Markdown syntax itself ("10. ",
		// "###### "), which the properties cannot tell from text.
		mc := int(maxChar%400) + 8
		cfg := html.Config{MaxChar: mc, MinChar: int(minChar % 500), ChunkOverlap: int(overlap) % mc}
		c, err := html.New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		doc := chunking.Document{Path: "f.html", Content: src}
		chunks, _, err := c.Chunk(doc)
		if err != nil {
			if !errors.Is(err, html.ErrCharset) || !errors.Is(err, chunking.ErrNotUTF8) {
				t.Fatalf("Chunk: %v, want ErrCharset", err)
			}
			return
		}
		if err := html.CheckPage(src, chunks, cfg); err != nil {
			t.Fatalf("Chunk(%q, %+v): %v", src, cfg, err)
		}
		again, _, _ := c.Chunk(doc)
		if len(again) != len(chunks) {
			t.Fatalf("second run: %d chunks, first %d", len(again), len(chunks))
		}
	})
}
