package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/eval"
	"github.com/chunkstream/chunkstream/worker/embed"
)

const evalHead = `
usage: chunk eval -questions FILE [-k 5,10] [-json | -misses] [-try 'FLAGS']... [chunker flags] DIR
       chunk eval -questions FILE [-k 5,10] [-json | -misses] -chunks FILE... DIR

Chunks DIR as chunk split does, retrieves the top k chunks for every question
by BM25 and prints, per setting, the chunk sizes and recall, precision and IoU
at k in characters (docs/chunkers.md, "Measuring retrieval"). Each -try adds a
setting; later rows show their difference to the first with its 95% interval.
CHUNKSTREAM_EMBED_URL and CHUNKSTREAM_EMBED_MODEL add dense and hybrid rows.
`

// Retriever names, as the rows show them.
const (
	retrieverBM25   = "bm25"
	retrieverDense  = "dense"
	retrieverHybrid = "hybrid"
)

// evalSetting is what one row scores: chunks of a chunker configuration,
// or a stored collection.
type evalSetting struct {
	label   string
	entry   registry.Entry
	chunker chunking.Chunker
	options map[string]any // resolved
	stored  string         // -chunks FILE
	jobs    []job
}

// namedRetriever is a retriever and the name the rows show.
type namedRetriever struct {
	name string
	r    eval.Retriever
}

// evalRow is one row: a setting's passages ranked by one retriever.
type evalRow struct {
	setting   *evalSetting
	retriever string
	sizes     eval.Sizes
	passages  []eval.Passage
	res       *eval.Result
}

func (a *app) eval(ctx context.Context, args []string) error {
	fs := a.newFlagSet("eval", evalHead, `Chunks DIR, retrieves every question's top k chunks and prints their sizes and span scores per setting.
`+chunkerFlagsNote, "questions", "k", "json", "misses", "try", "chunks", "chunker")
	cf := chunkflags.Register(fs, a.entries, "markdown")
	qpath := fs.String("questions", "", "the question set `FILE`: JSON Lines, or Chroma's CSV (.csv) over DIR's files")
	kList := fs.String("k", "5", "comma-separated cut-offs `LIST`: chunks retrieved per question")
	asJSON := fs.Bool("json", false, "print the rows as JSON, with every question's retrieved spans and scores")
	misses := fs.Bool("misses", false, "after the table, the questions whose recall at the smallest k is below 1: the question, its references and the best chunk")
	var tries, stored []string
	fs.Func("try", "another row: chunker `FLAGS` added over the others (repeatable)", func(s string) error { tries = append(tries, s); return nil })
	fs.Func("chunks", "score a stored collection `FILE` (JSONL with spans and \"file\") instead of chunking (repeatable)", func(s string) error { stored = append(stored, s); return nil })
	dirs, err := parseInterspersed(fs, args) // flags may follow DIR
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return envflag.Usagef("want exactly one DIR, got %d arguments", len(dirs))
	}
	if *qpath == "" {
		return envflag.Usagef("-questions FILE is required")
	}
	ks, err := parseKs(*kList)
	if err != nil {
		return envflag.Usagef("-k: %v", err)
	}
	if *asJSON && *misses {
		return envflag.Usagef("-json and -misses exclude each other (the JSON holds every question's results)")
	}
	settings, err := a.evalSettings(fs, cf, tries, stored)
	if err != nil {
		return err
	}
	emb, err := a.evalEmbedder()
	if err != nil {
		return err
	}
	if emb == nil {
		fmt.Fprintln(a.stderr, "chunk eval: dense and hybrid retrieval off: CHUNKSTREAM_EMBED_URL is not set")
	}

	dir := dirs[0]
	if info, err := os.Stat(dir); err != nil {
		return err
	} else if !info.IsDir() {
		return envflag.Usagef("DIR %s is not a folder", dir)
	}
	corpus := &evalCorpus{dir: dir, files: map[string][]byte{}}
	questions, skipped, err := readEvalQuestions(*qpath, corpus)
	if err != nil {
		return err
	}
	for _, n := range skipped {
		fmt.Fprintln(a.stderr, "chunk eval:", n)
	}
	for _, s := range settings {
		if err := a.listEvalJobs(ctx, s, corpus, questions); err != nil {
			return err
		}
	}

	if emb != nil {
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = emb.Run(runCtx) }()
		defer func() { stop(); <-done }()
	}
	var rows []*evalRow
	for _, s := range settings {
		rs, err := a.evalSetting(ctx, s, corpus, questions, emb, ks)
		if err != nil {
			return err
		}
		rows = append(rows, rs...)
	}
	// Rows by retriever, settings in order within each: every group's
	// first row is what the others are compared with.
	order := []string{retrieverBM25, retrieverDense, retrieverHybrid}
	slices.SortStableFunc(rows, func(x, y *evalRow) int {
		return slices.Index(order, x.retriever) - slices.Index(order, y.retriever)
	})
	if *asJSON {
		return writeEvalJSON(a.stdout, rows, len(questions), skipped)
	}
	writeEvalTable(a.stdout, rows, len(questions))
	if *misses {
		writeMisses(a.stdout, rows, questions, corpus.files)
	}
	return nil
}

