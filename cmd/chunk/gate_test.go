package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// The quality gate: chunk eval's BM25 recall@5 and IoU@5 of each chunker's
// defaults and of three Markdown sizes, on the project's question set
// over its frozen documentation (eval/testdata/docs) and on Chroma's
// general evaluation set when it is present, and of the code and HTML
// chunkers on the sets over source trees read in place (Go's net/http,
// Python's email package, the Go specification and memory model:
// eval/testdata/gohttp, pyemail, gospec), against the committed
// baseline testdata/gate.json. A drop of more than gateTolerance points
// fails; a rise is logged. After a change that moves the figures on
// purpose: go test ./cmd/chunk -run TestQualityGate -update, and commit
// the baseline with the change.

// gateTolerance is the drop, in percentage points, the gate lets pass.
const gateTolerance = 1.0

// gateK is the cut-off the gate reads.
const gateK = 5

// gateSettings are the rows the gate evaluates, as -try flags of chunk
// eval; the first is the base (the markdown chunker's defaults).
var gateSettings = []string{
	"",
	"-max-char 400 -chunk-overlap 0",
	"-max-char 800 -chunk-overlap 0",
	"-max-char 1600 -chunk-overlap 0",
	"-chunker twostep",
}

// treeSettings are the rows of the sets over source trees, by the
// chunker the set measures: its defaults and a smaller size.
var treeSettings = map[string][]string{
	"code": {"-chunker code", "-chunker code -max-char 1000"},
	"html": {"-chunker html", "-chunker html -target-char 800"},
}

// treeSets are the question sets over source trees (eval/testdata/NAME,
// with corpus.json naming the tree and folder they are read from).
var treeSets = []string{"gohttp", "pyemail", "gospec"}

// maxLeftOut is how many questions of a set over a source tree may be
// left out (their reference not found exactly once in the tree at hand).
const maxLeftOut = 3

// gateScores are one setting's mean scores at gateK, in percentage points.
type gateScores struct {
	Recall float64 `json:"recall"`
	IoU    float64 `json:"iou"`
}

// gateBaseline is testdata/gate.json: per question set, per setting (the
// row's label), the scores; per set over a source tree, the version of
// the tree they were measured on.
type gateBaseline struct {
	K     int                              `json:"k"`
	Sets  map[string]map[string]gateScores `json:"sets"`
	Trees map[string]string                `json:"trees,omitempty"`
}

const gateBaselineFile = "testdata/gate.json"

