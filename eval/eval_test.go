package eval

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
)

// scripted is a retriever that answers fixed passage lists by query.
type scripted map[string][]int

func (s scripted) Retrieve(_ context.Context, query string, k int) ([]int, error) {
	ids, ok := s[query]
	if !ok {
		return nil, errors.New("unknown query")
	}
	return ids[:min(k, len(ids))], nil
}

func TestEvaluate(t *testing.T) {
	files := map[string][]byte{"a.md": []byte("0123456789abcdefghij")}
	passages := []Passage{{File: "a.md", Start: 0, End: 10}, {File: "a.md", Start: 10, End: 20}, {File: "a.md", Start: 5, End: 15}}
	qs := []Question{
		{ID: "q1", Question: "one", References: []Reference{{File: "a.md", Start: 0, End: 5}}},
		{ID: "q2", Question: "two", References: []Reference{{File: "a.md", Start: 10, End: 20}}},
	}
	r := scripted{"one": {1, 0, 2}, "two": {1}}
	res, err := Evaluate(context.Background(), files, passages, qs, r, []int{2, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Ks, []int{1, 2}) {
		t.Fatalf("Ks = %v, want the cut-offs sorted without repeats", res.Ks)
	}
	if len(res.Questions) != 2 || res.Questions[0].ID != "q1" || !slices.Equal(res.Questions[0].Retrieved, []int{1, 0}) {
		t.Fatalf("questions = %+v, want q1 then q2, the top max(k) of each", res.Questions)
	}
	// q1: k=1 retrieves passage 1 (no overlap); k=2 adds passage 0,
	// covering 5 of 5 reference characters out of 20 retrieved.
	want := [][]Scores{{{0, 0, 0}, {1, 0.25, 0.25}}, {{1, 1, 1}, {1, 1, 1}}}
	for i, q := range res.Questions {
		for j, s := range q.Scores {
			if s != want[i][j] {
				t.Errorf("%s at k=%d: %+v, want %+v", q.ID, res.Ks[j], s, want[i][j])
			}
		}
	}
	if m := res.Mean[1]; !near(m.Recall, 1) || !near(m.Precision, 0.625) || !near(m.IoU, 0.625) {
		t.Errorf("mean at k=2 = %+v", m)
	}
	per, err := res.PerQuestion(1, func(s Scores) float64 { return s.Recall })
	if err != nil || !slices.Equal(per, []float64{0, 1}) {
		t.Errorf("PerQuestion(1, recall) = %v, %v", per, err)
	}
	if _, err := res.PerQuestion(5, func(s Scores) float64 { return s.Recall }); err == nil {
		t.Error("PerQuestion of a k not evaluated gave no error")
	}

	for name, tc := range map[string]struct {
		r   Retriever
		ks  []int
		err string
	}{
		"k 0":              {r, []int{0, 5}, "must be positive"},
		"no k":             {r, nil, "must be positive"},
		"retriever fails":  {scripted{"one": {0}}, []int{1}, "question q2: unknown query"},
		"passage past end": {scripted{"one": {3}, "two": {0}}, []int{1}, "question q1: the retriever returned passage 3 of 3"},
	} {
		if _, err := Evaluate(context.Background(), files, passages, qs, tc.r, tc.ks); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.err)
		}
	}
}

