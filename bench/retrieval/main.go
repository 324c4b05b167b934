// Command retrieval prints the matched-size table: chunkstream's chunker
// in target mode against the peer chunkers of peers.mjs (LangChain.js's
// recursive and Markdown splitters, chonkie-js's recursive chunker; for
// code and HTML, LangChain.js's fromLanguage splitters), each peer sized
// so that its mean chunk matches ours, all scored in one run with package
// eval (BM25 as a Qdrant collection, Chroma's span metric).
//
//	(cd bench/retrieval && npm install)
//	go run ./bench/retrieval -set chroma=QUESTIONS.jsonl,CORPUS_DIR [-set ...] [-chunker markdown] [-targets 400,800,1600] [-match mean|median|retrieved] [-work DIR]
//	go run ./bench/retrieval -chunker code -peers lc-code -targets 800,1600,2048 -set gohttp=eval/testdata/gohttp/questions.jsonl,$(go env GOROOT)/src/net/http
//	go run ./bench/retrieval -chunker html -peers lc-html -set gospec=eval/testdata/gospec/questions.jsonl,$(go env GOROOT)/doc
//
// For each set and target N it chunks the corpus with -chunker and the
// option target_char N (a chunker without target mode: its size option,
// max_char N), then for each peer searches the peer's chunk-size
// parameter until its mean chunk (in characters) is within -tolerance of
// ours: each LangChain splitter with no overlap and with its common
// overlap (-overlap, a fraction of its chunk size), chonkie-js's without
// (it has none). Each row gives the mean chunk size, the chunks, recall,
// precision and IoU at 5 and recall at 10 (in points); our row gives the
// margin over the best peer (highest recall@5) in recall@5 and IoU@5,
// with its 95% interval (eval.Paired over the questions). With -match
// median the peers are matched on the median chunk instead, and with
// -match retrieved on the characters of the top 5 chunks (averaged over
// the questions: what the answers cost a reader): chunkers whose sizes
// spread differently are compared at equal mean, equal median and equal
// cost. The peers' chunks are kept in -work, and a later run with the
// same -work reads them instead of running the peer again. Peers return
// text only: peers.mjs locates each chunk in its file (locate.mjs) and
// reports those it cannot; a located span is checked against the file
// here. Peers read the files with the chunker's extensions. Question
// sets may give references by their content alone (eval.Locate): a
// question not found exactly once is left out, with a note.
// docs/chunkers.md ("Matched sizes", "Code and HTML") has the last tables.
//
// With -landing DIR instead of -set, it prints where the mean chunk lands
// for each target in DIR's files (docs/chunkers.md, "Target mode"):
//
//	go run ./bench/retrieval -landing CORPUS_DIR [-chunker twostep] [-tokenizer cl100k_base -targets 100,200,400]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/eval"
	"github.com/chunkstream/chunkstream/internal/tokens"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	sets      []set
	chunker   string
	options   map[string]any // more options of our chunker
	targets   []int
	peers     []string
	overlap   float64
	tolerance float64
	script    string // peers.mjs
	work      string // scratch folder for the peers' chunks
	landing   []string
	tokenizer string
	diff      bool   // print the questions whose recall@5 differs from the best peer's
	match     string // the statistic the peers are matched on: mean, median or retrieved
}

// set is a question set over a corpus folder.
type set struct {
	name, questions, dir string
}

