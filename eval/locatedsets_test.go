package eval

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// locatedSet is a question set over a source tree read in place (a Go
// distribution, a Python installation, npm's own files, a public
// repository's checkout): its references give their content without
// offsets, found when the set is loaded (Locate).
type locatedSet struct {
	// Tree and Folder name the corpus (sourceTree); Chunker the chunker
	// the set measures.
	Tree    string `json:"tree"`
	Folder  string `json:"folder"`
	Chunker string `json:"chunker"`
	// Repo and Commit pin a checkout's tree (Tree "checkout"): the
	// repository (owner/name) and the commit its files are taken at.
	Repo   string `json:"repo,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Release is the release of the tree the references were taken
	// from, where nothing else pins it (npm's version).
	Release string `json:"release,omitempty"`
}

// locatedSets are the folders of testdata holding such sets, each with a
// corpus.json (a locatedSet) and questions.jsonl.
var locatedSets = []string{
	"gohttp", "pyemail", "gospec",
	"gotime", "pyhttp", "jsnpm", "tszod", "npmdocs",
}

// sourceTree returns the folder of set's corpus, skipping t in one line
// when it is absent: "go" and "python" as testutil.SourceTree finds them;
// "npm", npm's own package beside node (`npm root -g`); "checkout", the
// checkout of set.Repo named after the repository (its name without the
// owner) in the folder CHUNKSTREAM_EVAL_CHECKOUTS names, which the set's
// README says how to make.
func sourceTree(t *testing.T, set locatedSet) string {
	t.Helper()
	var root string
	switch set.Tree {
	case "go", "python":
		return testutil.SourceTree(t, set.Tree, filepath.FromSlash(set.Folder))
	case "npm":
		out, err := exec.Command("npm", "root", "-g").Output()
		if err != nil {
			t.Skipf("no npm here: %v", err)
		}
		root = filepath.Join(strings.TrimSpace(string(out)), "npm")
		// Another release moves the references: the set is npm's files
		// of set.Release.
		if v, err := exec.Command("npm", "--version").Output(); err != nil || strings.TrimSpace(string(v)) != set.Release {
			t.Skipf("npm %s here, the set's references are npm %s's (%v)", strings.TrimSpace(string(v)), set.Release, err)
		}
	case "checkout":
		dir := os.Getenv("CHUNKSTREAM_EVAL_CHECKOUTS")
		if dir == "" {
			t.Skipf("CHUNKSTREAM_EVAL_CHECKOUTS is not set (a folder holding a checkout of %s at %.12s)", set.Repo, set.Commit)
		}
		_, name, ok := strings.Cut(set.Repo, "/")
		if !ok || set.Commit == "" {
			t.Fatalf("a checkout tree wants repo owner/name and commit, got %q and %q", set.Repo, set.Commit)
		}
		root = filepath.Join(dir, name)
	default:
		t.Fatalf("no source tree %q (want go, python, npm or checkout)", set.Tree)
	}
	p := filepath.Join(root, filepath.FromSlash(set.Folder))
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Skipf("%s source tree has no folder %s", set.Tree, p)
	}
	return p
}

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
			dir := sourceTree(t, set)
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
