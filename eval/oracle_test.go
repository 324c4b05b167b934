package eval

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// The oracle is testdata/oracle/chroma_metric.mjs: Chroma's span metric
// written again in JavaScript from its definition, counting character
// positions where Score merges intervals. It needs Node.js alone (no
// package); the tests using it skip in one line without it.

type oracleSpan struct {
	File       string `json:"file"`
	Start, End int
}

func (s oracleSpan) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"file": s.File, "start": s.Start, "end": s.End})
}

type oracleQuestion struct {
	ID         string       `json:"id"`
	References []oracleSpan `json:"references"`
	Retrieved  []oracleSpan `json:"retrieved"`
	Ks         []int        `json:"ks"`
}

// oracleScores runs the oracle over every question of res and returns
// its scores, per question, per k.
func oracleScores(t *testing.T, files map[string][]byte, passages []Passage, qs []Question, res *Result) [][]Scores {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the metric's JavaScript oracle cannot run")
	}
	in := struct {
		Files     map[string]string `json:"files"`
		Questions []oracleQuestion  `json:"questions"`
	}{Files: map[string]string{}}
	for name, b := range files {
		in.Files[name] = base64.StdEncoding.EncodeToString(b)
	}
	for i, q := range qs {
		oq := oracleQuestion{ID: q.ID, Ks: res.Ks, Retrieved: []oracleSpan{}}
		for _, r := range q.References {
			oq.References = append(oq.References, oracleSpan{r.File, r.Start, r.End})
		}
		for _, id := range res.Questions[i].Retrieved {
			p := passages[id]
			oq.Retrieved = append(oq.Retrieved, oracleSpan{p.File, p.Start, p.End})
		}
		in.Questions = append(in.Questions, oq)
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "oracle", "chroma_metric.mjs"))
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the oracle: %v: %s", err, stderr.Bytes())
	}
	var got []struct {
		ID     string   `json:"id"`
		Scores []Scores `json:"scores"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("reading the oracle's answer: %v", err)
	}
	if len(got) != len(qs) {
		t.Fatalf("the oracle answered %d questions of %d", len(got), len(qs))
	}
	scores := make([][]Scores, len(got))
	for i, g := range got {
		scores[i] = g.Scores
	}
	return scores
}

// agree checks every question's scores against the oracle's to 1e-9 and
// returns how many questions agree.
func agree(t *testing.T, res *Result, oracle [][]Scores) int {
	t.Helper()
	equal := 0
	for i, q := range res.Questions {
		ok := true
		for j, s := range q.Scores {
			o := oracle[i][j]
			if math.Abs(s.Recall-o.Recall) > 1e-9 || math.Abs(s.Precision-o.Precision) > 1e-9 || math.Abs(s.IoU-o.IoU) > 1e-9 {
				t.Errorf("question %s at k=%d: %+v, the oracle %+v", q.ID, res.Ks[j], s, o)
				ok = false
			}
		}
		if ok {
			equal++
		}
	}
	return equal
}

// TestMetricOracleCases: hand-written cases for every rule of the metric
// (characters not bytes, chunks of other files, overlapping chunks and
// references, touching ranges, nothing retrieved), then random spans.
func TestMetricOracleCases(t *testing.T) {
	files := map[string][]byte{
		"a.md":     []byte("0123456789" + strings.Repeat("é", 10) + "abcdefghij" + "日本語のテキスト" + "😀😀 end"),
		"dir/b.md": []byte("plain ascii text, forty characters long."),
	}
	p := func(f string, s, e int) Passage { return Passage{File: f, Start: s, End: e} }
	passages := []Passage{
		p("a.md", 0, 10), p("a.md", 10, 30), p("a.md", 5, 24), p("a.md", 30, 40), p("dir/b.md", 0, 20),
		p("dir/b.md", 20, 40), p("a.md", 40, 64), p("a.md", 64, 76), p("a.md", 0, 76), p("a.md", 10, 12),
	}
	r := func(f string, s, e int) Reference { return Reference{File: f, Start: s, End: e} }
	cases := []struct {
		refs      []Reference
		retrieved []int
	}{
		{[]Reference{r("a.md", 0, 10)}, []int{0, 1, 2}},
		{[]Reference{r("a.md", 12, 20)}, []int{2, 1, 9}},                     // inside é: bytes 12-20 are 4 characters
		{[]Reference{r("a.md", 5, 16)}, []int{4, 5, 0}},                      // chunks of another file first
		{[]Reference{r("a.md", 0, 10), r("a.md", 5, 16)}, []int{2, 2, 8}},    // overlapping references, a repeated chunk
		{[]Reference{r("a.md", 30, 40), r("dir/b.md", 10, 30)}, []int{3, 5}}, // two files
		{[]Reference{r("a.md", 10, 30)}, []int{0, 3}},                        // touching, not overlapping
		{[]Reference{r("a.md", 40, 72)}, []int{6, 7}},                        // CJK and emoji
		{[]Reference{r("dir/b.md", 0, 5)}, nil},                              // nothing retrieved
		{[]Reference{r("a.md", 64, 76)}, []int{8, 7, 6, 5, 4, 3, 2, 1, 0}},   // the whole file first
	}
	ret := scripted{}
	var qs []Question
	for i, c := range cases {
		q := Question{ID: "case" + string(rune('0'+i)), Question: strings.Repeat("?", i+1), References: c.refs}
		qs = append(qs, q)
		ret[q.Question] = c.retrieved
	}
	// Random spans over a random text of 1- to 4-byte characters.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab c\néü€日😀")
	var text []rune
	for range 3000 {
		text = append(text, alphabet[rng.IntN(len(alphabet))])
	}
	files["r.md"] = []byte(string(text))
	starts := []int{} // rune starts, and the end
	for i := range files["r.md"] {
		if utf8.RuneStart(files["r.md"][i]) {
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(files["r.md"]))
	span := func(maxLen int) (int, int) {
		s := rng.IntN(len(starts) - 1)
		e := min(len(starts)-1, s+1+rng.IntN(maxLen))
		return starts[s], starts[e]
	}
	first := len(passages)
	for range 300 {
		s, e := span(400)
		passages = append(passages, p("r.md", s, e))
	}
	for i := range 200 {
		q := Question{ID: "random" + strings.Repeat("!", i), Question: "random " + strings.Repeat("?", i)}
		for range 1 + rng.IntN(3) {
			s, e := span(200)
			q.References = append(q.References, r("r.md", s, e))
		}
		var ids []int
		for range rng.IntN(12) {
			ids = append(ids, first+rng.IntN(300))
		}
		qs = append(qs, q)
		ret[q.Question] = ids
	}
	if err := CheckPassages(passages, files); err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), files, passages, qs, ret, []int{1, 2, 3, 5, 10})
	if err != nil {
		t.Fatal(err)
	}
	if n := agree(t, res, oracleScores(t, files, passages, qs, res)); n != len(qs) {
		t.Errorf("%d of %d questions agree with the oracle", n, len(qs))
	}
}

// TestMetricOracleChroma: on Chroma's general evaluation set, the scores
// of the Markdown chunker's chunks (the defaults, whose split sections
// overlap, and a small size without overlap) retrieved by BM25 agree
// with the oracle for every question.
func TestMetricOracleChroma(t *testing.T) {
	dir := testutil.SharedDir(t, "eval", "chroma")
	path := filepath.Join(dir, "questions.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Chroma's set has no questions.jsonl: %v", err)
	}
	qs := readQuestionFile(t, path)
	files := readCorpus(t, filepath.Join(dir, "corpora"))
	if err := CheckReferences(qs, files); err != nil {
		t.Fatal(err)
	}
	entry, err := registry.Default().Lookup("markdown")
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []map[string]any{{}, {"max_char": 400, "chunk_overlap": 0}} {
		c, err := entry.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		passages := chunkCorpus(t, c, files)
		bm, err := NewBM25(passages)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Evaluate(context.Background(), files, passages, qs, bm, []int{1, 5, 10})
		if err != nil {
			t.Fatal(err)
		}
		n := agree(t, res, oracleScores(t, files, passages, qs, res))
		t.Logf("markdown %v: %d of %d questions agree with the oracle (recall@5 %.4f, IoU@5 %.4f)", opts, n, len(qs), res.Mean[1].Recall, res.Mean[1].IoU)
	}
}
