package eval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// locatedSet is a question set over a source tree read in place (a Go
// distribution, a Python installation): its references give their
// content without offsets, found when the set is loaded (Locate).
type locatedSet struct {
	// Tree ("go" or "python") and Folder name the corpus
	// (testutil.SourceTree); Chunker the chunker the set measures.
	Tree    string `json:"tree"`
	Folder  string `json:"folder"`
	Chunker string `json:"chunker"`
}

// locatedSets are the folders of testdata holding such sets, each with a
// corpus.json (a locatedSet) and questions.jsonl.
var locatedSets = []string{"gohttp", "pyemail", "gospec"}

// maxLeftOut is how many questions of a located set may be left out
// (their reference not found exactly once in the tree at hand, which
// moves between releases) before the set needs mending.
const maxLeftOut = 3

// TestLocatedSets checks the question sets over source trees: each has at
// least 20 questions with unique ids, no question repeats four
// consecutive words of its reference, and at most maxLeftOut are left out
// when the references are located in the tree at hand (each left out is
// logged). It skips a set whose tree is absent.
func TestLocatedSets(t *testing.T) {
	for _, name := range locatedSets {
		t.Run(name, func(t *testing.T) {
			var set locatedSet
			data, err := os.ReadFile(filepath.Join("testdata", name, "corpus.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &set); err != nil {
				t.Fatal(err)
			}
			qs := readQuestionFile(t, filepath.Join("testdata", name, "questions.jsonl"))
			ids := map[string]bool{}
			for _, q := range qs {
				if ids[q.ID] {
					t.Errorf("question id %s is used twice", q.ID)
				}
				ids[q.ID] = true
				for _, r := range q.References {
					if !r.Unlocated() {
						t.Errorf("question %s: a reference with offsets (a source tree's offsets move: give its content alone)", q.ID)
					}
					if run := sharedRun(q.Question, r.Content, 4); run != "" {
						t.Errorf("question %s repeats %q of its reference: paraphrase it", q.ID, run)
					}
				}
			}
			if len(qs) < 20 {
				t.Errorf("%d questions, want at least 20", len(qs))
			}
			dir := testutil.SourceTree(t, set.Tree, filepath.FromSlash(set.Folder))
			located, notes := Locate(qs, func(name string) ([]byte, error) {
				return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			})
			for _, n := range notes {
				t.Log(n)
			}
			if left := len(qs) - len(located); left > maxLeftOut {
				t.Errorf("%d of %d questions left out in %s (at most %d): update their references", left, len(qs), dir, maxLeftOut)
			}
		})
	}
}
