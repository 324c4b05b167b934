package code_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/code"
)

// side is one splitter's figures over a sample.
type side struct {
	chunks, chars, maxChars, over, fit, split int
}

func (s *side) add(src []byte, ranges [][2]int, decls []decl, maxChar int, loose bool) {
	for _, r := range ranges {
		n := utf8.RuneCount(src[r[0]:r[1]])
		if utf8.RuneCount(bytes.TrimRight(src[r[0]:r[1]], " \t\r\n")) > maxChar {
			s.over++
		}
		s.chunks++
		s.chars += n
		s.maxChars = max(s.maxChars, n)
	}
	split, fit, _ := checkDecls(src, ranges, decls, maxChar, false, loose)
	s.split += split
	s.fit += fit
}

// TestLangChainSideBySide chunks samples of the real trees with the code
// chunker and with LangChain.js's RecursiveCharacterTextSplitter
// .fromLanguage (chunkSize 2048, chunkOverlap 0: the code chunker has no
// overlap) and logs, for each, the chunks, their mean and largest size
// in characters, and how many declarations that fit in 2048 characters
// (functions, methods, classes and types, as go/parser, Python's ast and
// TypeScript's parser find them, without doc comments) it splits. The
// code chunker must split none.
func TestLangChainSideBySide(t *testing.T) {
	const maxChar = 2048
	for _, tc := range []struct {
		tree, lang, lc string
		step           int
		exts           []string
	}{
		{"go", "go", "go", 8, []string{".go"}},
		{"python", "python", "python", 8, []string{".py"}},
		{"js", "javascript", "js", 2, []string{".js", ".mjs", ".cjs"}},
		{"ts", "typescript", "js", 1, []string{".ts", ".tsx"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			st := tc.step
			if raceEnabled {
				st *= 8
			}
			dir, files := treeFiles(t, tc.tree, st, tc.exts...)
			docs, total := readDocs(t, dir, files)
			lc := runLangChain(t, dir, files, tc.lc, maxChar, tc.tree == "js" || tc.tree == "ts")
			facts := oracleFacts(t, tc.tree, dir, files, docs, func() lcResult { return lc })
			c := mustNew(t, code.Config{MaxChar: maxChar})
			var ours, theirs side
			for i, d := range docs {
				cs, _, err := c.Chunk(d)
				if err != nil || !facts[i].ok {
					continue // not UTF-8, or no oracle's parse
				}
				decls := facts[i].decls
				ours.add(d.Content, ranges(cs), decls, maxChar, false)
				var lr [][2]int
				for _, r := range lc.chunks[i] {
					if r != [2]int{} || len(lc.chunks[i]) == 1 {
						lr = append(lr, r)
					}
				}
				theirs.add(d.Content, lr, decls, maxChar, true)
			}
			t.Logf("%s: %d files, %d bytes; LangChain %s", tc.lang, len(docs), total, strings.Join(lc.result[1:3], " "))
			for _, r := range []struct {
				name string
				s    side
			}{{"code chunker", ours}, {"LangChain.js", theirs}} {
				t.Logf("  %-13s %6d chunks, mean %4d chars, largest %6d, %d over 2048; %d of %d declarations that fit split",
					r.name, r.s.chunks, r.s.chars/max(r.s.chunks, 1), r.s.maxChars, r.s.over, r.s.split, r.s.fit)
			}
			if ours.split > 0 {
				t.Errorf("the code chunker split %d declarations that fit", ours.split)
			}
		})
	}
}
