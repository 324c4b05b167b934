package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

func TestEntriesWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Entries() {
		if e.Name == "" || e.Specs == nil || e.New == nil {
			t.Errorf("entry %q lacks a name, Specs or New", e.Name)
		}
		if seen[e.Name] {
			t.Errorf("entry %q registered twice", e.Name)
		}
		seen[e.Name] = true
		if (e.ParseOnly == nil) != (e.ParseOnlyName == "") {
			t.Errorf("entry %q: ParseOnly and ParseOnlyName must come together", e.Name)
		}
		for _, x := range e.Extensions {
			if !strings.HasPrefix(x, ".") || strings.ToLower(x) != x {
				t.Errorf("entry %q: extension %q is not lower case with a dot", e.Name, x)
			}
		}
		flags := map[string]bool{}
		for _, s := range e.Specs() {
			if s.Usage == "" || flags[s.Flag()] {
				t.Errorf("entry %q: option %q lacks usage or repeats flag %q", e.Name, s.Name, s.Flag())
			}
			flags[s.Flag()] = true
		}
		if _, err := e.Chunker(nil); err != nil {
			t.Errorf("entry %q with default options: %v", e.Name, err)
		}
	}
	if !seen["markdown"] {
		t.Error("markdown chunker not registered")
	}
}

func TestNewChunker(t *testing.T) {
	c, err := NewChunker("markdown", map[string]any{"max_char": "100", "min_char": 10, "chunk_overlap": 0})
	if err != nil {
		t.Fatal(err)
	}
	chunks, _, err := c.Chunk(chunking.Document{Path: "a.md", Content: []byte("Hello world")})
	if err != nil || len(chunks) != 1 || chunks[0].Content() != "Hello world" {
		t.Errorf("markdown chunker on Hello world = %v, %v", chunks, err)
	}
	tests := []struct {
		name string
		raw  map[string]any
		want error
	}{
		{"nope", nil, ErrUnknownChunker},
		{"markdown", map[string]any{"bogus": 1}, chunking.ErrUnknownOption},
		{"markdown", map[string]any{"max_char": "many"}, chunking.ErrInvalidOptions},
		{"markdown", map[string]any{"max_char": 0}, chunking.ErrInvalidOptions},
	}
	for _, tt := range tests {
		if _, err := NewChunker(tt.name, tt.raw); !errors.Is(err, tt.want) {
			t.Errorf("NewChunker(%q, %v) = %v, want %v", tt.name, tt.raw, err, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	e, err := Lookup("markdown")
	if err != nil || e.Name != "markdown" || !slices.Contains(e.Extensions, ".md") {
		t.Errorf("Lookup(markdown) = %+v, %v", e, err)
	}
	if _, err := Lookup("Markdown"); !errors.Is(err, ErrUnknownChunker) || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("Lookup(Markdown) = %v, want ErrUnknownChunker listing the known names", err)
	}
	if err := e.ParseOnly(chunking.Document{Content: []byte("# x\n\ntext")}); err != nil {
		t.Errorf("ParseOnly = %v", err)
	}
}