// parseKs reads -k: positive integers, comma-separated.
func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range envflag.SplitList(s) {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, errors.New("no cut-off given")
	}
	slices.Sort(ks)
	return slices.Compact(ks), nil
}

// evalSettings returns the rows' settings: the chunker flags of fs, then
// each -try over them; or the -chunks collections, which exclude both.
func (a *app) evalSettings(fs *flag.FlagSet, cf *chunkflags.Set, tries, stored []string) ([]*evalSetting, error) {
	if len(stored) > 0 {
		chunker := flag.NewFlagSet("", flag.ContinueOnError) // -chunker and the chunker flags alone
		chunkflags.Register(chunker, a.entries, "markdown")
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || chunker.Lookup(f.Name) != nil })
		if set || len(tries) > 0 {
			return nil, envflag.Usagef("-chunks scores stored chunks: it takes no -try and no chunker flags")
		}
		out := make([]*evalSetting, len(stored))
		for i, p := range stored {
			out[i] = &evalSetting{label: p, stored: p}
		}
		return out, nil
	}
	if _, _, err := cf.Chunker(); err != nil {
		return nil, envflag.Usagef("%v", err)
	}
	out := make([]*evalSetting, 0, 1+len(tries))
	for _, try := range append([]string{""}, tries...) {
		s, err := a.trySetting(fs, try)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// trySetting returns the setting of the chunker flags set on base with
// those of try (words separated by blanks) added over them, parsed by a
// chunker flag set of its own.
func (a *app) trySetting(base *flag.FlagSet, try string) (*evalSetting, error) {
	fs := flag.NewFlagSet("-try", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := chunkflags.Register(fs, a.entries, "markdown")
	var err error
	base.Visit(func(f *flag.Flag) {
		if fs.Lookup(f.Name) != nil && err == nil {
			err = fs.Set(f.Name, f.Value.String())
		}
	})
	if err != nil {
		return nil, envflag.Usagef("%v", err)
	}
	// usage names the -try in an error (the base flags are the command's).
	usage := func(err error) error {
		if try == "" {
			return envflag.Usagef("%v", err)
		}
		msg := err.Error()
		if errors.Is(err, envflag.ErrUsage) {
			msg = strings.TrimPrefix(msg, envflag.ErrUsage.Error()+": ")
		}
		return envflag.Usagef("-try %q: %s", try, msg)
	}
	if err := fs.Parse(strings.Fields(try)); err != nil {
		return nil, usage(err)
	}
	if fs.NArg() > 0 {
		return nil, usage(fmt.Errorf("%q is not a chunker flag", fs.Arg(0)))
	}
	entry, raw, err := cf.Chunker()
	if err != nil {
		return nil, usage(err)
	}
	if entry.ChunkFolder != nil {
		return nil, usage(fmt.Errorf("chunker %s reads whole folders: its chunks have no byte range of a file to score", entry.Name))
	}
	c, err := entry.New(raw)
	if err != nil {
		return nil, usage(err)
	}
	resolved, err := entry.Resolve(raw)
	if err != nil {
		return nil, usage(err)
	}
	label := []string{entry.Name}
	fs.Visit(func(f *flag.Flag) {
		switch b, ok := f.Value.(interface{ IsBoolFlag() bool }); {
		case f.Name == "chunker":
		case ok && b.IsBoolFlag():
			label = append(label, "-"+f.Name+"="+f.Value.String())
		default:
			label = append(label, "-"+f.Name, f.Value.String())
		}
	})
	return &evalSetting{label: strings.Join(label, " "), entry: entry, chunker: c, options: resolved}, nil
}

// evalEmbedder returns the embeddings client that CHUNKSTREAM_EMBED_*
// configure, as for the worker and producer search (worker/embed's
// Config), or nil when CHUNKSTREAM_EMBED_URL is unset.
func (a *app) evalEmbedder() (*embed.Client, error) {
	var cfg embed.Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: a.environ}); err != nil {
		return nil, envflag.Usagef("environment: %v", err)
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, envflag.Usagef("%v", envflag.Explain(err, &cfg, nil))
	}
	return embed.New(cfg, embed.Options{})
}

