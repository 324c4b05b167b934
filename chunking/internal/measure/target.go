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

// Cut is a kind of boundary between two pieces of text, strongest first:
// where target mode may end a chunk, and what ending it there costs.
type Cut uint8

// The kinds of boundary.
const (
	CutParagraph Cut = iota // a blank line, or the edge of a block
	CutItem                 // the start of a list item
	CutLine                 // a line break
	CutSentence             // a sentence end
	CutSpace                // whitespace inside a sentence
	CutChar                 // between characters
)

// cutCosts: a paragraph end costs nothing, a list item start what a
// tenth of the budget's deviation costs, and each weaker kind what twice
// the deviation of the one before costs.
var cutCosts = [...]float64{CutParagraph: 0, CutItem: 0.01, CutLine: 0.04, CutSentence: 0.16, CutSpace: 0.64, CutChar: 2.56}

// Cost returns what ending a chunk at a boundary of kind c costs, in the
// unit of SizeCost: the squared deviation it is worth.
func (c Cut) Cost() float64 { return cutCosts[c] }

// HeadingEnd is what a chunk ending with a heading costs: such an end is
// chosen only where no other fits.
const HeadingEnd = 1e6

// SizeCost returns what a chunk of size n costs against budget: its
// relative deviation, squared.
func SizeCost(n, budget int) float64 {
	d := float64(n-budget) / float64(budget)
	return d * d
}
