package eval

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

var update = flag.Bool("update", false, "rewrite the offsets of the question sets from the references' content")

// docsSet is the project's own question set: questions over a frozen copy
// of the repository's documentation (testdata/docs/README.md).
const docsSet = "testdata/docs"

// questionSets are the question sets the repository ships: the project's
// own, which the quality gate reads, and the small one over the examples
// folder that the README's chunk eval line runs.
var questionSets = []struct {
	questions, corpus string
	gate              bool // held to the gate's rules
}{
	{filepath.Join(docsSet, "questions.jsonl"), filepath.Join(docsSet, "corpus"), true},
	{filepath.Join("..", "examples", "questions.jsonl"), filepath.Join("..", "examples", "docs"), false},
}

// TestQuestionSets checks the question sets: every reference is verbatim
// text of its corpus file at its offsets, and no question repeats four
// consecutive words of its answer (a BM25 gate over questions that copy
// their answers would measure nothing); the gate's set must also be large
// enough, ask about every file and hold questions with two references.
// With -update it first computes the offsets of each reference from its
// content, which must occur exactly once in its file.
func TestQuestionSets(t *testing.T) {
	for _, set := range questionSets {
		t.Run(set.questions, func(t *testing.T) {
			files := readCorpus(t, set.corpus)
			if *update {
				locateReferences(t, set.questions, files)
			}
			qs := readQuestionFile(t, set.questions)
			if err := CheckReferences(qs, files); err != nil {
				t.Fatalf("%v (go test ./eval -run TestQuestionSets -update recomputes the offsets)", err)
			}
			asked := map[string]int{}
			ids := map[string]bool{}
			two := 0
			for _, q := range qs {
				if ids[q.ID] {
					t.Errorf("question id %s is used twice", q.ID)
				}
				ids[q.ID] = true
				if len(q.References) > 1 {
					two++
				}
				for _, r := range q.References {
					asked[r.File]++
					if run := sharedRun(q.Question, r.Content, 4); run != "" {
						t.Errorf("question %s repeats %q of its reference: paraphrase it", q.ID, run)
					}
				}
			}
			if !set.gate {
				return
			}
			if len(qs) < 60 {
				t.Errorf("%d questions, want at least 60", len(qs))
			}
			for name := range files {
				if asked[name] < 5 {
					t.Errorf("%s answers %d questions, want at least 5", name, asked[name])
				}
			}
			if two < 5 {
				t.Errorf("%d questions need two references, want at least 5", two)
			}
		})
	}
}

// readCorpus reads the files under dir by their slash-separated path
// relative to it.
func readCorpus(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readQuestionFile reads the question set at path (JSON Lines).
func readQuestionFile(t *testing.T, path string) []Question {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := ReadQuestions(f)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// chunkCorpus chunks every file of files with c, in path order, and
// returns the passages of the chunks.
func chunkCorpus(t *testing.T, c chunking.Chunker, files map[string][]byte) []Passage {
	t.Helper()
	var chunks []chunking.Chunk
	for _, name := range slices.Sorted(maps.Keys(files)) {
		cs, _, err := c.Chunk(chunking.Document{Path: name, Content: files[name]})
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, cs...)
	}
	ps, err := Passages(chunks)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// locateReferences rewrites the question set at path with the offsets of
// every reference's content in its file, keeping everything else.
func locateReferences(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var q Question
		if err := json.Unmarshal(line, &q); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for j, r := range q.References {
			b := files[r.File]
			switch n := bytes.Count(b, []byte(r.Content)); {
			case r.Content == "" || n == 0:
				t.Fatalf("question %s: reference %d is not text of %s", q.ID, j, r.File)
			case n > 1:
				t.Fatalf("question %s: reference %d occurs %d times in %s; quote more of it", q.ID, j, n, r.File)
			}
			q.References[j].Start = bytes.Index(b, []byte(r.Content))
			q.References[j].End = q.References[j].Start + len(r.Content)
		}
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sharedRun returns the first run of n consecutive words of question that
// reference holds too (lower case, punctuation and markup ignored), or "".
func sharedRun(question, reference string, n int) string {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
		})
	}
	ref := " " + strings.Join(words(reference), " ") + " "
	q := words(question)
	for i := 0; i+n <= len(q); i++ {
		run := strings.Join(q[i:i+n], " ")
		if strings.Contains(ref, " "+run+" ") {
			return run
		}
	}
	return ""
}