func parse(args []string) (*config, error) {
	fs := flag.NewFlagSet("retrieval", flag.ContinueOnError)
	c := &config{}
	fs.Func("set", "a question set: NAME=QUESTIONS.jsonl,CORPUS_DIR (repeat for several)", func(v string) error {
		name, rest, ok1 := strings.Cut(v, "=")
		q, dir, ok2 := strings.Cut(rest, ",")
		if !ok1 || !ok2 || name == "" || q == "" || dir == "" {
			return errors.New("want NAME=QUESTIONS.jsonl,CORPUS_DIR")
		}
		c.sets = append(c.sets, set{name, q, dir})
		return nil
	})
	fs.StringVar(&c.chunker, "chunker", "markdown", "our chunker (its option target_char is set to each target)")
	opts := fs.String("options", "", "more options of our chunker, as a JSON object")
	targets := fs.String("targets", "400,800,1600", "target mean chunk sizes in characters")
	peers := fs.String("peers", "lc-recursive,lc-markdown,chonkie-recursive", "peers of peers.mjs")
	fs.Float64Var(&c.overlap, "overlap", 0.2, "the LangChain splitters' common overlap, a fraction of their chunk size (they also run without)")
	fs.Float64Var(&c.tolerance, "tolerance", 0.05, "largest relative difference of a peer's mean chunk from ours")
	fs.StringVar(&c.script, "script", filepath.Join("bench", "retrieval", "peers.mjs"), "the peers' Node script")
	fs.StringVar(&c.work, "work", "", "folder for the peers' chunks, reused when a later run asks for the same set, peer and sizes (default: a temporary one, removed)")
	fs.StringVar(&c.match, "match", "mean", "what the peers are matched on: mean or median chunk, or retrieved (the characters of the top 5 chunks, averaged over the questions)")
	fs.Func("landing", "instead of the table: where the mean chunk lands in this corpus folder for each target (repeat for several)", func(v string) error {
		c.landing = append(c.landing, v)
		return nil
	})
	fs.StringVar(&c.tokenizer, "tokenizer", "", "with -landing: targets in tokens of this encoding (target_tokens)")
	fs.BoolVar(&c.diff, "diff", false, "after the table, per target, the questions whose recall@5 differs between our chunker and the best peer")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(c.sets) == 0 && len(c.landing) == 0 || fs.NArg() > 0 {
		return nil, errors.New("usage: retrieval -set NAME=QUESTIONS.jsonl,CORPUS_DIR [-set ...] [flags]")
	}
	if *opts != "" {
		if err := json.Unmarshal([]byte(*opts), &c.options); err != nil {
			return nil, fmt.Errorf("-options: %w", err)
		}
	}
	for _, f := range strings.Split(*targets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-targets: %q is not a positive integer", f)
		}
		c.targets = append(c.targets, n)
	}
	c.peers = strings.Split(*peers, ",")
	switch c.match {
	case "mean", "median", "retrieved":
	default:
		return nil, fmt.Errorf("-match: %q is not mean, median or retrieved", c.match)
	}
	return c, nil
}

func run(ctx context.Context, args []string, w io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "retrieval-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.work)
	} else if err := os.MkdirAll(c.work, 0o755); err != nil {
		return fmt.Errorf("-work: %w", err)
	}
	entry, err := registry.Default().Lookup(c.chunker)
	if err != nil {
		return err
	}
	if len(c.landing) > 0 {
		return c.land(ctx, w, entry)
	}
	all := map[int]*perQuestion{}
	for _, s := range c.sets {
		if err := c.table(ctx, w, entry, s, all); err != nil {
			return fmt.Errorf("set %s: %w", s.name, err)
		}
	}
	if len(c.sets) > 1 {
		printPooled(w, c.targets, all, len(c.sets))
	}
	return nil
}

// perQuestion holds, for one target, the per-question recall@5 and
// IoU@5 of our chunker and of the best peer, over the sets run so far.
type perQuestion struct {
	bestRecall, oursRecall, bestIoU, oursIoU []float64
}

// add appends the questions of one set: ours against best.
func (p *perQuestion) add(best, ours *eval.Result) error {
	for _, x := range []struct {
		dst  *[]float64
		res  *eval.Result
		pick func(eval.Scores) float64
	}{
		{&p.bestRecall, best, func(s eval.Scores) float64 { return s.Recall }},
		{&p.oursRecall, ours, func(s eval.Scores) float64 { return s.Recall }},
		{&p.bestIoU, best, func(s eval.Scores) float64 { return s.IoU }},
		{&p.oursIoU, ours, func(s eval.Scores) float64 { return s.IoU }},
	} {
		v, err := x.res.PerQuestion(5, x.pick)
		if err != nil {
			return err
		}
		*x.dst = append(*x.dst, v...)
	}
	return nil
}