// evalCorpus holds DIR's files read so far, by their slash-separated
// path relative to DIR.
type evalCorpus struct {
	dir   string
	files map[string][]byte
}

// file returns the bytes of the file name relative to the corpus folder.
func (c *evalCorpus) file(name string) ([]byte, error) {
	if b, ok := c.files[name]; ok {
		return b, nil
	}
	p := filepath.FromSlash(name)
	if !filepath.IsLocal(p) {
		return nil, fmt.Errorf("%q is not a path inside %s", name, c.dir)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, p))
	if err != nil {
		return nil, err
	}
	c.files[name] = b
	return b, nil
}

// readEvalQuestions reads the question set at path (Chroma's CSV by the
// extension .csv, else JSON Lines), locates the references given by
// their content alone (eval.Locate: the questions whose reference is not
// found exactly once are left out, each with a note) and checks every
// reference against the corpus files.
func readEvalQuestions(path string, corpus *evalCorpus) ([]eval.Question, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var qs []eval.Question
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		qs, err = eval.ReadChromaCSV(f, corpus.file)
	} else {
		qs, err = eval.ReadQuestions(f)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	qs, skipped := eval.Locate(qs, corpus.file)
	if len(qs) == 0 {
		return nil, skipped, fmt.Errorf("%s: %w: no questions", path, eval.ErrQuestions)
	}
	for _, q := range qs {
		for _, r := range q.References {
			if _, err := corpus.file(r.File); err != nil {
				return nil, skipped, fmt.Errorf("%s: %w: question %s: %v", path, eval.ErrQuestions, q.ID, err)
			}
		}
	}
	if err := eval.CheckReferences(qs, corpus.files); err != nil {
		return nil, skipped, fmt.Errorf("%s: %w", path, err)
	}
	return qs, skipped, nil
}

// listEvalJobs lists the files a chunking setting reads in the corpus
// folder, as chunk split lists them, with their bytes, and checks that
// they hold every reference's file.
func (a *app) listEvalJobs(ctx context.Context, s *evalSetting, corpus *evalCorpus, qs []eval.Question) error {
	if s.stored != "" {
		return nil
	}
	exts, err := s.entry.WalkExtensions(s.options)
	if err != nil {
		return err
	}
	jobs, err := a.listJobs(ctx, "eval", s.entry, corpus.dir, exts)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for i, j := range jobs {
		if jobs[i].content, err = corpus.file(j.name); err != nil {
			return err
		}
		names[j.name] = true
	}
	for _, q := range qs {
		for _, r := range q.References {
			if !names[r.File] {
				return fmt.Errorf("%w: question %s: %s is not one of the files chunker %s reads in %s (extensions %s)",
					eval.ErrQuestions, q.ID, r.File, s.entry.Name, corpus.dir, strings.Join(exts, ", "))
			}
		}
	}
	s.jobs = jobs
	return nil
}

