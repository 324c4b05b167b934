package eval

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the offsets of testdata/docs/questions.jsonl from the references' content")

// docsSet is the project's own question set: questions over a frozen copy
// of the repository's documentation (testdata/docs/README.md).
const docsSet = "testdata/docs"

// TestDocsQuestionSet checks the project's question set: every reference
// is verbatim text of its corpus file at its offsets, every file is asked
// about, the set is large enough to gate on, and no question repeats four
// consecutive words of its answer (a BM25 gate over questions that copy
// their answers would measure nothing). With -update it first computes
// the offsets of each reference from its content, which must occur
// exactly once in its file.
func TestDocsQuestionSet(t *testing.T) {
	path := filepath.Join(docsSet, "questions.jsonl")
	files := readCorpus(t, filepath.Join(docsSet, "corpus"))
	if *update {
		locateReferences(t, path, files)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := ReadQuestions(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckReferences(qs, files); err != nil {
		t.Fatalf("%v (go test ./eval -run TestDocsQuestionSet -update recomputes the offsets)", err)
	}
	if len(qs) < 60 {
		t.Errorf("%d questions, want at least 60", len(qs))
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
	for name := range files {
		if asked[name] < 5 {
			t.Errorf("%s answers %d questions, want at least 5", name, asked[name])
		}
	}
	if two < 5 {
		t.Errorf("%d questions need two references, want at least 5", two)
	}
}

// readCorpus reads the files of dir (no subfolders) by name.
func readCorpus(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
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
