package code_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/code"
	"github.com/chunkstream/chunkstream/chunking/internal/spantest"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// step is the share of each real tree the property tests read: every
// step-th file by path (CHUNKSTREAM_CODE_STEP; by default 64, 256 under
// -race, and 4 and 32 with CHUNKSTREAM_TEST_FULL=1; 1 reads all).
func step(t testing.TB) int {
	if s := os.Getenv("CHUNKSTREAM_CODE_STEP"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CHUNKSTREAM_CODE_STEP=%q: want a positive integer", s)
		}
		return n
	}
	n := 64
	if testutil.Enabled(testutil.Full) {
		n = 4
	}
	if raceEnabled {
		n *= 8
	}
	return n
}

// checkChunks checks the properties every chunking of src must have and
// returns the first violation: the chunks concatenate to src (less a
// leading byte-order mark); spans are verbatim and right; every chunk has
// its language and symbol paths; a chunk over max is marked oversize, and
// is one piece with no cut inside (no statement boundary).
func checkChunks(src []byte, chunks []chunking.Chunk, lang string, maxChar int) error {
	var all strings.Builder
	for _, c := range chunks {
		all.WriteString(c.Content())
	}
	body := strings.TrimPrefix(string(src), "\uFEFF")
	if all.String() != body {
		return errors.New("the chunks do not concatenate to the file")
	}
	if err := spantest.Check(spantest.Source{Orig: src}, chunks, nil); err != nil {
		return err
	}
	for i, c := range chunks {
		md := c.Metadata()
		if l, _ := md.Get("language"); l != lang {
			return errorf("chunk %d: language %v, want %s", i, l, lang)
		}
		syms, _ := md.Get("symbols")
		list, _ := syms.([]any)
		if len(list) == 0 {
			return errorf("chunk %d: no symbol path", i)
		}
		for _, s := range list {
			if str, _ := s.(string); str == "" || strings.HasPrefix(str, ".") || strings.HasSuffix(str, ".") {
				return errorf("chunk %d: symbol path %q", i, s)
			}
		}
		if !c.Span().Verbatim {
			return errorf("chunk %d: not verbatim", i)
		}
		n := utf8.RuneCountInString(strings.TrimRight(c.Content(), " \t\r\n\f\v"))
		if _, over := md.Get("oversize"); n > maxChar && !over {
			return errorf("chunk %d: %d characters over max_char %d and not marked oversize", i, n, maxChar)
		}
	}
	return nil
}

// checkDecls returns how many declarations that fit maxChar (their lines,
// from their doc comment or first decorator when full) lie in more than
// one of the chunks given by their byte ranges, and the first such
// declaration.
//
// With loose, a declaration lies in a chunk when its own bytes do (for a
// splitter that trims its chunks); else its lines must.
func checkDecls(src []byte, chunkRanges [][2]int, decls []decl, maxChar int, full, loose bool) (int, int, *decl) {
	split, fit := 0, 0
	var first *decl
	for i, d := range decls {
		start := d.start
		if full {
			start = d.full
		}
		for start > 0 && src[start-1] != '\n' {
			start-- // chunks start at line starts: the declaration's lines are what must fit
		}
		lineEnd := d.end // with what ends its last line (a comment)
		if i := bytes.IndexByte(src[d.end:], '\n'); i >= 0 {
			lineEnd += i
		} else {
			lineEnd = len(src)
		}
		if utf8.RuneCount(bytes.TrimRight(src[start:lineEnd], " \t\r")) > maxChar {
			continue
		}
		fit++
		if loose {
			start = d.start
		}
		inOne := false
		for _, r := range chunkRanges {
			if r[0] <= start && d.end <= r[1] {
				inOne = true
				break
			}
		}
		if !inOne {
			split++
			if first == nil {
				first = &decls[i]
			}
		}
	}
	return split, fit, first
}

