package twostep

// CheckInvariants is checkInvariants, for the external golden test.
var CheckInvariants = checkInvariants

// goldenPatterns are the golden inputs in testdata/.
var goldenPatterns = []string{"*.md", "*.mdx", "*.txt"}