// printPooled prints, per target, the margins over the best peer of
// each set with the questions of all sets pooled: a paired interval
// over more questions than one set has.
func printPooled(w io.Writer, targets []int, all map[int]*perQuestion, sets int) {
	fmt.Fprintf(w, "\nall %d sets pooled, ours against each set's best peer at that target:\n", sets)
	for _, n := range targets {
		p := all[n]
		if p == nil {
			continue
		}
		dr, drh := eval.Paired(p.bestRecall, p.oursRecall)
		di, dih := eval.Paired(p.bestIoU, p.oursIoU)
		fmt.Fprintf(w, "  target %d: %d questions: ΔR@5 %+.1f ± %.1f, ΔIoU@5 %+.2f ± %.2f\n", n, len(p.oursRecall), 100*dr, 100*drh, 100*di, 100*dih)
	}
}

// corpus is a set loaded: its files and questions.
type corpus struct {
	set
	files     map[string][]byte
	names     []string
	exts      []string // the chunker's extensions, which the peers read too
	questions []eval.Question
	leftOut   []string // notes of the questions left out (eval.Locate)
}

func load(ctx context.Context, s set, exts []string) (*corpus, error) {
	names, _, err := chunking.WalkFolder(ctx, s.dir, exts)
	if err != nil {
		return nil, err
	}
	c := &corpus{set: s, files: map[string][]byte{}, names: names, exts: exts}
	for _, n := range names {
		if c.files[n], err = os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(n))); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(s.questions)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if c.questions, err = eval.ReadQuestions(f); err != nil {
		return nil, err
	}
	c.questions, c.leftOut = eval.Locate(c.questions, func(name string) ([]byte, error) {
		if b, ok := c.files[name]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("%s is not a file the chunker reads in %s", name, s.dir)
	})
	return c, eval.CheckReferences(c.questions, c.files)
}

// row is one chunker's evaluation at one size.
type row struct {
	label     string
	sizes     eval.Sizes
	res       *eval.Result
	unlocated int
	top5      float64 // characters of the top 5 chunks, averaged over the questions
}

func (r row) at(k int) eval.Scores {
	return r.res.Mean[slices.Index(r.res.Ks, k)]
}

var ks = []int{5, 10}