// evalSetting chunks (or loads) one setting's chunks and evaluates them
// with every retriever: its rows.
func (a *app) evalSetting(ctx context.Context, s *evalSetting, corpus *evalCorpus, qs []eval.Question, emb *embed.Client, ks []int) ([]*evalRow, error) {
	var chunks []chunking.Chunk
	if s.stored != "" {
		c, err := chunking.Load(s.stored)
		if err != nil {
			return nil, err
		}
		chunks = c.Chunks()
	} else {
		err := runOrdered(ctx, s.jobs, runtime.GOMAXPROCS(0),
			func(j job) result { return chunkJob(ctx, s.entry, s.chunker, j) },
			func(j job, r result) error {
				for _, wn := range r.warnings {
					fmt.Fprintf(a.stderr, "chunk eval: warning: %s: %s\n", s.label, wn)
				}
				if r.err != nil {
					return fmt.Errorf("%s: %s: %w", s.label, j.path, r.err)
				}
				chunks = append(chunks, r.chunks...)
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	passages, err := eval.Passages(chunks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.label, err)
	}
	for _, p := range passages {
		if _, err := corpus.file(p.File); err != nil {
			return nil, fmt.Errorf("%s: %w", s.label, err)
		}
	}
	if err := eval.CheckPassages(passages, corpus.files); err != nil {
		return nil, fmt.Errorf("%s: %w", s.label, err)
	}
	sizes := eval.SizesOf(passages)
	bm, err := eval.NewBM25(passages)
	if err != nil {
		return nil, err
	}
	retrievers := []namedRetriever{{retrieverBM25, bm}}
	if emb != nil {
		dense, err := eval.NewDense(ctx, emb, passages, 1024)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.label, err)
		}
		// The prefetch order of producer search: dense, then BM25.
		retrievers = append(retrievers, namedRetriever{retrieverDense, dense}, namedRetriever{retrieverHybrid, eval.Hybrid{dense, bm}})
	}
	var rows []*evalRow
	for _, r := range retrievers {
		res, err := eval.Evaluate(ctx, corpus.files, passages, qs, r.r, ks)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", s.label, r.name, err)
		}
		rows = append(rows, &evalRow{setting: s, retriever: r.name, sizes: sizes, passages: passages, res: res})
	}
	return rows, nil
}

// diff is a paired difference of one score between a row and its
// group's first row, with the half-width of its 95% interval (+Inf with
// fewer than two questions).
type diff struct{ mean, half float64 }

// diffs returns row's differences in recall and IoU at every k from
// first's (eval.Paired).
func diffs(first, row *evalRow) (recall, iou []diff) {
	for _, k := range row.res.Ks {
		for _, m := range []struct {
			pick func(eval.Scores) float64
			out  *[]diff
		}{{func(s eval.Scores) float64 { return s.Recall }, &recall}, {func(s eval.Scores) float64 { return s.IoU }, &iou}} {
			a, _ := first.res.PerQuestion(k, m.pick)
			b, _ := row.res.PerQuestion(k, m.pick)
			mean, half := eval.Paired(a, b)
			*m.out = append(*m.out, diff{mean, half})
		}
	}
	return recall, iou
}

// groupFirst returns, for every row, the first row of its retriever.
func groupFirst(rows []*evalRow) []*evalRow {
	first := map[string]*evalRow{}
	out := make([]*evalRow, len(rows))
	for i, r := range rows {
		if _, ok := first[r.retriever]; !ok {
			first[r.retriever] = r
		}
		out[i] = first[r.retriever]
	}
	return out
}

