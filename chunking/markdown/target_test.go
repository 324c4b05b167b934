package markdown_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

// TestTargetSizes: a long section lands near the target in near-equal
// chunks, none over the ceiling and none a small tail; a long paragraph
// is cut into chunks of its own; a section up to the ceiling stays whole.
func TestTargetSizes(t *testing.T) {
	para := strings.Repeat("word ", 17) + "end."                        // 89 characters
	long := strings.Repeat("A sentence of some length goes here. ", 40) // 1,480 characters, one paragraph
	tests := []struct {
		name       string
		src        string
		n          int
		chunks     int
		minC, maxC int
	}{
		{"paragraphs", "# T\n\n" + strings.Repeat(para+"\n\n", 11), 400, 3, 250, 400},
		{"whole up to the ceiling", "# T\n\n" + strings.Repeat(para+"\n\n", 6), 400, 1, 500, 600},
		{"long paragraph between short ones", "# T\n\n" + para + "\n\n" + long + "\n\n" + para + "\n\n" + para, 400, 5, 150, 600},
	}
	for _, tc := range tests {
		c, err := markdown.New(target(tc.n, ""))
		if err != nil {
			t.Fatal(err)
		}
		doc := chunking.Document{Path: "t.md", Content: []byte(tc.src)}
		chunks, _, err := c.Chunk(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDocument(doc, chunks, target(tc.n, "")); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var sizes []int
		for _, ch := range chunks {
			sizes = append(sizes, utf8.RuneCountInString(ch.Content()))
		}
		if len(chunks) != tc.chunks {
			t.Errorf("%s: %d chunks of %v, want %d", tc.name, len(chunks), sizes, tc.chunks)
		}
		for _, n := range sizes {
			if n < tc.minC || n > tc.maxC {
				t.Errorf("%s: chunk sizes %v, want each in [%d, %d]", tc.name, sizes, tc.minC, tc.maxC)
				break
			}
		}
	}
}

// TestTargetConfig: the target sets min_char, max_char and chunk_overlap;
// giving them too, or the target in the other unit, is an error.
func TestTargetConfig(t *testing.T) {
	c, err := markdown.New(target(800, ""))
	if err != nil || c.Config().TargetChar != 800 {
		t.Fatalf("New(target 800) = %v, %v", c, err)
	}
	if mn, mx, ov := markdown.TargetSizes(800); mn != 800 || mx != 1200 || ov != 0 || markdown.Ceiling(801) != 1202 {
		t.Errorf("TargetSizes(800) = %d, %d, %d; want 800, 1200, 0", mn, mx, ov)
	}
	for _, tc := range []struct {
		cfg markdown.Config
		msg string
	}{
		{func() markdown.Config { c := target(800, ""); c.MaxChar = 1000; return c }(), "target_char sets min_char, max_char and chunk_overlap itself: leave them out"},
		{func() markdown.Config { c := target(800, ""); c.Tokenizer = "cl100k_base"; return c }(), "use target_tokens"},
		{func() markdown.Config { c := target(80, "cl100k_base"); c.Tokenizer = ""; return c }(), "target_tokens needs tokenizer"},
		{func() markdown.Config { c := target(80, ""); c.TargetTokens = 5; return c }(), "set one"},
		{func() markdown.Config { c := markdown.DefaultConfig(); c.TargetChar = -1; return c }(), "target_char must be ≥ 0"},
	} {
		if _, err := markdown.New(tc.cfg); !errors.Is(err, chunking.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions containing %q", tc.cfg, err, tc.msg)
		}
	}
}