func (c *config) table(ctx context.Context, w io.Writer, entry registry.Entry, s set, all map[int]*perQuestion) error {
	exts, err := entry.WalkExtensions(c.options)
	if err != nil {
		return err
	}
	cp, err := load(ctx, s, exts)
	if err != nil {
		return err
	}
	for _, n := range cp.leftOut {
		fmt.Fprintln(w, "note:", n)
	}
	option := sizeOption(entry)
	fmt.Fprintf(w, "\n%s: %d questions over %d files; chunker %s, %s per row; peers matched to ±%.0f%% of our %s\n\n",
		s.name, len(cp.questions), len(cp.names), entry.Name, option, 100*c.tolerance, c.statName())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tchunker\tmean\tmedian\ttop 5\tchunks\tR@5\tP@5\tIoU@5\tR@10\tΔR@5 vs best\tΔIoU@5 vs best\t")
	var margins []float64
	var notes []string
	for _, n := range c.targets {
		opts := map[string]any{option: n}
		for k, v := range c.options {
			opts[k] = v
		}
		ours, err := c.ours(ctx, cp, entry, opts)
		if err != nil {
			return err
		}
		rows := []row{ours}
		for _, p := range c.peers {
			fracs := []float64{0}
			if strings.HasPrefix(p, "lc-") && c.overlap > 0 {
				fracs = append(fracs, c.overlap)
			}
			for _, f := range fracs {
				r, err := c.matched(ctx, cp, p, f, c.stat(ours))
				if err != nil {
					return err
				}
				rows = append(rows, r)
			}
		}
		best := rows[1]
		for _, r := range rows[2:] {
			if r.at(5).Recall > best.at(5).Recall {
				best = r
			}
		}
		if c.diff {
			notes = append(notes, diffNotes(n, ours, best)...)
		}
		if all[n] == nil {
			all[n] = &perQuestion{}
		}
		if err := all[n].add(best.res, ours.res); err != nil {
			return err
		}
		dr, drh := paired(best.res, ours.res, func(s eval.Scores) float64 { return s.Recall })
		di, dih := paired(best.res, ours.res, func(s eval.Scores) float64 { return s.IoU })
		margins = append(margins, dr)
		for i, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\t%.0f\t%d\t%.0f\t%d\t%.1f\t%.2f\t%.2f\t%.1f\t", n, r.label, r.sizes.Mean, r.sizes.P50, r.top5, r.sizes.Chunks,
				100*r.at(5).Recall, 100*r.at(5).Precision, 100*r.at(5).IoU, 100*r.at(10).Recall)
			if i == 0 {
				fmt.Fprintf(tw, "%+.1f ± %.1f (%s)\t%+.2f ± %.2f\t", 100*dr, 100*drh, best.label, 100*di, 100*dih)
			} else {
				fmt.Fprint(tw, "\t\t")
			}
			fmt.Fprintln(tw)
			if r.unlocated > 0 {
				notes = append(notes, fmt.Sprintf("%d chunks of %s (target %d) not located in their files: they take ranks and cover nothing", r.unlocated, r.label, n))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var sum float64
	for _, m := range margins {
		sum += m
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
	fmt.Fprintf(w, "\nmean recall@5 margin over the best peer: %+.1f points\n", 100*sum/float64(len(margins)))
	return nil
}

// diffNotes lists the questions whose recall@5 differs between ours and
// best, with both.
func diffNotes(target int, ours, best row) []string {
	var out []string
	i := slices.Index(ours.res.Ks, 5)
	for q := range ours.res.Questions {
		a, b := ours.res.Questions[q].Scores[i].Recall, best.res.Questions[q].Scores[i].Recall
		if a != b {
			out = append(out, fmt.Sprintf("target %d: %s: recall@5 %.0f%% (%s), %.0f%% (%s)", target, ours.res.Questions[q].ID, 100*a, ours.label, 100*b, best.label))
		}
	}
	return out
}

// paired is the mean difference b − a of a per-question score at k=5,
// and its 95% half-interval.
func paired(a, b *eval.Result, pick func(eval.Scores) float64) (float64, float64) {
	x, err1 := a.PerQuestion(5, pick)
	y, err2 := b.PerQuestion(5, pick)
	if err1 != nil || err2 != nil {
		return math.NaN(), math.NaN()
	}
	return eval.Paired(x, y)
}

// ours chunks the corpus with our chunker and evaluates it.
func (c *config) ours(ctx context.Context, cp *corpus, entry registry.Entry, opts map[string]any) (row, error) {
	ch, err := entry.New(opts)
	if err != nil {
		return row{}, err
	}
	var chunks []chunking.Chunk
	for _, n := range cp.names {
		cs, _, err := ch.Chunk(chunking.Document{Path: n, Content: cp.files[n]})
		if err != nil {
			return row{}, err
		}
		chunks = append(chunks, cs...)
	}
	ps, err := eval.Passages(chunks)
	if err != nil {
		return row{}, err
	}
	label := entry.Name
	if t, ok := opts["target_char"]; ok {
		label += fmt.Sprintf(" target %v", t)
	} else if t, ok := opts[entry.Size]; ok {
		label += fmt.Sprintf(" %s %v", entry.Size, t)
	}
	return score(ctx, cp, label, ps, 0)
}

// sizeOption is the option a row of the table sets to each target:
// target_char for a chunker with target mode, else its size option.
func sizeOption(entry registry.Entry) string {
	if slices.Contains(entry.Targets, "target_char") {
		return "target_char"
	}
	return entry.Size
}

func score(ctx context.Context, cp *corpus, label string, ps []eval.Passage, unlocated int) (row, error) {
	bm, err := eval.NewBM25(ps)
	if err != nil {
		return row{}, err
	}
	res, err := eval.Evaluate(ctx, cp.files, ps, cp.questions, bm, ks)
	if err != nil {
		return row{}, err
	}
	return row{label: label, sizes: eval.SizesOf(ps), res: res, unlocated: unlocated, top5: topChars(res, ps, 5)}, nil
}

// topChars returns the characters of the top k passages retrieved for
// each question, averaged over the questions: what the answers cost a
// reader (or a model's context).
func topChars(res *eval.Result, ps []eval.Passage, k int) float64 {
	if len(res.Questions) == 0 {
		return 0
	}
	total := 0
	for _, q := range res.Questions {
		for _, i := range q.Retrieved[:min(k, len(q.Retrieved))] {
			total += utf8.RuneCountInString(ps[i].Text)
		}
	}
	return float64(total) / float64(len(res.Questions))
}

// stat returns the statistic of r the peers are matched on (-match).
func (c *config) stat(r row) float64 {
	switch c.match {
	case "median":
		return float64(r.sizes.P50)
	case "retrieved":
		return r.top5
	}
	return r.sizes.Mean
}

// statName names stat.
func (c *config) statName() string {
	switch c.match {
	case "median":
		return "median chunk"
	case "retrieved":
		return "characters retrieved in the top 5"
	}
	return "mean chunk"
}

// matched searches a peer's chunk-size parameter until its statistic
// (stat: the mean chunk, the median, or the top 5's characters) is
// within the tolerance of want, and evaluates it there (or at the
// closest size found, its label saying so). The statistic shrinks as the
// size does, nearly in proportion, so each try scales the size by the
// ratio.
func (c *config) matched(ctx context.Context, cp *corpus, peer string, frac, want float64) (row, error) {
	size := int(math.Round(want * 1.3))
	if c.match == "retrieved" {
		size = int(math.Round(want / 5 * 1.3)) // five chunks
	}
	var best row
	bestSize, bestErr := 0, math.Inf(1)
	tried := map[int]bool{}
	for try := 0; try < 10 && !tried[size]; try++ {
		tried[size] = true
		ps, unloc, err := c.runPeer(ctx, cp, peer, size, int(math.Round(frac*float64(size))))
		if err != nil {
			return row{}, err
		}
		r, err := score(ctx, cp, "", ps, unloc)
		if err != nil {
			return row{}, err
		}
		m := c.stat(r)
		if e := math.Abs(m/want - 1); e < bestErr {
			best, bestSize, bestErr = r, size, e
		}
		if bestErr <= c.tolerance/2 || m == 0 {
			break
		}
		size = max(1, int(math.Round(float64(size)*want/m)))
	}
	label := fmt.Sprintf("%s %d/%d", peer, bestSize, int(math.Round(frac*float64(bestSize))))
	if bestErr > c.tolerance {
		label += fmt.Sprintf(" (UNMATCHED: %+.0f%%)", 100*bestErr)
	}
	best.label = label
	return best, nil
}

// peerChunk is one line of peers.mjs's output.
type peerChunk struct {
	File  string `json:"file"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Text  string `json:"text"`
}

// runPeer runs peers.mjs and reads its chunks as passages; an unlocated
// chunk is a passage without a range.
func (c *config) runPeer(ctx context.Context, cp *corpus, peer string, size, overlap int) ([]eval.Passage, int, error) {
	out := filepath.Join(c.work, fmt.Sprintf("%s-%s-%d-%d.jsonl", cp.name, peer, size, overlap))
	if _, err := os.Stat(out); err != nil {
		cmd := exec.CommandContext(ctx, "node", c.script, "--dir", cp.dir, "--peer", peer,
			"--size", strconv.Itoa(size), "--overlap", strconv.Itoa(overlap), "--ext", strings.Join(cp.exts, ","), "--out", out+".tmp")
		cmd.Stderr = os.Stderr
		if _, err := cmd.Output(); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
		}
		if err := os.Rename(out+".tmp", out); err != nil {
			return nil, 0, err
		}
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return readPeer(f, cp.files)
}

// readPeer reads peers.mjs's JSON Lines as passages, checking each
// located span against the file's bytes; it returns the passages and the
// number of chunks without a span.
func readPeer(r io.Reader, files map[string][]byte) ([]eval.Passage, int, error) {
	var ps []eval.Passage
	unlocated := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		var pc peerChunk
		if err := json.Unmarshal(sc.Bytes(), &pc); err != nil {
			return nil, 0, fmt.Errorf("peer chunks line %d: %w", line, err)
		}
		if pc.Start < 0 {
			unlocated++
			ps = append(ps, eval.Passage{File: pc.File, Text: pc.Text})
			continue
		}
		b, ok := files[pc.File]
		if !ok || pc.End > len(b) || pc.Start > pc.End || string(b[pc.Start:pc.End]) != pc.Text {
			return nil, 0, fmt.Errorf("peer chunks line %d: bytes [%d, %d) of %s are not the chunk's text", line, pc.Start, pc.End, pc.File)
		}
		ps = append(ps, eval.Passage{File: pc.File, Start: pc.Start, End: pc.End, Text: pc.Text})
	}
	return ps, unlocated, sc.Err()
}

// land prints, for each corpus folder of -landing and each target, the
// mean chunk in the target's unit (characters, or tokens of -tokenizer)
// over all files and over the files at least the target long, and the
// chunks marked oversize.
func (c *config) land(ctx context.Context, w io.Writer, entry registry.Entry) error {
	size, option := utf8.RuneCount, "target_char"
	if c.tokenizer != "" {
		enc, err := tokens.Get(c.tokenizer)
		if err != nil {
			return err
		}
		size, option = enc.Count, "target_tokens"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "corpus\tchunker\ttarget\tchunks\tmean\tvs target\tmean, files ≥ target\tvs target\toversize\t")
	exts, err := entry.WalkExtensions() // the targets' options do not change them
	if err != nil {
		return err
	}
	for _, dir := range c.landing {
		names, _, err := chunking.WalkFolder(ctx, dir, exts)
		if err != nil {
			return err
		}
		for _, n := range c.targets {
			opts := map[string]any{option: n}
			if c.tokenizer != "" {
				opts["tokenizer"] = c.tokenizer
			}
			ch, err := entry.New(opts)
			if err != nil {
				return err
			}
			var all, long [2]int // chunks, summed size
			over := 0
			for _, name := range names {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if err != nil {
					return err
				}
				cs, _, err := ch.Chunk(chunking.Document{Path: name, Content: b})
				if err != nil {
					continue // not UTF-8: no chunks, as chunk split reports it
				}
				isLong := size(b) >= n
				for _, x := range cs {
					k := size([]byte(x.Content()))
					all[0], all[1] = all[0]+1, all[1]+k
					if isLong {
						long[0], long[1] = long[0]+1, long[1]+k
					}
					if o, _ := x.Get("oversize", false).(bool); o {
						over++
					}
				}
			}
			mean := func(a [2]int) float64 { return float64(a[1]) / float64(max(a[0], 1)) }
			fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d\t%.0f\t%+.1f%%\t%.0f\t%+.1f%%\t%d\t\n", filepath.Base(dir), entry.Name, n,
				strings.TrimPrefix(option, "target_"), all[0], mean(all), 100*(mean(all)/float64(n)-1), mean(long), 100*(mean(long)/float64(n)-1), over)
		}
	}
	return tw.Flush()
}
