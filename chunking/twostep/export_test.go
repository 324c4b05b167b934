package twostep

// CheckInvariants is checkInvariants, for the external golden test.
var CheckInvariants = checkInvariants

// goldenPatterns are the golden inputs in testdata/.
var goldenPatterns = []string{"*.md", "*.mdx", "*.txt"}

// WithoutSpans returns a copy of c that gives chunks without spans: the
// benchmarks' baseline for what spans cost.
func WithoutSpans(c *Chunker) *Chunker {
	d := *c
	d.noSpans = true
	return &d
}
