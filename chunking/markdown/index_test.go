package markdown_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// tokenConfigs are the token-mode configurations of the counting tests:
// both encodings, the reference-like sizes, small ones (every section
// split, words and characters cut) and target mode.
var tokenConfigs = map[string]markdown.Config{
	"cl100k":        {MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: "cl100k_base"},
	"o200k":         {MaxChar: 512, MinChar: 256, ChunkOverlap: 64, Tokenizer: "o200k_base"},
	"cl100k-small":  {MaxChar: 40, MinChar: 20, ChunkOverlap: 8, Tokenizer: "cl100k_base"},
	"o200k-small":   {MaxChar: 25, MinChar: 30, ChunkOverlap: 5, Tokenizer: "o200k_base"},
	"cl100k-tiny":   {MaxChar: 3, MinChar: 1, ChunkOverlap: 1, Tokenizer: "cl100k_base"},
	"target-cl100k": target(120, "cl100k_base"),
	"target-o200k":  target(40, "o200k_base"),
}

// generatedDocs returns Markdown documents built at random from parts
// that exercise every path of token mode: headings, long paragraphs and
// lines, code, tables, math, lists, words longer than a chunk, CJK and
// emoji, odd whitespace.
func generatedDocs(r *rand.Rand, n int) [][]byte {
	parts := []string{
		"# Title\n\n", "## Section two\n\n", "### Deep\n\n", "#### four\n\n",
		"A sentence of words. Another one! A third? ", "word ", "Words'll don't ", "CamelCaseWord ",
		strings.Repeat("long paragraph text ", 30) + "\n\n", "line one\nline two\n", "\n\n", "\n", "   \n", "\t",
		"```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n", "```\n" + strings.Repeat("code line here\n", 40) + "```\n\n",
		"| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n", "| h |\n|---|\n" + strings.Repeat("| cell text cell text |\n", 30) + "\n",
		"$$\nx^2 + y^2\n$$\n\n", "- item\n- item two\n  - nested\n\n", "> quoted text\n\n", "1. one\n2. two\n\n",
		strings.Repeat("x", 700) + " ", strings.Repeat("ab", 200), "日本語のテキスト。", "😀👩‍👩‍👧 ", "Привет мир. ",
		"12345678 ", "http://example.com/a/b?c=d ", "  indented code\n", "<div>\nhtml\n</div>\n\n", "---\n\n",
	}
	var docs [][]byte
	for range n {
		var sb strings.Builder
		for range 1 + r.IntN(120) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		docs = append(docs, []byte(sb.String()))
	}
	return docs
}

// corpusSample returns every step-th file of the optional corpus that is
// UTF-8 (none when it is absent).
func corpusSample(t *testing.T, step int) [][]byte {
	dir := filepath.Join(testutil.RepoRoot(t), "..", "shared", "corpus", "markdown")
	if _, err := os.Stat(dir); err != nil {
		t.Logf("corpus absent: generated documents and goldens only")
		return nil
	}
	_, files := corpusFiles(t)
	var docs [][]byte
	for i := 0; i < len(files); i += step {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
		if err != nil {
			t.Fatal(err)
		}
		if utf8.Valid(src) {
			docs = append(docs, src)
		}
	}
	return docs
}

// TestTokenIndexDifferential: token mode counting each section once, into
// an index its spans are counted through, gives the same chunks (text,
// hash, metadata, span) as counting every span on its own, the way it was
// counted before the indexes, on generated documents, the goldens and a
// sample of the corpus (every 40th file; every 4th with
// CHUNKSTREAM_TEST_FULL=1), with both encodings.
func TestTokenIndexDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	docs := generatedDocs(r, 60)
	for _, tc := range loadCases(t) {
		docs = append(docs, tc.Input)
	}
	step := 40
	if testutil.Enabled(testutil.Full) {
		step = 4
	}
	docs = append(docs, corpusSample(t, step)...)
	for name, cfg := range tokenConfigs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := mustNew(t, func(c *markdown.Config) { *c = cfg })
			plain := markdown.WithoutIndex(c)
			for i, src := range docs {
				doc := chunking.Document{Path: "d.md", Content: src}
				want, _, err := plain.Chunk(doc)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := c.Chunk(doc)
				if err != nil {
					t.Fatal(err)
				}
				if err := Equal(want, got); err != nil {
					t.Fatalf("document %d (%d bytes), without indexes then with them: %v", i, len(src), err)
				}
			}
		})
	}
}

// TestTokenWork counts the work of token mode as the bytes the token
// counter scans per byte of input (never time). Each section is counted
// once, into its index, and a span costs only its two ends, where counting
// each span on its own scanned the text again at every level of a split
// (paragraphs, lines, words), for every chunk and every overlap tried.
// Bounds: with the reference-like sizes, at most 1.5 scans per byte on the
// corpus sample and 0.6× the work without the indexes (2.5 and 0.75× on
// generated documents); with any sizes, at most 8 scans per byte, and on
// the adversarial inputs, at two sizes 8× apart, at most 12 (an opening
// fence line counted again with each part of its block costs the most):
// bounded work per byte, so linear.
func TestTokenWork(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	sets := map[string][][]byte{"generated": generatedDocs(r, 40)}
	if docs := corpusSample(t, 40); len(docs) > 0 {
		sets["corpus"] = docs
	}
	scanned := func(c *markdown.Chunker, docs [][]byte) (float64, int) {
		n, in := 0, 0
		for _, src := range docs {
			in += len(src)
			_, _, _ = markdown.Scanned(c, &n).Chunk(chunking.Document{Content: src})
		}
		return float64(n) / float64(max(in, 1)), n
	}
	for _, cname := range []string{"cl100k", "o200k", "cl100k-small", "target-cl100k"} {
		c := mustNew(t, func(c *markdown.Config) { *c = tokenConfigs[cname] })
		for set, docs := range sets {
			with, _ := scanned(c, docs)
			without, _ := scanned(markdown.WithoutIndex(c), docs)
			t.Logf("%s, %s: %.2f bytes scanned per input byte (%.2f without indexes)", cname, set, with, without)
			bound, share := 8.0, 1.0
			if cname == "cl100k" || cname == "o200k" {
				bound, share = 2.5, 0.75
				if set == "corpus" {
					bound, share = 1.5, 0.6
				}
			}
			if with > bound || with > share*without {
				t.Errorf("%s, %s: %.2f bytes scanned per input byte, %.2f without indexes (bounds %.1f and %.2f×)", cname, set, with, without, bound, share)
			}
		}
		for name, gen := range adversarial {
			small, _ := scanned(c, [][]byte{gen(500)})
			large, _ := scanned(c, [][]byte{gen(4000)})
			if large > 12 || small > 12 {
				t.Errorf("%s, adversarial %s: %.2f bytes scanned per input byte, %.2f at 8× the size", cname, name, small, large)
			}
		}
	}
}
