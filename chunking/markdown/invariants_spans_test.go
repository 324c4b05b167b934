package markdown_test

import (
	"strings"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

// CheckSpans checks the spans of the chunks of doc (spantest.Check): a
// verbatim chunk is the document's bytes at its span; another covers the
// source it came from, the lines the chunker adds to the parts of a split
// code block, table or math block (fences, the repeated header and
// delimiter rows, "$$") aside. For MDX the spans are of the document
// before cleaning, and the content is compared with the cleaned text
// they map to. Spans do not depend on cfg's unit; which blocks are split
// does.
func CheckSpans(doc chunking.Document, chunks []chunking.Chunk, cfg markdown.Config) error {
	cfg = Effective(cfg)
	size, err := SizeOf(cfg)
	if err != nil {
		return err
	}
	text, toText := sourceOf(doc)
	src := spantest.Source{Orig: doc.Content}
	if markdown.IsMDX(doc) {
		src.Text, src.ToText = text, toText
	}
	wrappers := wrapperLines(text, mdblocks.Scan(text), cfg.MaxChar, size)
	return spantest.Check(src, chunks, func(_ int, line string) bool {
		return wrappers[strings.TrimSpace(line)]
	})
}

// wrapperLines returns the lines, trimmed, that the chunker may add to
// the parts of the blocks it splits: the opening and closing fence lines
// and bare fences of code, the header and delimiter rows of tables, and
// "$$" for math. Only blocks larger than maxChar (by size) are split.
func wrapperLines(src []byte, blocks []mdblocks.Block, maxChar int, size Size) map[string]bool {
	out := map[string]bool{}
	for _, b := range blocks {
		if !b.Kind.Atomic() {
			continue
		}
		if size(strings.TrimRightFunc(string(src[b.Start:b.End]), unicode.IsSpace)) <= maxChar {
			continue
		}
		add := func(s string) {
			for _, l := range strings.Split(s, "\n") {
				out[strings.TrimSpace(l)] = true
			}
		}
		switch b.Kind {
		case mdblocks.FencedCode:
			add(string(src[b.Start:b.BodyStart]))
			add(string(src[b.BodyEnd:b.End]))
			add(strings.Repeat(string(b.FenceChar), b.FenceLen))
		case mdblocks.Table:
			add(string(src[b.Start:b.BodyStart]))
		case mdblocks.Math:
			add("$$")
		}
	}
	delete(out, "")
	return out
}
