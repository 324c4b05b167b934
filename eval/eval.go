package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A Result is the evaluation of one set of passages with one retriever.
type Result struct {
	// Ks are the cut-offs, increasing; Mean[i] averages the questions'
	// Scores at Ks[i].
	Ks   []int    `json:"k"`
	Mean []Scores `json:"mean"`
	// Questions are the per-question results, in the order asked.
	Questions []QuestionResult `json:"questions"`
}

// A QuestionResult is one question's retrieved passages and scores.
type QuestionResult struct {
	ID string `json:"id"`
	// Retrieved are the indices of the top max(Ks) passages, best first.
	Retrieved []int `json:"retrieved"`
	// Scores[i] are the scores of the top Ks[i].
	Scores []Scores `json:"scores"`
}

// Evaluate retrieves the top max(ks) passages for every question with r
// and scores the top k of each for every k of ks (Score). files holds the
// corpus files the passages and references point into; ks must be
// positive. Questions are retrieved concurrently (r must be safe for
// concurrent use, as this package's retrievers are); the result does not
// depend on the order in which they finish.
func Evaluate(ctx context.Context, files map[string][]byte, passages []Passage, questions []Question, r Retriever, ks []int) (*Result, error) {
	ks = slices.Sorted(slices.Values(ks))
	ks = slices.Compact(ks)
	if len(ks) == 0 || ks[0] <= 0 {
		return nil, fmt.Errorf("eval: the cut-offs k must be positive, got %v", ks)
	}
	kmax := ks[len(ks)-1]
	res := &Result{Ks: ks, Mean: make([]Scores, len(ks)), Questions: make([]QuestionResult, len(questions))}
	one := func(ctx context.Context, i int) error {
		q := questions[i]
		ids, err := r.Retrieve(ctx, q.Question, kmax)
		if err != nil {
			return fmt.Errorf("eval: question %s: %w", q.ID, err)
		}
		qr := QuestionResult{ID: q.ID, Retrieved: ids, Scores: make([]Scores, len(ks))}
		got := make([]Passage, len(ids))
		for j, id := range ids {
			if id < 0 || id >= len(passages) {
				return fmt.Errorf("eval: question %s: the retriever returned passage %d of %d", q.ID, id, len(passages))
			}
			got[j] = passages[id]
		}
		for j, k := range ks {
			qr.Scores[j] = Score(files, q.References, got[:min(k, len(got))])
		}
		res.Questions[i] = qr
		return nil
	}
	if err := forEach(ctx, len(questions), one); err != nil {
		return nil, err
	}
	for _, qr := range res.Questions { // in question order: the sums do not depend on the schedule
		for j, s := range qr.Scores {
			res.Mean[j].Recall += s.Recall
			res.Mean[j].Precision += s.Precision
			res.Mean[j].IoU += s.IoU
		}
	}
	if n := float64(len(questions)); n > 0 {
		for i := range res.Mean {
			res.Mean[i].Recall /= n
			res.Mean[i].Precision /= n
			res.Mean[i].IoU /= n
		}
	}
	return res, nil
}

// forEach calls f for 0..n-1 on up to GOMAXPROCS goroutines and returns
// the first error, after which the calls not yet started are not made
// (their ctx is cancelled).
func forEach(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// Sizes describes the sizes of a set of passages in characters of their
// Text: the count, the 10th, 50th and 90th percentiles (nearest rank) and
// the mean.
type Sizes struct {
	Chunks int     `json:"chunks"`
	P10    int     `json:"p10"`
	P50    int     `json:"p50"`
	P90    int     `json:"p90"`
	Mean   float64 `json:"mean"`
}

// SizesOf returns the Sizes of passages.
func SizesOf(passages []Passage) Sizes {
	if len(passages) == 0 {
		return Sizes{}
	}
	n := make([]int, len(passages))
	total := 0
	for i, p := range passages {
		n[i] = utf8.RuneCountInString(p.Text)
		total += n[i]
	}
	slices.Sort(n)
	rank := func(p float64) int { return n[max(0, int(math.Ceil(p*float64(len(n))))-1)] }
	return Sizes{Chunks: len(n), P10: rank(0.1), P50: rank(0.5), P90: rank(0.9), Mean: float64(total) / float64(len(n))}
}

// Paired returns the mean of b[i] − a[i] and the half-width of its 95%
// confidence interval (normal approximation over the pairs): the
// difference is significant when |mean| > half. a and b must have the
// same length; fewer than two pairs give a half-width of +Inf.
func Paired(a, b []float64) (mean, half float64) {
	n := len(a)
	if n == 0 || len(b) != n {
		return 0, math.Inf(1)
	}
	for i := range a {
		mean += b[i] - a[i]
	}
	mean /= float64(n)
	if n < 2 {
		return mean, math.Inf(1)
	}
	var ss float64
	for i := range a {
		d := b[i] - a[i] - mean
		ss += d * d
	}
	return mean, 1.96 * math.Sqrt(ss/float64(n-1)/float64(n))
}

// PerQuestion returns one score of every question at cut-off k (which
// must be one of r.Ks), for Paired: pick chooses the score.
func (r *Result) PerQuestion(k int, pick func(Scores) float64) ([]float64, error) {
	i := slices.Index(r.Ks, k)
	if i < 0 {
		return nil, fmt.Errorf("eval: k=%d was not evaluated (have %v)", k, r.Ks)
	}
	out := make([]float64, len(r.Questions))
	for j, q := range r.Questions {
		out[j] = pick(q.Scores[i])
	}
	return out, nil
}
