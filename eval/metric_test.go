package eval

import (
	"math"
	"strings"
	"testing"
)

func TestScore(t *testing.T) {
	// "é" is 2 bytes and 1 character: offsets are bytes, scores characters.
	files := map[string][]byte{
		"a.md": []byte("0123456789" + strings.Repeat("é", 10) + "abcdefghij"),
		"b.md": []byte("0123456789"),
	}
	ref := func(f string, s, e int) Reference { return Reference{File: f, Start: s, End: e} }
	pas := func(f string, s, e int) Passage { return Passage{File: f, Start: s, End: e} }
	tests := []struct {
		name      string
		refs      []Reference
		retrieved []Passage
		want      Scores
	}{
		{"none retrieved", []Reference{ref("a.md", 0, 10)}, nil, Scores{}},
		{"exact", []Reference{ref("a.md", 0, 10)}, []Passage{pas("a.md", 0, 10)}, Scores{1, 1, 1}},
		{"other file only adds to denominators", []Reference{ref("a.md", 0, 10)},
			[]Passage{pas("b.md", 0, 10), pas("a.md", 0, 10)}, Scores{1, 0.5, 0.5}},
		{"half covered", []Reference{ref("a.md", 0, 10)}, []Passage{pas("a.md", 5, 10)},
			// covered 5, passages 5, uncovered 5
			Scores{0.5, 1, 0.5}},
		{"characters not bytes", []Reference{ref("a.md", 10, 30)}, []Passage{pas("a.md", 10, 20)},
			// the reference is 10 characters (20 bytes); the passage 5 of them
			Scores{0.5, 1, 0.5}},
		{"overlapping passages count twice", []Reference{ref("a.md", 0, 10)},
			[]Passage{pas("a.md", 0, 10), pas("a.md", 0, 10)}, Scores{1, 0.5, 0.5}},
		{"two references, one covered", []Reference{ref("a.md", 0, 10), ref("a.md", 30, 40)},
			[]Passage{pas("a.md", 0, 20)},
			// covered 10 of 20; passage 15 chars (10 + 5 é); IoU 10/(15+10)
			Scores{0.5, 10.0 / 15, 10.0 / 25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(files, tc.refs, tc.retrieved)
			if !near(got.Recall, tc.want.Recall) || !near(got.Precision, tc.want.Precision) || !near(got.IoU, tc.want.IoU) {
				t.Errorf("Score = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestReadChromaCSV(t *testing.T) {
	corpus := []byte("héllo wörld. Second sentence here.")
	csv := "question,references,corpus_id\n" +
		`"Which sentence?","[{""content"": ""Second sentence here."", ""start_index"": 13, ""end_index"": 34}]",c` + "\n"
	qs, err := ReadChromaCSV(strings.NewReader(csv), func(name string) ([]byte, error) {
		if name != "c.md" {
			t.Fatalf("asked for %q", name)
		}
		return corpus, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := qs[0].References[0]
	if r.Start != 15 || r.End != 36 || string(corpus[r.Start:r.End]) != "Second sentence here." {
		t.Errorf("reference = %+v, want bytes [15, 36)", r)
	}
	bad := strings.Replace(csv, `""start_index"": 13`, `""start_index"": 12`, 1)
	if _, err := ReadChromaCSV(strings.NewReader(bad), func(string) ([]byte, error) { return corpus, nil }); err == nil {
		t.Error("a reference whose characters differ was accepted")
	}
}
