package eval

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Scores are the span scores of one question's top k passages, each in
// [0, 1] (docs/chunkers.md, "Measuring retrieval", defines them):
// Recall, the share of the references' characters the passages cover;
// Precision, the covered characters over the summed characters of the k
// passages; IoU, the covered characters over those of the passages plus
// the references' characters left uncovered.
type Scores struct {
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
	IoU       float64 `json:"iou"`
}

// span is a byte range of one file.
type span struct {
	file       string
	start, end int
}

// Score computes the Scores of refs for the retrieved passages, in
// characters of files, as Chroma's chunking evaluation computes them:
// covered is the union of every (passage ∩ reference) of the same file;
// a passage of another file only adds to the denominators. Passages that
// overlap each other count each time in the denominators. With no
// passages every score is 0.
func Score(files map[string][]byte, refs []Reference, retrieved []Passage) Scores {
	var covered []span
	passageChars := 0
	for _, p := range retrieved {
		passageChars += chars(files, span{p.File, p.Start, p.End})
		for _, r := range refs {
			if r.File != p.File {
				continue
			}
			if s, e := max(r.Start, p.Start), min(r.End, p.End); s < e {
				covered = append(covered, span{r.File, s, e})
			}
		}
	}
	covered = union(covered)
	coveredChars := 0
	for _, c := range covered {
		coveredChars += chars(files, c)
	}
	refChars, uncovered := 0, 0
	for _, r := range refs {
		s := span{r.File, r.Start, r.End}
		n := chars(files, s)
		refChars += n
		uncovered += n - overlapChars(files, s, covered)
	}
	var sc Scores
	if refChars > 0 {
		sc.Recall = float64(coveredChars) / float64(refChars)
	}
	if passageChars > 0 {
		sc.Precision = float64(coveredChars) / float64(passageChars)
	}
	if d := passageChars + uncovered; d > 0 {
		sc.IoU = float64(coveredChars) / float64(d)
	}
	return sc
}

// chars counts the characters of s in its file (bytes past the file's
// end count as nothing).
func chars(files map[string][]byte, s span) int {
	b := files[s.file]
	s.end = min(s.end, len(b))
	if s.start >= s.end {
		return 0
	}
	return utf8.RuneCount(b[s.start:s.end])
}

// overlapChars counts the characters of s that the disjoint sorted
// spans of union hold.
func overlapChars(files map[string][]byte, s span, union []span) int {
	n := 0
	for _, u := range union {
		if u.file != s.file {
			continue
		}
		if a, b := max(u.start, s.start), min(u.end, s.end); a < b {
			n += chars(files, span{s.file, a, b})
		}
	}
	return n
}

// union returns spans merged into disjoint ranges, sorted.
func union(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.start, b.start))
	})
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].file == s.file && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}
