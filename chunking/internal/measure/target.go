package measure

// The size arithmetic of target mode, which the Markdown and two-step
// chunkers share (docs/chunkers.md, "Target mode"). Sizes are in the
// chunker's unit.

// Ceiling returns the largest chunk of target mode with target n: one
// and a half times the target, rounded up. A unit up to the ceiling stays
// whole: cutting it in two would give two chunks further from the target,
// in ratio, than it is (two of 0.75n against one of 1.5n).
func Ceiling(n int) int { return n + (n+1)/2 }

// Balanced returns the soft budget of each chunk of a text of size total
// cut in target mode with target n: the text is cut into the number of
// pieces nearest to total/n (at least one), and each piece aims at an
// equal share, so that it ends in near-equal pieces instead of full ones
// and a small remainder.
func Balanced(total, n int) int {
	k := max(1, (total+n/2)/n)
	return (total + k - 1) / k
}

// NearerWithout reports whether a chunk of size cur is nearer to budget
// without a next piece of size p than with it, so that it is closed
// before the piece (a chunk that is still empty never is).
func NearerWithout(cur, p, budget int) bool {
	return cur > 0 && 2*cur+p > 2*budget
}