// ranges returns the byte ranges of chunks (from their spans).
func ranges(chunks []chunking.Chunk) [][2]int {
	out := make([][2]int, len(chunks))
	for i, c := range chunks {
		sp := c.Span()
		out[i] = [2]int{sp.Start, sp.End}
	}
	return out
}

// cutsInTokens returns a chunk start that falls strictly inside one of
// tokens, or -1.
func cutsInTokens(chunks []chunking.Chunk, tokens [][2]int) int {
	for _, c := range chunks {
		s := c.Span().Start
		for _, tk := range tokens {
			if tk[0] < s && s < tk[1] {
				return s
			}
		}
	}
	return -1
}

// TestRealTrees chunks the Go and Python standard libraries and real
// JavaScript and TypeScript trees (a share of each, see step) at two
// budgets and in target mode, and checks, file by file: checkChunks; every declaration that
// fits the budget (in target mode, the ceiling) with its doc comment or
// decorators lies in one chunk
// (Go's declarations from go/parser, Python's from Python's ast, the
// others' from TypeScript's parser); no chunk starts inside a token
// that spans lines (Go's scanner, Python's tokenize).
func TestRealTrees(t *testing.T) {
	for _, tc := range []struct {
		tree, lang string
		exts       []string
	}{
		{"go", "go", []string{".go"}},
		{"python", "python", []string{".py"}},
		{"js", "javascript", []string{".js", ".mjs", ".cjs"}},
		{"ts", "typescript", []string{".ts"}},
		{"ts", "tsx", []string{".tsx"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			dir, files := treeFiles(t, tc.tree, step(t), tc.exts...)
			docs, total := readDocs(t, dir, files)
			facts := oracleFacts(t, tc.tree, dir, files, docs, func() lcResult { return runLangChain(t, dir, files, "js", 2048, true) })
			for _, cfg := range []code.Config{{MaxChar: 2048}, {MaxChar: 400}, {MaxChar: 2048, TargetChar: 800}} {
				c, err := code.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				maxChar, mode := cfg.MaxChar, fmt.Sprintf("max_char %d", cfg.MaxChar)
				if cfg.TargetChar > 0 { // within the ceiling, and no declaration up to it split
					maxChar, mode = cfg.TargetChar+(cfg.TargetChar+1)/2, fmt.Sprintf("target_char %d", cfg.TargetChar)
				}
				var chunks, declsChecked, tokensChecked, notUTF8, unparsed, withErrors int
				for i, d := range docs {
					cs, _, err := c.Chunk(d)
					if errors.Is(err, chunking.ErrNotUTF8) {
						notUTF8++
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", d.Path, err)
					}
					chunks += len(cs)
					if err := checkChunks(d.Content, cs, tc.lang, maxChar); err != nil {
						t.Errorf("%s (%s): %v", d.Path, mode, err)
						continue
					}
					for _, ch := range cs {
						if _, ok := ch.Metadata().Get("parse_errors"); ok {
							withErrors++
							break
						}
					}
					if !facts[i].ok {
						unparsed++
						continue
					}
					declsChecked += len(facts[i].decls)
					tokensChecked += len(facts[i].tokens)
					if n, _, first := checkDecls(d.Content, ranges(cs), facts[i].decls, maxChar, true, false); n > 0 {
						t.Errorf("%s (%s): %d declarations that fit are split, the first %q at bytes %d-%d",
							d.Path, mode, n, first.name, first.full, first.end)
					}
					if at := cutsInTokens(cs, facts[i].tokens); at >= 0 {
						t.Errorf("%s (%s): a chunk starts at byte %d, inside a token", d.Path, mode, at)
					}
				}
				t.Logf("%s: %d files (%d bytes), %d chunks, %d declarations and %d tokens spanning lines checked; %d not UTF-8, %d the oracle cannot parse, %d with parse_errors",
					mode, len(docs), total, chunks, declsChecked, tokensChecked, notUTF8, unparsed, withErrors)
			}
		})
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
