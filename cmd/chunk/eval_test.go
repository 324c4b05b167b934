package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/eval"
	"github.com/chunkstream/chunkstream/worker/embed"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
)

// runAppEnv runs the command line args with the environment environ
// (nil: the process's) and returns the exit status and outputs.
func runAppEnv(t *testing.T, entries []registry.Entry, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{entries: entries, stdout: &out, stderr: &errb, environ: environ}
	code = a.run(context.Background(), args)
	return code, out.String(), errb.String()
}

// noEmbedder is an environment without CHUNKSTREAM_EMBED_*.
var noEmbedder = map[string]string{}

// evalCorpus writes a small corpus (three Markdown files, one in a
// subfolder, one with multi-byte characters) and a question set over it,
// and returns the folder and the question file.
func evalFixture(t *testing.T) (dir, questions string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "corpus")
	files := map[string]string{
		"alpha.md": "# Alpha\n\nThe alpha service stores invoices in a ledger. Every invoice has a number.\n\n" +
			"## Retention\n\nInvoices are kept for seven years, then archived to cold storage.\n\n" +
			"## Access\n\nOnly the billing team may read the ledger; auditors get a copy once a year.\n",
		"guides/beta.md": "# Beta\n\nThe beta tool converts images to thumbnails at three sizes.\n\n" +
			"## Formats\n\nIt reads PNG, JPEG and WebP, and writes WebP only.\n\n" +
			"## Limits\n\nImages larger than forty megapixels are refused with an error.\n",
		"gamma.md": "# Gamma — café notes\n\nThe café opens at seven and closes at nine. Espresso costs two euros.\n\n" +
			"## Menu\n\nCroissants, tartines and soup of the day; the soup changes daily.\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(file, content string) eval.Reference {
		i := strings.Index(files[file], content)
		if i < 0 {
			t.Fatalf("%q is not in %s", content, file)
		}
		return eval.Reference{File: file, Start: i, End: i + len(content), Content: content}
	}
	qs := []eval.Question{
		{ID: "retention", Question: "how long are invoices kept?", References: []eval.Reference{ref("alpha.md", "Invoices are kept for seven years, then archived to cold storage.")}},
		{ID: "access", Question: "who may read the ledger?", References: []eval.Reference{ref("alpha.md", "Only the billing team may read the ledger")}},
		{ID: "formats", Question: "which image formats are read and written?", References: []eval.Reference{ref("guides/beta.md", "It reads PNG, JPEG and WebP, and writes WebP only.")}},
		{ID: "limits", Question: "are huge megapixel images refused?", References: []eval.Reference{ref("guides/beta.md", "Images larger than forty megapixels are refused with an error.")}},
		{ID: "hours", Question: "when does the café open and close?", References: []eval.Reference{ref("gamma.md", "The café opens at seven and closes at nine.")}},
		{ID: "two", Question: "espresso price and soup", References: []eval.Reference{ref("gamma.md", "Espresso costs two euros."), ref("gamma.md", "the soup changes daily")}},
		{ID: "nothing", Question: "zebra xylophone", References: []eval.Reference{ref("alpha.md", "Every invoice has a number.")}},
	}
	questions = filepath.Join(root, "questions.jsonl")
	var b bytes.Buffer
	for _, q := range qs {
		line, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(questions, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, questions
}

// splitPassages runs chunk split over dir with flags and returns the
// passages of its chunks and the corpus files.
func splitPassages(t *testing.T, dir string, flags ...string) ([]eval.Passage, map[string][]byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "chunks.jsonl")
	code, _, errOut := runApp(t, registry.Default().Entries(), append(append([]string{"split"}, flags...), "-o", out, dir)...)
	if code != exitOK {
		t.Fatalf("chunk split = %d: %s", code, errOut)
	}
	c, err := chunking.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := eval.Passages(c.Chunks())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range ps {
		if files[p.File], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p.File))); err != nil {
			t.Fatal(err)
		}
	}
	return ps, files
}

