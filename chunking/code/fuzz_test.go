package code_test

import (
	"errors"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
)

// fuzzChunk chunks src as the document name at max_char maxChar (with
// its high bit set, in target mode: target_char maxChar) and holds the
// properties of every chunking (checkChunks, within max_char or the
// target's ceiling), the same chunks on a second run, and ErrNotUTF8 for
// text that is not UTF-8.
func fuzzChunk(t *testing.T, name, lang string, src []byte, maxChar uint16) {
	mc := int(maxChar%600) + 1
	cfg := code.Config{MaxChar: mc}
	if maxChar&0x8000 != 0 {
		cfg = code.Config{MaxChar: code.DefaultConfig().MaxChar, TargetChar: mc}
		mc += (mc + 1) / 2 // the ceiling
	}
	c, err := code.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	doc := chunking.Document{Path: name, Content: src}
	chunks, _, err := c.Chunk(doc)
	if !utf8.Valid(src) {
		if !errors.Is(err, chunking.ErrNotUTF8) {
			t.Fatalf("Chunk(invalid UTF-8) = %v, want ErrNotUTF8", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Chunk(%q): %v", src, err)
	}
	if err := checkChunks(src, chunks, lang, mc); err != nil {
		t.Fatalf("Chunk(%q, max_char %d): %v", src, mc, err)
	}
	again, _, _ := c.Chunk(doc)
	if !slices.EqualFunc(chunks, again, func(a, b chunking.Chunk) bool { return a.Hash() == b.Hash() }) {
		t.Fatalf("Chunk(%q): a second run gives other chunks", src)
	}
}

// seeds adds the golden inputs of the languages given to f.
func seeds(f *testing.F, langs ...string) {
	for _, tc := range loadCases(f) {
		if slices.Contains(langs, code.LanguageOf(tc.Name)) {
			f.Add(tc.Input, uint16(40))
			f.Add(tc.Input, uint16(2048))
			f.Add(tc.Input, uint16(0x8000|60)) // target_char 61
		}
	}
}

// FuzzGo chunks arbitrary input as Go: the Go scanner's path.
func FuzzGo(f *testing.F) {
	seeds(f, "go")
	f.Add([]byte("package p\n/* open"), uint16(3))
	f.Add([]byte("func (r *T[K]) M() {\n\tx := `a\nb`\n}\n"), uint16(5))
	f.Fuzz(func(t *testing.T, src []byte, maxChar uint16) { fuzzChunk(t, "f.go", "go", src, maxChar) })
}

// FuzzPython chunks arbitrary input as Python: the Python scanner's path.
func FuzzPython(f *testing.F) {
	seeds(f, "python")
	f.Add([]byte("x = f'{a:{b}}' '''\n"), uint16(3))
	f.Add([]byte("@d\n@e(\n1)\nclass C:\n\tdef m(self): pass\n"), uint16(8))
	f.Fuzz(func(t *testing.T, src []byte, maxChar uint16) { fuzzChunk(t, "f.py", "python", src, maxChar) })
}

// FuzzJS chunks arbitrary input as JavaScript, TypeScript or TSX: the
// JavaScript scanner's path, with and without JSX.
func FuzzJS(f *testing.F) {
	seeds(f, "javascript", "typescript", "tsx")
	f.Add([]byte("class A { m() { return `${x}\n` } }"), uint16(4))
	f.Fuzz(func(t *testing.T, src []byte, maxChar uint16) {
		name := [...]string{"f.js", "f.ts", "f.tsx"}[int(maxChar)%3]
		fuzzChunk(t, name, code.LanguageOf(name), src, maxChar)
	})
}
