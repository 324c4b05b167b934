package big

import "strings"

// Render writes every row, one line each, and a total line; it is long
// enough to be split at its statements.
func Render(rows []string, sep string) string {
	var b strings.Builder
	total := 0
	for i, r := range rows {
		if r == "" {
			continue
		}
		b.WriteString(r)
		b.WriteString(sep)
		total += len(r) + i
	}
	switch {
	case total > 100:
		b.WriteString("big")
	default:
		b.WriteString("small")
	}
	return b.String()
}

var table = []string{
	"alpha",
	"beta",
	"gamma",
	"delta",
}

const (
	// A is first.
	A = iota
	// B is second.
	B
)