// writeEvalTable prints the rows as one table, a blank line between
// retrievers, and a line saying how to read it.
func writeEvalTable(w io.Writer, rows []*evalRow, questions int) {
	ks := rows[0].res.Ks
	head := []string{"setting", "retriever", "chunks", "p10", "p50", "p90", "mean"}
	for _, k := range ks {
		n := strconv.Itoa(k)
		head = append(head, "R@"+n, "P@"+n, "IoU@"+n, "ΔR@"+n+" (95%)", "ΔIoU@"+n+" (95%)")
	}
	table := [][]string{head}
	firsts := groupFirst(rows)
	for i, r := range rows {
		if i > 0 && r.retriever != rows[i-1].retriever {
			table = append(table, nil)
		}
		sz := r.sizes
		line := []string{r.setting.label, r.retriever, strconv.Itoa(sz.Chunks), strconv.Itoa(sz.P10), strconv.Itoa(sz.P50),
			strconv.Itoa(sz.P90), fmt.Sprintf("%.0f", sz.Mean)}
		var dr, di []diff
		if firsts[i] != r {
			dr, di = diffs(firsts[i], r)
		}
		for j := range ks {
			m := r.res.Mean[j]
			line = append(line, pct(m.Recall, 1), pct(m.Precision, 2), pct(m.IoU, 2))
			if dr == nil {
				line = append(line, "", "")
				continue
			}
			line = append(line, dr[j].format(1), di[j].format(2))
		}
		table = append(table, line)
	}
	writeColumns(w, table, 2) // setting and retriever left-aligned
	fmt.Fprintf(w, "%d questions; R, P, IoU: recall, precision and IoU at k, %% of characters; sizes in characters;\n"+
		"Δ: difference to the retriever's first row in points, ± the half-width of its 95%% interval (real when |Δ| exceeds it)\n", questions)
}

// pct formats a fraction as a percentage with prec decimals.
func pct(x float64, prec int) string { return strconv.FormatFloat(100*x, 'f', prec, 64) }

// format writes a difference in percentage points: "+1.3 ±0.8".
func (d diff) format(prec int) string {
	s := strconv.FormatFloat(100*d.mean, 'f', prec, 64)
	if d.mean >= 0 {
		s = "+" + s
	}
	if math.IsInf(d.half, 0) {
		return s + " ±?"
	}
	return s + " ±" + strconv.FormatFloat(100*d.half, 'f', prec, 64)
}

