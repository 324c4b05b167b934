package markdown_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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

// TestTargetCuts: in target mode a long section is cut where ending a
// chunk costs least: between list items rather than inside one, never
// after a heading, and not between a paragraph ending with a colon and
// the block it introduces.
func TestTargetCuts(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("lorem ipsum ", n)) }
	item := "- " + words(10) + "\n  " + words(10) + ".\n" // 247 characters, two lines
	tests := []struct {
		name string
		src  string
		n    int
		// Each chunk must start with one of these (after the first).
		starts []string
		// No chunk may end with one of these.
		notEnds []string
	}{
		{
			name:   "list items",
			src:    "# T\n\n" + strings.Repeat(item, 8),
			n:      500,
			starts: []string{"- lorem"},
		},
		{
			name:    "heading",
			src:     "# T\n\n" + words(30) + ".\n\n#### Sub\n\n" + words(30) + ".\n\n" + words(30) + ".\n\n#### Next\n\n" + words(30) + ".",
			n:       400,
			starts:  []string{"lorem", "#### "},
			notEnds: []string{"Sub", "Next"},
		},
		{
			name:    "introduction",
			src:     "# T\n\n" + words(30) + ".\n\n" + words(5) + " as follows:\n\n```\n" + strings.Repeat("code line\n", 30) + "```\n\n" + words(30) + ".",
			n:       400,
			notEnds: []string{"as follows:"},
		},
	}
	for _, tc := range tests {
		cfg := target(tc.n, "")
		c, err := markdown.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		doc := chunking.Document{Path: "t.md", Content: []byte(tc.src)}
		chunks, _, err := c.Chunk(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDocument(doc, chunks, cfg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(chunks) < 2 {
			t.Fatalf("%s: %d chunk, want the section cut", tc.name, len(chunks))
		}
		for i, ch := range chunks {
			text := ch.Content()
			if i > 0 && len(tc.starts) > 0 && !slices.ContainsFunc(tc.starts, func(s string) bool { return strings.HasPrefix(text, s) }) {
				t.Errorf("%s: chunk %d starts %q, want one of %q", tc.name, i, text[:min(len(text), 20)], tc.starts)
			}
			for _, s := range tc.notEnds {
				if strings.HasSuffix(text, s) {
					t.Errorf("%s: chunk %d ends with %q", tc.name, i, s)
				}
			}
		}
	}
}

// targetAdversarial are inputs of about n units each on which target
// mode's cut choice has the most places to weigh: one paragraph of words
// without a sentence end, sentence ends every few bytes, tiny paragraphs,
// list items, short lines, H4 headings with a word each, and a paragraph
// ending with a colon before every code block.
var targetAdversarial = map[string]func(n int) []byte{
	"one paragraph":   func(n int) []byte { return bytes.Repeat([]byte("word "), n) },
	"sentence ends":   func(n int) []byte { return bytes.Repeat([]byte("a. "), 2*n) },
	"tiny paragraphs": func(n int) []byte { return bytes.Repeat([]byte("a\n\n"), 2*n) },
	"list items":      func(n int) []byte { return bytes.Repeat([]byte("- a\n"), 2*n) },
	"short lines":     func(n int) []byte { return bytes.Repeat([]byte("ab\n"), 2*n) },
	"headings":        func(n int) []byte { return bytes.Repeat([]byte("#### h\n\nx\n\n"), n/2) },
	"introductions":   func(n int) []byte { return bytes.Repeat([]byte("see:\n\n```\nx\n```\n\n"), n/4) },
}

// TestTargetLinear: target mode weighs every place a chunk may end, and
// stays linear: on each adversarial input, 8 times the input is at most
// 10 times the work (the bytes the chunker's loops look at, the cut
// choice's included) and 12 times the bytes allocated, at a small target
// and a large one (whose window holds more places).
func TestTargetLinear(t *testing.T) {
	for _, n := range []int{100, 2000} {
		c, err := markdown.New(target(n, ""))
		if err != nil {
			t.Fatal(err)
		}
		for name, gen := range targetAdversarial {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				small, large := gen(5000), gen(40000)
				for _, src := range [][]byte{small, large} {
					doc := chunking.Document{Content: src}
					chunks, _, err := c.Chunk(doc)
					if err != nil {
						t.Fatal(err)
					}
					if err := CheckDocument(doc, chunks, c.Config()); err != nil {
						t.Fatal(err)
					}
				}
				ws, wl := markdown.Work(c, small), markdown.Work(c, large)
				if ws < len(small) || wl > 10*ws {
					t.Errorf("work %d for %d bytes of input, %d for %d: super-linear", ws, len(small), wl, len(large))
				}
				a, b := allocBytes(c, small), allocBytes(c, large)
				if b > 12*a+1<<20 {
					t.Errorf("%d bytes allocated for %d bytes of input, %d for %d: super-linear", a, len(small), b, len(large))
				}
			})
		}
	}
}