func readQuestions(t *testing.T, path string) []eval.Question {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := eval.ReadQuestions(f)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func evalJSON(t *testing.T, environ map[string]string, args ...string) (evalReport, string) {
	t.Helper()
	code, out, errOut := runAppEnv(t, registry.Default().Entries(), environ, append([]string{"eval", "-json"}, args...)...)
	if code != exitOK {
		t.Fatalf("chunk eval -json %q = %d: %s", args, code, errOut)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep, errOut
}

// TestEvalChunksAsSplit: every row's chunks are those chunk split makes
// with the same flags, and its scores are eval.Evaluate's over them with
// BM25: the sizes, each question's retrieved spans in order, each score.
func TestEvalChunksAsSplit(t *testing.T) {
	dir, questions := evalFixture(t)
	rep, errOut := evalJSON(t, noEmbedder, "-k", "3,1", "-questions", questions, dir,
		"-try", "-min-char 0 -max-char 120 -chunk-overlap 20", "-try", "-chunker twostep -max-chunk-size 30")
	if n := strings.Count(errOut, "\n"); n != 1 || !strings.Contains(errOut, "dense and hybrid retrieval off: CHUNKSTREAM_EMBED_URL is not set") {
		t.Errorf("stderr = %q, want the one line saying dense retrieval is off", errOut)
	}
	if !slices.Equal(rep.K, []int{1, 3}) || rep.Questions != 7 || len(rep.Rows) != 3 {
		t.Fatalf("k %v, %d questions, %d rows; want [1 3], 7, 3", rep.K, rep.Questions, len(rep.Rows))
	}
	qs := readQuestions(t, questions)
	for i, tc := range []struct {
		label string
		flags []string
	}{
		{"markdown", nil},
		{"markdown -chunk-overlap 20 -max-char 120 -min-char 0", []string{"-min-char", "0", "-max-char", "120", "-chunk-overlap", "20"}},
		{"twostep -max-chunk-size 30", []string{"-chunker", "twostep", "-max-chunk-size", "30"}},
	} {
		row := rep.Rows[i]
		if row.Setting != tc.label || row.Retriever != retrieverBM25 {
			t.Errorf("row %d is %q (%s), want %q (bm25)", i, row.Setting, row.Retriever, tc.label)
			continue
		}
		ps, files := splitPassages(t, dir, tc.flags...)
		if got, want := row.Sizes, eval.SizesOf(ps); got != want {
			t.Errorf("%s: sizes %+v, chunk split's %+v", tc.label, got, want)
		}
		bm, err := eval.NewBM25(ps)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Evaluate(context.Background(), files, ps, qs, bm, []int{1, 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(row.Mean, want.Mean) {
			t.Errorf("%s: means %+v, want %+v", tc.label, row.Mean, want.Mean)
		}
		for j, q := range row.Questions {
			w := want.Questions[j]
			var spans []evalSpan
			for _, id := range w.Retrieved {
				spans = append(spans, evalSpan{ps[id].File, ps[id].Start, ps[id].End})
			}
			if q.ID != w.ID || !slices.Equal(q.Retrieved, spans) || !slices.Equal(q.Scores, w.Scores) {
				t.Errorf("%s: question %s: %+v, want %v %+v", tc.label, q.ID, q, spans, w.Scores)
			}
		}
		if (i == 0) != (row.Diff == nil) {
			t.Errorf("%s: diff %+v; want one exactly after the first row", tc.label, row.Diff)
		}
	}
	if row := rep.Rows[1]; row.Chunker != "markdown" || row.Options["max_char"] != float64(120) || row.Options["min_char"] != float64(0) {
		t.Errorf("row 1's chunker and options: %s %v", row.Chunker, row.Options)
	}
	// The differences are eval.Paired's, per k.
	r0, r1 := rep.Rows[0], rep.Rows[1]
	for j, k := range rep.K {
		var a, b []float64
		for i := range r0.Questions {
			a, b = append(a, r0.Questions[i].Scores[j].Recall), append(b, r1.Questions[i].Scores[j].Recall)
		}
		mean, half := eval.Paired(a, b)
		d := r1.Diff[j]
		if d.K != k || d.Recall.Mean != mean || d.Recall.Half == nil || *d.Recall.Half != half {
			t.Errorf("diff at k=%d: %+v, want recall %v ± %v", k, d, mean, half)
		}
	}
}

// TestEvalTable reads the text table: a row per setting, the differences
// after the first, and how to read it.
func TestEvalTable(t *testing.T) {
	dir, questions := evalFixture(t)
	code, out, errOut := runAppEnv(t, registry.Default().Entries(), noEmbedder, "eval", "-questions", questions, "-k", "1,3",
		"-try", "-max-char 120 -chunk-overlap 0", dir)
	if code != exitOK {
		t.Fatalf("chunk eval = %d: %s", code, errOut)
	}
	rep, _ := evalJSON(t, noEmbedder, "-questions", questions, "-k", "1,3", "-try", "-max-char 120 -chunk-overlap 0", dir)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("table of %d lines, want header, 2 rows and 2 lines of legend:\n%s", len(lines), out)
	}
	head := strings.Fields(lines[0])
	wantHead := []string{"setting", "retriever", "chunks", "p10", "p50", "p90", "mean", "R@1", "P@1", "IoU@1", "ΔR@1", "(95%)", "ΔIoU@1", "(95%)",
		"R@3", "P@3", "IoU@3", "ΔR@3", "(95%)", "ΔIoU@3", "(95%)"}
	if !slices.Equal(head, wantHead) {
		t.Errorf("header %q, want %q", head, wantHead)
	}
	for i, r := range rep.Rows {
		f := strings.Fields(lines[1+i])
		label := strings.Fields(r.Setting)
		if !slices.Equal(f[:len(label)], label) {
			t.Fatalf("row %d starts %q, want the setting %q", i, f, r.Setting)
		}
		f = f[len(label):]
		want := []string{"bm25", fmt.Sprint(r.Sizes.Chunks), fmt.Sprint(r.Sizes.P10), fmt.Sprint(r.Sizes.P50), fmt.Sprint(r.Sizes.P90),
			fmt.Sprintf("%.0f", r.Sizes.Mean)}
		for j := range rep.K {
			m := r.Mean[j]
			want = append(want, fmt.Sprintf("%.1f", 100*m.Recall), fmt.Sprintf("%.2f", 100*m.Precision), fmt.Sprintf("%.2f", 100*m.IoU))
			if i > 0 {
				d := r.Diff[j]
				want = append(want, fmt.Sprintf("%+.1f", 100*d.Recall.Mean), fmt.Sprintf("±%.1f", 100**d.Recall.Half),
					fmt.Sprintf("%+.2f", 100*d.IoU.Mean), fmt.Sprintf("±%.2f", 100**d.IoU.Half))
			}
		}
		if !slices.Equal(f, want) {
			t.Errorf("row %d = %q, want %q", i, f, want)
		}
	}
	if !strings.HasPrefix(lines[3], "7 questions;") || !strings.Contains(lines[4], "95% interval") {
		t.Errorf("legend %q", lines[3:])
	}
}

// TestEvalMisses lists the questions not fully found, the least covered
// first, with their references and best chunk.
func TestEvalMisses(t *testing.T) {
	dir, questions := evalFixture(t)
	code, out, errOut := runAppEnv(t, registry.Default().Entries(), noEmbedder, "eval", "-misses", "-k", "1", "-questions", questions, dir)
	if code != exitOK {
		t.Fatalf("chunk eval -misses = %d: %s", code, errOut)
	}
	rep, _ := evalJSON(t, noEmbedder, "-k", "1", "-questions", questions, dir)
	var missed []string
	for _, q := range rep.Rows[0].Questions {
		if q.Scores[0].Recall < 1 {
			missed = append(missed, q.ID)
		}
	}
	if len(missed) == 0 {
		t.Fatal("the fixture has no miss at k=1")
	}
	_, misses, ok := strings.Cut(out, "\nmisses of markdown (bm25): ")
	if !ok || !strings.HasPrefix(misses, fmt.Sprintf("%d of 7 questions with recall@1 below 100%%", len(missed))) {
		t.Fatalf("no misses header:\n%s", out)
	}
	// "nothing" shares no term with any chunk: recall 0, listed first,
	// with no chunk retrieved.
	blocks := strings.Split(strings.TrimSpace(misses), "\n\n")[1:]
	if len(blocks) != len(missed) || !strings.HasPrefix(blocks[0], "nothing  recall@1 0.0%  zebra xylophone\n  reference  alpha.md:3  Every invoice has a number.\n  best chunk none retrieved") {
		t.Fatalf("misses:\n%s", misses)
	}
	for _, b := range blocks[1:] {
		if !strings.Contains(b, "\n  reference  ") || !strings.Contains(b, "\n  best chunk #1  ") {
			t.Errorf("a miss without its reference or best chunk:\n%s", b)
		}
	}
}

// TestEvalStoredChunks: -chunks scores a stored collection as the chunks
// it holds, also one a peer wrote (no hash); its spans must be text of
// DIR's files.
func TestEvalStoredChunks(t *testing.T) {
	dir, questions := evalFixture(t)
	stored := filepath.Join(t.TempDir(), "chunks.jsonl")
	if code, _, errOut := runApp(t, registry.Default().Entries(), "split", "-max-char", "150", "-o", stored, dir); code != exitOK {
		t.Fatal(errOut)
	}
	chunked, _ := evalJSON(t, noEmbedder, "-questions", questions, "-max-char", "150", dir)
	// A peer's collection: content, "file" and span, no hash.
	c, err := chunking.Load(stored)
	if err != nil {
		t.Fatal(err)
	}
	var peer bytes.Buffer
	for _, ch := range c.Chunks() {
		sp := ch.Span()
		fmt.Fprintf(&peer, `{"content":%q,"metadata":{"file":%q},"span":{"start":%d,"end":%d,"first_line":%d,"last_line":%d}}`+"\n",
			ch.Content(), ch.Get("file", ""), sp.Start, sp.End, sp.FirstLine, sp.LastLine)
	}
	peerFile := filepath.Join(t.TempDir(), "peer.jsonl")
	if err := os.WriteFile(peerFile, peer.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ := evalJSON(t, noEmbedder, "-questions", questions, "-chunks", stored, "-chunks", peerFile, dir)
	if len(rep.Rows) != 2 || rep.Rows[0].Setting != stored || rep.Rows[0].Stored != stored || rep.Rows[1].Setting != peerFile {
		t.Fatalf("rows %+v", rep.Rows)
	}
	for _, r := range rep.Rows {
		if r.Sizes != chunked.Rows[0].Sizes || !slices.Equal(r.Mean, chunked.Rows[0].Mean) {
			t.Errorf("%s: %+v %+v, chunked: %+v %+v", r.Setting, r.Sizes, r.Mean, chunked.Rows[0].Sizes, chunked.Rows[0].Mean)
		}
	}
	// A span past its file's end is refused.
	bad := strings.Replace(peer.String(), `"end":`, `"end":9999`, 1)
	if err := os.WriteFile(peerFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runAppEnv(t, registry.Default().Entries(), noEmbedder, "eval", "-questions", questions, "-chunks", peerFile, dir)
	if code != exitFailure || !strings.Contains(errOut, "are not a range of") {
		t.Errorf("a span past the file: %d %s", code, errOut)
	}
}

// TestEvalChromaCSV reads Chroma's CSV (character offsets) over DIR's
// files and scores as the same questions in JSON Lines.
func TestEvalChromaCSV(t *testing.T) {
	dir, questions := evalFixture(t)
	qs := readQuestions(t, questions)
	var csv strings.Builder
	csv.WriteString("question,references,corpus_id\n")
	for _, q := range qs {
		if strings.Contains(q.References[0].File, "/") {
			continue // Chroma's corpora are files of the folder itself
		}
		b, _ := os.ReadFile(filepath.Join(dir, q.References[0].File))
		var refs []string
		for _, r := range q.References {
			start := len([]rune(string(b[:r.Start])))
			refs = append(refs, fmt.Sprintf(`{""content"": ""%s"", ""start_index"": %d, ""end_index"": %d}`, r.Content, start, start+len([]rune(r.Content))))
		}
		fmt.Fprintf(&csv, "%q,\"[%s]\",%s\n", q.Question, strings.Join(refs, ", "), strings.TrimSuffix(q.References[0].File, ".md"))
	}
	path := filepath.Join(t.TempDir(), "questions_df.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ := evalJSON(t, noEmbedder, "-questions", path, dir)
	all, _ := evalJSON(t, noEmbedder, "-questions", questions, dir)
	byID := map[string]evalQuestionJSON{}
	for _, q := range all.Rows[0].Questions {
		byID[q.ID] = q
	}
	if len(rep.Rows[0].Questions) != 5 {
		t.Fatalf("%d questions from the CSV, want 5", len(rep.Rows[0].Questions))
	}
	for i, q := range rep.Rows[0].Questions {
		if q.ID != fmt.Sprintf("chroma-%d", i) {
			t.Errorf("question %d has id %s", i, q.ID)
		}
	}
	// Same texts, same references: the same retrieval, in bytes.
	var csvScores, jsonScores []eval.Scores
	for _, q := range rep.Rows[0].Questions {
		csvScores = append(csvScores, q.Scores...)
	}
	for _, q := range all.Rows[0].Questions {
		if q.ID != "formats" && q.ID != "limits" {
			jsonScores = append(jsonScores, q.Scores...)
		}
	}
	if !slices.Equal(csvScores, jsonScores) {
		t.Errorf("CSV scores %v, JSON Lines' %v", csvScores, jsonScores)
	}
}

// TestEvalLocated: references given by their content alone are found in
// their files and score as the same references with offsets do; a
// question whose reference is not found exactly once is left out, with a
// note on stderr and in the JSON's "skipped".
func TestEvalLocated(t *testing.T) {
	dir, questions := evalFixture(t)
	qs := readQuestions(t, questions)
	var b bytes.Buffer
	for _, q := range qs {
		for i := range q.References {
			q.References[i].Start, q.References[i].End = 0, 0
		}
		line, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	b.WriteString(`{"id":"twice","question":"which team?","references":[{"file":"alpha.md","content":"ledger"}]}` + "\n")
	b.WriteString(`{"id":"gone","question":"which team?","references":[{"file":"alpha.md","content":"not in the file"}]}` + "\n")
	located := filepath.Join(t.TempDir(), "located.jsonl")
	if err := os.WriteFile(located, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, errOut := evalJSON(t, noEmbedder, "-questions", located, dir)
	want, _ := evalJSON(t, noEmbedder, "-questions", questions, dir)
	if rep.Questions != len(qs) || !slices.EqualFunc(rep.Rows[0].Questions, want.Rows[0].Questions, func(a, b evalQuestionJSON) bool {
		return a.ID == b.ID && slices.Equal(a.Scores, b.Scores)
	}) {
		t.Errorf("located references score %+v, want those with offsets %+v", rep.Rows[0].Questions, want.Rows[0].Questions)
	}
	notes := []string{"question twice left out: its reference occurs 2 times in alpha.md", "question gone left out: its reference is not in alpha.md"}
	if !slices.Equal(rep.Skipped, notes) {
		t.Errorf("skipped %q, want %q", rep.Skipped, notes)
	}
	for _, n := range notes {
		if !strings.Contains(errOut, "chunk eval: "+n+"\n") {
			t.Errorf("stderr lacks %q:\n%s", n, errOut)
		}
	}
}

// TestEvalDense: with the embedder configured, dense and hybrid rows
// follow, ranked by the embeddings the endpoint returns.
func TestEvalDense(t *testing.T) {
	dir, questions := evalFixture(t)
	srv := embedtest.Start(t, embedtest.Config{Dims: 8})
	environ := map[string]string{"CHUNKSTREAM_EMBED_URL": srv.URL(), "CHUNKSTREAM_EMBED_MODEL": "m"}
	rep, errOut := evalJSON(t, environ, "-questions", questions, "-k", "2", "-max-char", "150", dir, "-try", "-max-char 300")
	if errOut != "" {
		t.Errorf("stderr %q, want nothing", errOut)
	}
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Retriever+" "+r.Setting)
	}
	want := []string{"bm25 markdown -max-char 150", "bm25 markdown -max-char 300", "dense markdown -max-char 150",
		"dense markdown -max-char 300", "hybrid markdown -max-char 150", "hybrid markdown -max-char 300"}
	if !slices.Equal(names, want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	if rep.Rows[2].Diff != nil || rep.Rows[3].Diff == nil {
		t.Error("the dense rows are not compared with the first dense row")
	}
	// The dense ranking is the cosine of the endpoint's vectors.
	ps, _ := splitPassages(t, dir, "-max-char", "150")
	qs := readQuestions(t, questions)
	for i, q := range rep.Rows[2].Questions {
		qv := embedtest.Vector("m", qs[i].Question, 8)
		best, bestScore := -1, math.Inf(-1)
		for j, p := range ps {
			var s float64
			for d, x := range embedtest.Vector("m", p.Text, 8) {
				s += float64(x) * float64(qv[d])
			}
			if s > bestScore {
				best, bestScore = j, s
			}
		}
		if got := q.Retrieved[0]; got != (evalSpan{ps[best].File, ps[best].Start, ps[best].End}) {
			t.Errorf("question %s: dense top %+v, want the passage of the highest cosine %+v", q.ID, got, ps[best])
		}
	}
	if st := srv.Stats(); st.Answered == 0 || st.Inputs < len(ps)+len(qs) {
		t.Errorf("embedder stats %+v: want every passage and question embedded", st)
	}
	// An endpoint that fails is an error, not a row of zeros.
	srv.SetStatus(401)
	code, _, errOut := runAppEnv(t, registry.Default().Entries(), environ, "eval", "-questions", questions, dir)
	if code != exitFailure || !strings.Contains(errOut, "embed passages") {
		t.Errorf("embedder refusing: %d %q", code, errOut)
	}
}

func TestEvalErrors(t *testing.T) {
	dir, questions := evalFixture(t)
	otherDir := filepath.Join(t.TempDir(), "edited")
	if err := os.CopyFS(otherDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	alpha, err := os.ReadFile(filepath.Join(dir, "alpha.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(otherDir, "alpha.md"), bytes.ReplaceAll(alpha, []byte("Invoices"), []byte("Receipts")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		code    int
		stderr  string
	}{
		{"no questions", noEmbedder, []string{dir}, exitUsage, "-questions FILE is required"},
		{"no DIR", noEmbedder, []string{"-questions", questions}, exitUsage, "want exactly one DIR, got 0"},
		{"bad k", noEmbedder, []string{"-questions", questions, "-k", "5,0", dir}, exitUsage, `-k: "0" is not a positive integer`},
		{"json and misses", noEmbedder, []string{"-questions", questions, "-json", "-misses", dir}, exitUsage, "exclude each other"},
		{"chunks and try", noEmbedder, []string{"-questions", questions, "-chunks", "x.jsonl", "-try", "-max-char 9", dir}, exitUsage, "-chunks scores stored chunks"},
		{"chunks and chunker flags", noEmbedder, []string{"-questions", questions, "-chunks", "x.jsonl", "-max-char", "9", dir}, exitUsage, "-chunks scores stored chunks"},
		{"try with another flag", noEmbedder, []string{"-questions", questions, "-try", "-k 3", dir}, exitUsage, `-try "-k 3": flag provided but not defined: -k`},
		{"try with an argument", noEmbedder, []string{"-questions", questions, "-try", "-max-char 9 docs", dir}, exitUsage, `"docs" is not a chunker flag`},
		{"try with a bad value", noEmbedder, []string{"-questions", questions, "-try", "-max-char -3", dir}, exitUsage, "max_char"},
		{"try of another chunker's flag", noEmbedder, []string{"-questions", questions, "-try", "-chunker twostep -max-char 9", dir}, exitUsage, "does not apply to chunker twostep"},
		{"a folder chunker", noEmbedder, []string{"-questions", questions, "-chunker", "email", dir}, exitUsage, "chunker email reads whole folders"},
		{"DIR a file", noEmbedder, []string{"-questions", questions, questions}, exitUsage, "is not a folder"},
		{"questions missing", noEmbedder, []string{"-questions", questions + ".x", dir}, exitFailure, "no such file"},
		{"reference not in DIR", noEmbedder, []string{"-questions", questions, t.TempDir()}, exitFailure, "question retention: open"},
		{"reference not the text", noEmbedder, []string{"-questions", questions, otherDir}, exitFailure, "question retention: bytes ["},
		{"embedder without model", map[string]string{"CHUNKSTREAM_EMBED_URL": "http://127.0.0.1:1"}, []string{"-questions", questions, dir}, exitUsage, "CHUNKSTREAM_EMBED_MODEL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAppEnv(t, registry.Default().Entries(), tc.environ, append([]string{"eval"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) || out != "" {
				t.Errorf("chunk eval %q = %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.stderr)
			}
		})
	}
}

// TestEvalEmbedderConfig: the embedder is the worker's configuration,
// read from CHUNKSTREAM_EMBED_* (embed.Config's env tags).
func TestEvalEmbedderConfig(t *testing.T) {
	a := &app{environ: map[string]string{"CHUNKSTREAM_EMBED_URL": "http://127.0.0.1:1/v1", "CHUNKSTREAM_EMBED_MODEL": "m", "CHUNKSTREAM_EMBED_BATCH": "7"}}
	c, err := a.evalEmbedder()
	if err != nil || c == nil || c.Model() != "m" {
		t.Fatalf("evalEmbedder = %v, %v", c, err)
	}
	a.environ["CHUNKSTREAM_EMBED_BATCH"] = "0"
	if _, err := a.evalEmbedder(); err == nil || !strings.Contains(err.Error(), "CHUNKSTREAM_EMBED_BATCH") {
		t.Errorf("batch 0: %v, want an error naming the variable", err)
	}
	var _ *embed.Client = c
}