// writeColumns prints table's rows (nil: a blank line) in columns two
// spaces apart, the first left columns left-aligned, the others right.
func writeColumns(w io.Writer, table [][]string, left int) {
	var width []int
	for _, row := range table {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// The JSON of -json: the table's rows, each with its questions.
type (
	evalReport struct {
		Questions int `json:"questions"`
		// Skipped are the notes of the questions left out, whose
		// reference was not found exactly once by its content.
		Skipped []string      `json:"skipped,omitempty"`
		K       []int         `json:"k"`
		Rows    []evalRowJSON `json:"rows"`
	}
	evalRowJSON struct {
		Setting   string         `json:"setting"`
		Chunker   string         `json:"chunker,omitempty"`
		Options   map[string]any `json:"options,omitempty"`
		Stored    string         `json:"chunks_file,omitempty"`
		Retriever string         `json:"retriever"`
		Sizes     eval.Sizes     `json:"sizes"`
		Mean      []eval.Scores  `json:"mean"`
		// Diff holds, after a retriever's first row, the difference to
		// it at every k.
		Diff      []evalDiffJSON     `json:"diff,omitempty"`
		Questions []evalQuestionJSON `json:"questions"`
	}
	evalDiffJSON struct {
		K      int          `json:"k"`
		Recall intervalJSON `json:"recall"`
		IoU    intervalJSON `json:"iou"`
	}
	intervalJSON struct {
		Mean float64  `json:"mean"`
		Half *float64 `json:"half"` // null with fewer than two questions
	}
	evalQuestionJSON struct {
		ID        string        `json:"id"`
		Retrieved []evalSpan    `json:"retrieved"`
		Scores    []eval.Scores `json:"scores"`
	}
	evalSpan struct {
		File  string `json:"file"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	}
)

func (d diff) json() intervalJSON {
	j := intervalJSON{Mean: d.mean}
	if !math.IsInf(d.half, 0) {
		j.Half = &d.half
	}
	return j
}

// writeEvalJSON prints the rows as one JSON object.
func writeEvalJSON(w io.Writer, rows []*evalRow, questions int, skipped []string) error {
	rep := evalReport{Questions: questions, Skipped: skipped, K: rows[0].res.Ks}
	firsts := groupFirst(rows)
	for i, r := range rows {
		s := r.setting
		row := evalRowJSON{Setting: s.label, Options: s.options, Stored: s.stored, Retriever: r.retriever, Sizes: r.sizes, Mean: r.res.Mean}
		if s.stored == "" {
			row.Chunker = s.entry.Name
		}
		if firsts[i] != r {
			dr, di := diffs(firsts[i], r)
			for j, k := range r.res.Ks {
				row.Diff = append(row.Diff, evalDiffJSON{K: k, Recall: dr[j].json(), IoU: di[j].json()})
			}
		}
		for _, q := range r.res.Questions {
			qj := evalQuestionJSON{ID: q.ID, Scores: q.Scores, Retrieved: make([]evalSpan, len(q.Retrieved))}
			for j, id := range q.Retrieved {
				p := r.passages[id]
				qj.Retrieved[j] = evalSpan{p.File, p.Start, p.End}
			}
			row.Questions = append(row.Questions, qj)
		}
		rep.Rows = append(rep.Rows, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// excerptRunes bounds the texts -misses prints.
const excerptRunes = 200

// writeMisses prints, for every row, the questions whose recall at the
// smallest k is below 1, the least covered first: each with its recall,
// its references and the best of its retrieved chunks (the one covering
// most of the references, the higher ranked on a tie: the first when none
// covers any).
func writeMisses(w io.Writer, rows []*evalRow, qs []eval.Question, files map[string][]byte) {
	lines := lineIndex{files: files, starts: map[string][]int{}}
	for _, r := range rows {
		k := r.res.Ks[0]
		var miss []int
		for i, q := range r.res.Questions {
			if q.Scores[0].Recall < 1 {
				miss = append(miss, i)
			}
		}
		slices.SortStableFunc(miss, func(x, y int) int {
			return cmp.Compare(r.res.Questions[x].Scores[0].Recall, r.res.Questions[y].Scores[0].Recall)
		})
		fmt.Fprintf(w, "\nmisses of %s (%s): %d of %d questions with recall@%d below 100%%\n", r.setting.label, r.retriever, len(miss), len(qs), k)
		for _, i := range miss {
			q, qr := qs[i], r.res.Questions[i]
			fmt.Fprintf(w, "\n%s  recall@%d %s%%  %s\n", q.ID, k, pct(qr.Scores[0].Recall, 1), excerpt(q.Question, excerptRunes))
			for _, ref := range q.References {
				fmt.Fprintf(w, "  reference  %s  %s\n", lines.where(ref.File, ref.Start, ref.End), excerpt(ref.Content, excerptRunes))
			}
			top := qr.Retrieved[:min(k, len(qr.Retrieved))]
			if len(top) == 0 {
				fmt.Fprintln(w, "  best chunk none retrieved")
				continue
			}
			best, cover := 0, -1.0
			for j, id := range top {
				if s := eval.Score(files, q.References, []eval.Passage{r.passages[id]}); s.Recall > cover {
					best, cover = j, s.Recall
				}
			}
			p := r.passages[top[best]]
			fmt.Fprintf(w, "  best chunk #%d  %s  %s\n", best+1, lines.where(p.File, p.Start, p.End), excerpt(p.Text, excerptRunes))
		}
	}
}

// excerpt returns text on one line, blanks collapsed, cut after n runes.
func excerpt(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// lineIndex finds the lines of byte ranges of the corpus files.
type lineIndex struct {
	files  map[string][]byte
	starts map[string][]int // byte offset of every line start, per file
}

// where names the range [start, end) of file as "file:first-last" lines.
func (l lineIndex) where(file string, start, end int) string {
	st, ok := l.starts[file]
	if !ok {
		st = []int{0}
		for i, c := range l.files[file] {
			if c == '\n' {
				st = append(st, i+1)
			}
		}
		l.starts[file] = st
	}
	line := func(off int) int { n, _ := slices.BinarySearch(st, off+1); return n } // the line starts at or before off
	first, last := line(start), line(max(start, end-1))
	if first == last {
		return fmt.Sprintf("%s:%d", file, first)
	}
	return fmt.Sprintf("%s:%d-%d", file, first, last)
}
