package chunking_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
)

func ExampleNewChunk() {
	c := chunking.NewChunk("Hello world", chunking.Metadata{{Key: "index", Value: 0}})
	fmt.Println(c.Hash())
	fmt.Println(c.Len(), c.VerifyHash())
	fmt.Println(c.String(8, chunking.Trailing))
	// Output:
	// f1cf36017b964e8158c0cb0414af8ab26af7438229af27ace253852aea5d7bea
	// 11 true
	// {
	//   "index": 0
	// }
	// Hello...
}

func ExampleCollection() {
	md := func(file string, index int) chunking.Metadata {
		return chunking.Metadata{{Key: "index", Value: index}, {Key: "file", Value: file}}
	}
	c := chunking.NewCollection([]chunking.Chunk{
		chunking.NewChunk("# A\nintro", md("docs/a.md", 0)),
		chunking.NewChunk("## B\nmore", md("docs/a.md", 1)),
		chunking.NewChunk("readme", md("README.md", 0)),
	})
	fmt.Println(c.Len(), c.Files())
	prev, next := c.Neighbours(1, 1, 1)
	fmt.Println(prev, next)
	for _, ch := range c.TopLevelChunks() {
		fmt.Println(ch.Content())
	}
	// Output:
	// 3 [docs/a.md README.md]
	// [0] []
	// readme
}

// A collection saved as JSON Lines (or YAML, by the extension) loads back
// with the same chunks; JSONL keeps the hashes and checks them on load.
func ExampleSave() {
	dir, err := os.MkdirTemp("", "chunks")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	c := chunking.NewCollection([]chunking.Chunk{
		chunking.NewChunk("# A\nintro", chunking.Metadata{{Key: "h1", Value: "A"}, {Key: "index", Value: 0}, {Key: "file", Value: "a.md"}}),
		chunking.NewChunk("more", chunking.Metadata{{Key: "index", Value: 1}, {Key: "file", Value: "a.md"}}),
	})
	for _, name := range []string{"chunks.jsonl", "chunks.yaml"} {
		path := filepath.Join(dir, name)
		if err := chunking.Save(path, c); err != nil {
			panic(err)
		}
		loaded, err := chunking.Load(path)
		if err != nil {
			panic(err)
		}
		same := loaded.Len() == c.Len()
		for i := range c.Len() {
			same = same && loaded.At(i).Hash() == c.At(i).Hash()
		}
		fmt.Println(name, loaded.Len(), same, loaded.At(0).Metadata())
	}
	// Output:
	// chunks.jsonl 2 true [{h1 A} {index 0} {file a.md}]
	// chunks.yaml 2 true [{h1 A} {index 0} {file a.md}]
}

// A chunker of your own is a function: ChunkerFunc makes it a
// chunking.Chunker, usable wherever one is (the worker's NewChunker, the
// CLIs' registry entries).
func ExampleChunkerFunc() {
	lines := chunking.ChunkerFunc(func(doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		if !utf8.Valid(doc.Content) {
			return nil, nil, fmt.Errorf("lines: %s: %w", doc.Path, chunking.ErrNotUTF8)
		}
		var chunks []chunking.Chunk
		var warns []chunking.Warning
		for i, line := range strings.Split(string(doc.Content), "\n") {
			if strings.TrimSpace(line) == "" {
				warns = append(warns, chunking.Warning{File: doc.Path, Line: i + 1, Text: "blank line skipped"})
				continue
			}
			md := chunking.Metadata{{Key: "index", Value: len(chunks)}, {Key: "file", Value: doc.Path}}
			chunks = append(chunks, chunking.NewChunk(line, md.Merge(doc.Metadata)))
		}
		return chunks, warns, nil
	})
	var c chunking.Chunker = lines
	chunks, warns, err := c.Chunk(chunking.Document{Path: "notes.txt", Content: []byte("first\n\nsecond")})
	if err != nil {
		panic(err)
	}
	for _, ch := range chunks {
		fmt.Println(ch.Content(), ch.Metadata())
	}
	fmt.Println(warns)
	_, _, err = c.Chunk(chunking.Document{Path: "bad.txt", Content: []byte{0xff}})
	fmt.Println(errors.Is(err, chunking.ErrNotUTF8), err)
	// Output:
	// first [{index 0} {file notes.txt}]
	// second [{index 1} {file notes.txt}]
	// [notes.txt:2: blank line skipped]
	// true lines: bad.txt: chunking: text is not valid UTF-8
}

func ExampleExt() {
	for _, id := range []string{"docs/a.md", "Guide.MDX", "https://docs.example/guide.mdx?v=2", "page.html#intro", "README"} {
		fmt.Printf("%q\n", chunking.Ext(id))
	}
	// Output:
	// ".md"
	// ".mdx"
	// ".mdx"
	// ".html"
	// ""
}
