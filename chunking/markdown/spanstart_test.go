package markdown_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/internal/mdblocks"
	"github.com/chunkstream/chunkstream/chunking/markdown"
)

// spanStartError returns how a chunk's span fails to start at its first
// byte of content, or nil: the span's first byte must be the source byte
// the content's first character was taken from, so a chunk whose leading
// overlap was dropped to fit starts after it. Chunks whose first line the
// chunker adds (a fence or a table header repeated for a part, in
// wrappers) are left out; so are those of a document with MDX cleaning
// (its offsets are checked by CheckSpans).
func spanStartError(src []byte, chunks []chunking.Chunk, wrappers map[string]bool) error {
	for i, c := range chunks {
		content := c.Content()
		first, _, _ := strings.Cut(content, "\n")
		if wrappers[strings.TrimSpace(first)] {
			continue
		}
		sp := c.Span()
		if !strings.HasPrefix(string(src[sp.Start:]), strings.TrimRightFunc(first, unicode.IsSpace)) {
			return fmt.Errorf("chunk %d starts %q, but its span starts at byte %d: %q", i, clip(content), sp.Start, clip(string(src[sp.Start:])))
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 50 {
		s = s[:50]
	}
	return s
}

// spanStartDoc makes a Markdown document from seed: headings, paragraphs
// of words of every length, lines without spaces, code blocks and tables
// of every size, so that chunks start at overlaps of every kind, whole
// and shrunk.
func spanStartDoc(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 35))
	word := func() string {
		n := 1 + rng.IntN(12)
		if rng.IntN(30) == 0 {
			n = 40 + rng.IntN(80)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	var sb strings.Builder
	for range 4 + rng.IntN(20) {
		switch rng.IntN(7) {
		case 0:
			fmt.Fprintf(&sb, "%s %s\n\n", strings.Repeat("#", 1+rng.IntN(4)), word())
		case 1:
			sb.WriteString("```\n")
			for range 1 + rng.IntN(12) {
				fmt.Fprintf(&sb, "%s = %s(%s)\n", word(), word(), word())
			}
			sb.WriteString("```\n\n")
		case 2:
			sb.WriteString("| a | b |\n| --- | --- |\n")
			for range 1 + rng.IntN(10) {
				fmt.Fprintf(&sb, "| %s | %s |\n", word(), word())
			}
			sb.WriteString("\n")
		case 3:
			for range 1 + rng.IntN(6) {
				fmt.Fprintf(&sb, "%s%s。", word(), strings.Repeat("字", rng.IntN(40)))
			}
			sb.WriteString("\n\n")
		default:
			for range 1 + rng.IntN(8) {
				for range 1 + rng.IntN(20) {
					sb.WriteString(word())
					sb.WriteString(" ")
				}
				sb.WriteString(". ")
				if rng.IntN(3) == 0 {
					sb.WriteString("\n")
				}
			}
			sb.WriteString("\n\n")
		}
	}
	return []byte(sb.String())
}

// spanStartRun makes text from seed out of fragments whose tokens, counted
// one piece at a time, are fewer than those of the whole: in token mode a
// chunk packed by the sum of its pieces' tokens is then over max_char and
// backs off, dropping its overlap (the path a span could keep the
// overlap's start on; a mutation that keeps it fails this test).
func spanStartRun(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	parts := []string{" ", "  ", "\n", "a", "bb", "的", "字字", "123", "!!", ".", "'s", " the", "ing", "\t", "é", "😀", "--", "==", "x1", "()"}
	var sb strings.Builder
	for range 200 + rng.IntN(400) {
		sb.WriteString(parts[rng.IntN(len(parts))])
	}
	return []byte(sb.String())
}

// TestSpanStartsAtContent: in the default mode with an overlap, in
// characters and in tokens, every chunk's span starts at the source byte
// of its first character (spanStartError), on generated documents and on
// the corpus when it is present. A chunk whose overlap is shrunk or
// dropped to fit must not keep the overlap's start.
func TestSpanStartsAtContent(t *testing.T) {
	configs := []markdown.Config{
		{MaxChar: 2048, MinChar: 1024, ChunkOverlap: 128},
		{MaxChar: 200, MinChar: 50, ChunkOverlap: 60},
		{MaxChar: 80, MinChar: 0, ChunkOverlap: 70},
		{MaxChar: 40, MinChar: 10, ChunkOverlap: 30},
		{MaxChar: 60, MinChar: 20, ChunkOverlap: 40, Tokenizer: "cl100k_base"},
		{MaxChar: 16, MinChar: 0, ChunkOverlap: 12, Tokenizer: "cl100k_base"},
	}
	check := func(t *testing.T, name string, src []byte, cfg markdown.Config) {
		t.Helper()
		c, err := markdown.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := c.Chunk(chunking.Document{Path: name, Content: src})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		size, err := SizeOf(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := spanStartError(src, chunks, wrapperLines(src, mdblocks.Scan(src), cfg.MaxChar, size)); err != nil {
			t.Errorf("%s (%+v): %v", name, cfg, err)
		}
	}
	n := 300
	if testing.Short() || raceEnabled {
		n = 60
	}
	for _, cfg := range configs {
		for seed := range uint64(n) {
			check(t, fmt.Sprintf("generated-%d.md", seed), spanStartDoc(seed), cfg)
		}
	}
	for seed := range uint64(n) {
		for _, mc := range []int{6, 10, 16} {
			check(t, fmt.Sprintf("fragments-%d.md", seed), spanStartRun(seed), markdown.Config{MaxChar: mc, ChunkOverlap: mc - 2, Tokenizer: "cl100k_base"})
		}
	}
	dir, files := corpusFiles(t) // skips in one line without the corpus
	every := 20
	if raceEnabled {
		every = 200
	}
	for i, f := range files {
		if i%every != 0 || strings.HasSuffix(f, ".mdx") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(src) {
			continue
		}
		for _, cfg := range configs[:4] {
			check(t, f, src, cfg)
		}
	}
}