// TestEvaluateOrder: the result does not depend on which question
// finishes first.
func TestEvaluateOrder(t *testing.T) {
	files := map[string][]byte{"a.md": []byte(strings.Repeat("x", 1000))}
	var passages []Passage
	for i := 0; i < 1000; i += 10 {
		passages = append(passages, Passage{File: "a.md", Start: i, End: i + 10})
	}
	r := scripted{}
	var qs []Question
	for i := range 200 {
		q := Question{ID: string(rune('a'+i%26)) + strings.Repeat("!", i/26), Question: strings.Repeat("q", i+1),
			References: []Reference{{File: "a.md", Start: 7 * i % 990, End: 7*i%990 + 10}}}
		qs = append(qs, q)
		r[q.Question] = []int{(3 * i) % 100, (5 * i) % 100}
	}
	a, err := Evaluate(context.Background(), files, passages, qs, r, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := Evaluate(context.Background(), files, passages, qs, r, []int{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Mean, b.Mean) {
			t.Fatalf("means differ between runs: %v, %v", a.Mean, b.Mean)
		}
		for i := range a.Questions {
			if a.Questions[i].ID != qs[i].ID || !slices.Equal(a.Questions[i].Scores, b.Questions[i].Scores) {
				t.Fatalf("question %d differs: %+v, %+v", i, a.Questions[i], b.Questions[i])
			}
		}
	}
}

func TestSizesOf(t *testing.T) {
	var ps []Passage
	for _, n := range []int{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} {
		ps = append(ps, Passage{Text: strings.Repeat("é", n)}) // characters, not bytes
	}
	got := SizesOf(ps)
	if want := (Sizes{Chunks: 10, P10: 1, P50: 5, P90: 9, Mean: 5.5}); got != want {
		t.Errorf("SizesOf = %+v, want %+v", got, want)
	}
	if got := SizesOf(nil); got != (Sizes{}) {
		t.Errorf("SizesOf(nil) = %+v", got)
	}
}

func TestPaired(t *testing.T) {
	mean, half := Paired([]float64{0, 0, 0, 0}, []float64{1, 2, 3, 4})
	// differences 1..4: mean 2.5, sample variance 5/3, half-width 1.96·sqrt(5/3/4)
	if !near(mean, 2.5) || !near(half, 1.96*math.Sqrt(5.0/3/4)) {
		t.Errorf("Paired = %v ± %v", mean, half)
	}
	if mean, half := Paired([]float64{1}, []float64{2}); mean != 1 || !math.IsInf(half, 1) {
		t.Errorf("one pair: %v ± %v, want 1 ± +Inf", mean, half)
	}
	if _, half := Paired([]float64{1, 2}, []float64{2}); !math.IsInf(half, 1) {
		t.Errorf("pairs of unequal length: half-width %v, want +Inf", half)
	}
}

func TestReadQuestions(t *testing.T) {
	in := `{"id":"a","question":"Why?","references":[{"file":"x.md","start":0,"end":3,"content":"abc"}],"corpus_id":"x"}

{"question":"How?","references":[{"file":"x.md","start":3,"end":4,"content":"d"}]}
`
	qs, err := ReadQuestions(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "a" || qs[1].ID != "q3" || qs[1].References[0].End != 4 {
		t.Fatalf("ReadQuestions = %+v, want ids a and q3 (its line)", qs)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"id":"a","question":"","references":[{"file":"x.md","start":0,"end":1}]}`, "line 1: question a has no text"},
		{`{"id":"a","question":"x","references":[]}`, "has no references"},
		{`{"id":"a","question":"x","references":[{"file":"x.md","start":2,"end":2}]}`, "is not a range of a file"},
		{`{"id":"a","question":"x","references":[{"file":"x.md"}]}`, "has neither a range nor content"},
		{`{"id":"a","question":"x","references":[{"content":"abc"}]}`, "has no file"},
		{"\n{", "line 2"},
	} {
		_, err := ReadQuestions(strings.NewReader(bad.in))
		if !errors.Is(err, ErrQuestions) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ReadQuestions(%q) = %v, want ErrQuestions with %q", bad.in, err, bad.want)
		}
	}
}

// TestLocate: a reference without a range is found by its content, when
// it occurs exactly once in its file; otherwise its question is left out
// with a note. References with a range are kept as they are.
func TestLocate(t *testing.T) {
	files := map[string][]byte{"x.md": []byte("one two one three")}
	file := func(name string) ([]byte, error) {
		if b, ok := files[name]; ok {
			return b, nil
		}
		return nil, errors.New("no file " + name)
	}
	ref := func(f, c string) Reference { return Reference{File: f, Content: c} }
	qs := []Question{
		{ID: "found", Question: "?", References: []Reference{ref("x.md", "two one"), {File: "x.md", Start: 0, End: 3, Content: "one"}}},
		{ID: "twice", Question: "?", References: []Reference{ref("x.md", "one")}},
		{ID: "absent", Question: "?", References: []Reference{ref("x.md", "four")}},
		{ID: "nofile", Question: "?", References: []Reference{ref("y.md", "one")}},
		{ID: "second", Question: "?", References: []Reference{ref("x.md", "three"), ref("x.md", "one")}},
	}
	got, notes := Locate(qs, file)
	if len(got) != 1 || got[0].ID != "found" {
		t.Fatalf("Locate kept %+v, want only question found", got)
	}
	if r := got[0].References; r[0].Start != 4 || r[0].End != 11 || r[1].Start != 0 || r[1].End != 3 {
		t.Errorf("ranges %+v, want [4, 11) and [0, 3)", r)
	}
	if err := CheckReferences(got, files); err != nil {
		t.Error(err)
	}
	want := []string{"question twice left out: its reference occurs 2 times in x.md", "question absent left out: its reference is not in x.md",
		"question nofile left out: no file y.md", "question second left out: its reference occurs 2 times in x.md"}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	if qs[0].References[0].End != 0 {
		t.Error("Locate changed its argument's references")
	}
	if err := CheckReferences(qs[:1], files); !errors.Is(err, ErrQuestions) || !strings.Contains(err.Error(), "has no range") {
		t.Errorf("CheckReferences(unlocated) = %v, want ErrQuestions naming the missing range", err)
	}
}

func TestCheckReferences(t *testing.T) {
	files := map[string][]byte{"x.md": []byte("hello world")}
	q := func(f string, s, e int, c string) []Question {
		return []Question{{ID: "q", Question: "?", References: []Reference{{File: f, Start: s, End: e, Content: c}}}}
	}
	if err := CheckReferences(q("x.md", 6, 11, "world"), files); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		qs   []Question
		want string
	}{
		{q("y.md", 0, 1, "h"), `question q: no file "y.md"`},
		{q("x.md", 6, 12, "world!"), "past the end of x.md"},
		{q("x.md", 0, 5, "world"), "are not the reference's content"},
	} {
		if err := CheckReferences(tc.qs, files); !errors.Is(err, ErrQuestions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckReferences(%+v) = %v, want %q", tc.qs[0].References[0], err, tc.want)
		}
	}
}

func TestCheckPassages(t *testing.T) {
	files := map[string][]byte{"x.md": []byte("héllo")} // é is bytes 1-2
	if err := CheckPassages([]Passage{{File: "x.md", Start: 0, End: 6}, {File: "x.md", Start: 3, End: 4}}, files); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Passage
		want string
	}{
		{Passage{File: "y.md", Start: 0, End: 1}, `no file "y.md"`},
		{Passage{File: "x.md", Start: 2, End: 2}, "not a range of x.md"},
		{Passage{File: "x.md", Start: 0, End: 7}, "not a range of x.md (6 bytes)"},
		{Passage{File: "x.md", Start: 2, End: 4}, "cut a character"},
		{Passage{File: "x.md", Start: 0, End: 2}, "cut a character"},
	} {
		if err := CheckPassages([]Passage{tc.p}, files); !errors.Is(err, ErrPassages) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckPassages(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}

func TestPassages(t *testing.T) {
	md := chunking.Metadata{{Key: "file", Value: "a.md"}}
	ch := chunking.NewChunk("text", md).WithSpan(chunking.Span{Start: 4, End: 8, FirstLine: 1, LastLine: 1, Verbatim: true})
	ps, err := Passages([]chunking.Chunk{ch})
	if err != nil || len(ps) != 1 || ps[0] != (Passage{File: "a.md", Start: 4, End: 8, Text: "text"}) {
		t.Fatalf("Passages = %+v, %v", ps, err)
	}
	for _, bad := range []chunking.Chunk{
		chunking.NewChunk("text", md),
		chunking.NewChunk("text", nil).WithSpan(chunking.Span{Start: 4, End: 8, FirstLine: 1, LastLine: 1}),
	} {
		if _, err := Passages([]chunking.Chunk{ch, bad}); err == nil || !strings.Contains(err.Error(), "chunk 1 has no file and byte range") {
			t.Errorf("Passages of %v: err = %v", bad, err)
		}
	}
}

func TestSharedRun(t *testing.T) {
	if got := sharedRun("How do I Restart the worker safely?", "Restarting a stuck worker is safe: restart the worker safely.", 4); got != "restart the worker safely" {
		t.Errorf("sharedRun = %q, want the four words both hold", got)
	}
	if got := sharedRun("Is it OK to kill a worker that seems hung?", "Restarting a stuck worker is safe", 4); got != "" {
		t.Errorf("sharedRun = %q, want none", got)
	}
}