func TestQualityGate(t *testing.T) {
	root := testutil.RepoRoot(t)
	var base gateBaseline
	data, err := os.ReadFile(gateBaselineFile)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &base); err != nil {
			t.Fatalf("%s: %v", gateBaselineFile, err)
		}
	case !*update:
		t.Fatalf("no baseline: %v (go test ./cmd/chunk -run TestQualityGate -update writes it)", err)
	}
	if base.Sets == nil {
		base = gateBaseline{K: gateK, Sets: map[string]map[string]gateScores{}}
	}
	type set struct {
		name, questions, corpus string
		settings                []string
		tree                    bool   // over a source tree: found at run time
		version                 string // the tree's
	}
	sets := []set{
		{"docs", filepath.Join(root, "eval", "testdata", "docs", "questions.jsonl"), filepath.Join(root, "eval", "testdata", "docs", "corpus"), gateSettings, false, ""},
		{"chroma", "", "", gateSettings, false, ""}, // found at run time: optional
	}
	for _, name := range treeSets {
		sets = append(sets, set{name: name, questions: filepath.Join(root, "eval", "testdata", name, "questions.jsonl"), tree: true})
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			switch {
			case s.tree:
				s.corpus, s.settings, s.version = treeCorpus(t, filepath.Dir(s.questions)) // skips in one line without the tree
			case s.questions == "":
				dir := testutil.SharedDir(t, "eval", "chroma") // skips in one line without it
				s.questions, s.corpus = filepath.Join(dir, "questions.jsonl"), filepath.Join(dir, "corpora")
				if _, err := os.Stat(s.questions); err != nil { // Chroma's CSV as published: the same questions
					s.questions = filepath.Join(dir, "questions_df.csv")
				}
			}
			got, leftOut := gateRunReport(t, s.questions, s.corpus, s.settings)
			for _, n := range leftOut {
				t.Log(n)
			}
			if len(leftOut) > maxLeftOut {
				t.Errorf("%d questions left out (at most %d): their references are not found in %s; update them", len(leftOut), maxLeftOut, s.corpus)
			}
			if *update {
				base.Sets[s.name] = got
				if s.tree {
					if base.Trees == nil {
						base.Trees = map[string]string{}
					}
					base.Trees[s.name] = s.version
				}
				return
			}
			want, ok := base.Sets[s.name]
			if !ok {
				t.Fatalf("%s has no baseline for set %s (run with -update)", gateBaselineFile, s.name)
			}
			tol := gateTolerance
			if s.tree && base.Trees[s.name] != s.version {
				// Another release of the tree: its sources, and the
				// answers' places, moved. One question's worth of drop is
				// let pass, and logged.
				tol = releaseTolerance(len(readQuestions(t, s.questions)))
				t.Logf("%s: measured on %s, the baseline on %s: a drop of up to %.1f points passes (record the new release with -update)",
					s.name, s.version, base.Trees[s.name], tol)
			}
			drops, rises := gateCompare(want, got, tol)
			for _, r := range rises {
				t.Logf("%s: rise: %s (record it with -update)", s.name, r)
			}
			for _, d := range drops {
				t.Errorf("%s: %s", s.name, d)
			}
		})
	}
	if *update {
		out, err := json.MarshalIndent(base, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(gateBaselineFile, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// releaseTolerance is the drop, in points, the gate lets pass on a set
// over a source tree of another release than the baseline's: one
// question's worth of n, and never less than gateTolerance.
func releaseTolerance(n int) float64 {
	return max(gateTolerance, 100/float64(n)+0.01)
}

// treeCorpus returns the folder of the source tree a question set's
// corpus.json names (testutil.SourceTree skips the test without it), the
// settings of its chunker and the tree's version.
func treeCorpus(t *testing.T, setDir string) (string, []string, string) {
	t.Helper()
	var c struct{ Tree, Folder, Chunker string }
	data, err := os.ReadFile(filepath.Join(setDir, "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", setDir, err)
	}
	settings, ok := treeSettings[c.Chunker]
	if !ok {
		t.Fatalf("%s: no gate settings for chunker %q", setDir, c.Chunker)
	}
	dir := testutil.SourceTree(t, c.Tree, filepath.FromSlash(c.Folder))
	cmd := exec.Command("go", "env", "GOVERSION")
	if c.Tree == "python" {
		cmd = exec.Command("python3", "-c", "import platform; print('python' + platform.python_version())")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: version of the %s tree: %v", setDir, c.Tree, err)
	}
	return dir, settings, strings.TrimSpace(string(out))
}

// gateRun runs chunk eval -json on a question set with the settings
// (the first the base flags, the others -try) and returns every row's
// BM25 scores at gateK, by the row's label, rounded to hundredths of a
// point.
func gateRun(t *testing.T, questions, corpus string, settings []string) map[string]gateScores {
	t.Helper()
	got, _ := gateRunReport(t, questions, corpus, settings)
	return got
}

// gateRunReport is gateRun, also returning the notes of the questions
// chunk eval left out.
func gateRunReport(t *testing.T, questions, corpus string, settings []string) (map[string]gateScores, []string) {
	t.Helper()
	args := append([]string{"eval", "-json", "-k", fmt.Sprint(gateK), "-questions", questions}, strings.Fields(settings[0])...)
	for _, s := range settings[1:] {
		args = append(args, "-try", s)
	}
	args = append(args, corpus)
	code, out, errOut := runAppEnv(t, registry.Default().Entries(), map[string]string{}, args...)
	if code != exitOK {
		t.Fatalf("chunk %s = %d: %s", strings.Join(args, " "), code, errOut)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]gateScores{}
	for _, r := range rep.Rows {
		if r.Retriever != retrieverBM25 {
			continue
		}
		i := slices.Index(rep.K, gateK)
		got[r.Setting] = gateScores{Recall: round2(100 * r.Mean[i].Recall), IoU: round2(100 * r.Mean[i].IoU)}
	}
	if len(got) != len(settings) {
		t.Fatalf("chunk eval gave %d BM25 rows for %d settings: %v", len(got), len(settings), got)
	}
	return got, rep.Skipped
}

func round2(x float64) float64 { return math.Round(100*x) / 100 }

// gateCompare compares measured scores with the baseline's: a setting
// whose recall or IoU is more than tol points below its baseline, or
// that either side lacks, is a drop; one above it a rise.
func gateCompare(baseline, measured map[string]gateScores, tol float64) (drops, rises []string) {
	for _, name := range slices.Sorted(maps.Keys(baseline)) {
		m, ok := measured[name]
		if !ok {
			drops = append(drops, fmt.Sprintf("%s: not measured", name))
			continue
		}
		b := baseline[name]
		for _, x := range []struct {
			metric     string
			base, meas float64
		}{{"recall@5", b.Recall, m.Recall}, {"IoU@5", b.IoU, m.IoU}} {
			switch d := x.meas - x.base; {
			case d < -tol:
				drops = append(drops, fmt.Sprintf("%s: %s %.2f, %.2f points below the baseline %.2f (more than %.2g)", name, x.metric, x.meas, -d, x.base, tol))
			case d > 0.005:
				rises = append(rises, fmt.Sprintf("%s: %s %.2f, %.2f points above the baseline %.2f", name, x.metric, x.meas, d, x.base))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(measured)) {
		if _, ok := baseline[name]; !ok {
			drops = append(drops, fmt.Sprintf("%s: no baseline (run with -update)", name))
		}
	}
	return drops, rises
}

// TestGateCompare pins what the gate lets pass.
func TestGateCompare(t *testing.T) {
	base := map[string]gateScores{"a": {50, 2}, "b": {40, 3}}
	tests := []struct {
		name     string
		measured map[string]gateScores
		drops    []string // substrings, one per drop
		rises    int
	}{
		{"equal", map[string]gateScores{"a": {50, 2}, "b": {40, 3}}, nil, 0},
		{"one point down passes", map[string]gateScores{"a": {49, 1}, "b": {40, 3}}, nil, 0},
		{"more than a point down fails", map[string]gateScores{"a": {48.99, 2}, "b": {40, 1.9}},
			[]string{"a: recall@5 48.99, 1.01 points below the baseline 50.00", "b: IoU@5 1.90"}, 0},
		{"a rise is reported", map[string]gateScores{"a": {52, 2}, "b": {40, 3.5}}, nil, 2},
		{"missing and new settings fail", map[string]gateScores{"a": {50, 2}, "c": {1, 1}}, []string{"b: not measured", "c: no baseline"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drops, rises := gateCompare(base, tc.measured, gateTolerance)
			if len(drops) != len(tc.drops) || len(rises) != tc.rises {
				t.Fatalf("drops %q, rises %q; want %d drops, %d rises", drops, rises, len(tc.drops), tc.rises)
			}
			for i, want := range tc.drops {
				if !strings.Contains(drops[i], want) {
					t.Errorf("drop %d = %q, want it to contain %q", i, drops[i], want)
				}
			}
		})
	}
}

// TestQualityGateCatchesAWorseChunker feeds the gate a worse chunker in
// place of the Markdown defaults (a tiny budget without overlap, which
// cuts every section into scraps) and checks that the gate reports the
// drop against the committed baseline of the defaults.
func TestQualityGateCatchesAWorseChunker(t *testing.T) {
	var base gateBaseline
	data, err := os.ReadFile(gateBaselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	want, ok := base.Sets["docs"]["markdown"]
	if !ok {
		t.Fatalf("%s has no docs baseline of the markdown defaults", gateBaselineFile)
	}
	root := testutil.RepoRoot(t)
	worse := gateRun(t, filepath.Join(root, "eval", "testdata", "docs", "questions.jsonl"),
		filepath.Join(root, "eval", "testdata", "docs", "corpus"), []string{"-max-char 200 -chunk-overlap 0 -min-char 0"})
	if len(worse) != 1 {
		t.Fatalf("rows %v", worse)
	}
	measured := map[string]gateScores{}
	for _, s := range worse {
		measured["markdown"] = s // the worse chunker stands in for the defaults
	}
	drops, _ := gateCompare(map[string]gateScores{"markdown": want}, measured, gateTolerance)
	if len(drops) == 0 || !strings.Contains(drops[0], "markdown: recall@5") {
		t.Fatalf("the gate let a worse chunker pass: baseline %+v, measured %+v, drops %q", want, measured["markdown"], drops)
	}
	t.Logf("caught: %s", drops[0])
}

// TestQualityGateCatchesWorseTreeChunkers does the same for the sets over
// source trees: the code and HTML chunkers at a tiny budget stand in for
// their defaults, and the gate reports the drop even at the tolerance it
// allows on another release of the tree (one question's worth). It skips
// a set whose tree is absent.
func TestQualityGateCatchesWorseTreeChunkers(t *testing.T) {
	var base gateBaseline
	data, err := os.ReadFile(gateBaselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	root := testutil.RepoRoot(t)
	for _, tc := range []struct{ set, row, worse string }{
		{"gohttp", "code", "-chunker code -max-char 300"},
		{"gospec", "html", "-chunker html -max-char 200 -chunk-overlap 0"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			want, ok := base.Sets[tc.set][tc.row]
			if !ok {
				t.Fatalf("%s has no %s baseline of %s", gateBaselineFile, tc.set, tc.row)
			}
			setDir := filepath.Join(root, "eval", "testdata", tc.set)
			corpus, _, _ := treeCorpus(t, setDir) // skips in one line without the tree
			questions := filepath.Join(setDir, "questions.jsonl")
			worse := gateRun(t, questions, corpus, []string{tc.worse})
			if len(worse) != 1 {
				t.Fatalf("rows %v", worse)
			}
			measured := map[string]gateScores{}
			for _, s := range worse {
				measured[tc.row] = s
			}
			tol := releaseTolerance(len(readQuestions(t, questions)))
			drops, _ := gateCompare(map[string]gateScores{tc.row: want}, measured, tol)
			if len(drops) == 0 || !strings.Contains(drops[0], tc.row+": recall@5") {
				t.Fatalf("the gate let a worse chunker pass: baseline %+v, measured %+v, drops %q", want, measured[tc.row], drops)
			}
			t.Logf("caught: %s", drops[0])
		})
	}
}
