package twostep

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

// scanRegion is scanRegionUnclosed without the unclosed environments.
func scanRegion(s string, a, b int, display, inline []span) ([]span, []span) {
	display, inline, _ = scanRegionUnclosed(s, a, b, display, inline, nil, new(poll.Poller))
	return display, inline
}

func spanTexts(s string, spans []span) []string {
	out := make([]string, 0, len(spans))
	for _, sp := range spans {
		out = append(out, s[sp.Start:sp.End])
	}
	return out
}

func TestScanRegion(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		display []string
		inline  []string
	}{
		{"plain", "Just text. More text.", nil, nil},
		{"inline math", "Let $x+y$ be small.", nil, []string{"$x+y$"}},
		{"prices", "It costs $5 and $10 today.", nil, nil},
		{"price then math", "Pay $5 for $x$ now.", nil, []string{"$5 for $x$"}}, // the rule as specified
		{"math space after open", "a $ b$ c", nil, nil},
		{"math space before close", "a $b $ c", nil, nil},
		{"closer before digit", "$a$1 and $b$.", nil, []string{"$a$1 and $b$"}},
		{"price pair", "from $5 to $10, or $3.", nil, nil},
		{"escaped dollar", `cost \$5 and $x$`, nil, []string{"$x$"}},
		{"inline paren", `Let \(a. B\) hold.`, nil, []string{`\(a. B\)`}},
		{"display dollars", "Text $$a = b$$ more.", []string{"$$a = b$$"}, nil},
		{"display brackets", `Text \[a = b\] more.`, []string{`\[a = b\]`}, nil},
		{"unclosed dollars", "Text $$a = b more.", nil, nil},
		{"unclosed bracket", `Text \[a = b more.`, nil, nil},
		{"environment", `A \begin{equation} x \end{equation} B`, []string{`\begin{equation} x \end{equation}`}, nil},
		{"nested same name", `\begin{a} \begin{a} x \end{a} y \end{a} z`, []string{`\begin{a} \begin{a} x \end{a} y \end{a}`}, nil},
		{"nested other name", `\begin{align} \begin{cases} x \end{cases} \end{align}`, []string{`\begin{align} \begin{cases} x \end{cases} \end{align}`}, nil},
		{"unclosed outer", `\begin{a} \begin{b} x \end{b} y`, []string{`\begin{b} x \end{b}`}, nil},
		{"unclosed", `\begin{equation} x = 1. Next.`, nil, nil},
		{"crossing", `\begin{a} \begin{b} \end{a} \end{b} z`, []string{`\begin{a} \begin{b} \end{a} \end{b}`}, nil},
		{"env across blank line", "\\begin{a}\nx\n\ny\n\\end{a}", []string{"\\begin{a}\nx\n\ny\n\\end{a}"}, nil},
		{"math not across blank line", "a $x\n\ny$ b", nil, nil},
		{"dollars not across blank line", "a $$x\n\ny$$ b", nil, nil},
		{"code span", "Run `a $x$ b` now.", nil, []string{"`a $x$ b`"}},
		{"code span double", "Run ``a ` b`` now.", nil, []string{"``a ` b``"}},
		{"unclosed ticks", "Run `a now. $x$", nil, []string{"$x$"}},
		{"fig", "See Fig. 3. The result holds.", nil, []string{"Fig. 3."}},
		{"figure decimal", "In Figure 3.5 we see.", nil, []string{"Figure 3.5"}},
		{"fig decimal", "In Fig. 3.5 we see.", nil, []string{"Fig. 3.5"}},
		{"tab", "Tab. 2 and Table 2 and Tables 4a", nil, []string{"Tab. 2", "Table 2", "Tables 4a"}},
		{"eq paren", "See Eq. (4). It holds.", nil, []string{"Eq. (4)"}},
		{"equation", "By Equation 4 we get.", nil, []string{"Equation 4"}},
		{"lower", "see fig. 2 and eq. (1.2)", nil, []string{"fig. 2", "eq. (1.2)"}},
		{"no number", "The table is big. Figure it out.", nil, nil},
		{"inside word", "Stable 2 is not a ref.", nil, nil},
		{"ref nbsp", "See Fig.\u00a03 now", nil, []string{"Fig.\u00a03"}},
		{"ref tilde", `See Fig.~\ref{x} and Fig.~3`, nil, []string{"Fig.~3"}},
		{"fence in list", "- Step one. Run:\n  ```sh\n  echo a. B\n\n  echo c\n  ```\n- Done.", []string{"  ```sh\n  echo a. B\n\n  echo c\n  ```"}, nil},
		{"tilde fence in quote", "> Text.\n> ~~~~\n> x. Y\n> ~~~~\nMore.", []string{"> ~~~~\n> x. Y\n> ~~~~"}, nil},
		{"fence closed by longer", "- a\n  ```\n  x\n  `````\n", []string{"  ```\n  x\n  `````"}, nil},
		{"unclosed fence", "- a\n  ```\n  x. Y $z$\n", nil, []string{"$z$"}},
		{"fence mid line is code span", "a ```b``` c", nil, []string{"```b```"}},
		{"table in list", "- Values. See:\n\n  | a | b. C |\n  |---|---|\n  | 1 | 2 |\n- Next.", []string{"  | a | b. C |\n  |---|---|\n  | 1 | 2 |"}, nil},
		{"table in quote", "> | a |\n> | - |\n> | x |\n> More.", []string{"> | a |\n> | - |\n> | x |"}, nil},
		{"pipe line without delimiter", "| not a table. Really\n| no", nil, nil},
		{"pipe mid line", "a | b\n--|--", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, in := scanRegion(tt.in, 0, len(tt.in), nil, nil)
			if got := spanTexts(tt.in, d); !slices.Equal(got, tt.display) && !(len(got) == 0 && len(tt.display) == 0) {
				t.Errorf("scanRegion(%q) display = %q, want %q", tt.in, got, tt.display)
			}
			if got := spanTexts(tt.in, in); !slices.Equal(got, tt.inline) && !(len(got) == 0 && len(tt.inline) == 0) {
				t.Errorf("scanRegion(%q) inline = %q, want %q", tt.in, got, tt.inline)
			}
		})
	}
}

func TestScanRegionSubrange(t *testing.T) {
	s := "$x$ Text $a$ here $y$"
	a, b := strings.Index(s, "Text"), strings.Index(s, " $y$")
	_, in := scanRegion(s, a, b, nil, nil)
	if got := spanTexts(s, in); !slices.Equal(got, []string{"$a$"}) {
		t.Errorf("scanRegion(subrange) inline = %q", got)
	}
}

// linearInputs are adversarial inputs of scanRegion: openers without
// closers, closers without openers, nesting.
var linearInputs = map[string]func(n int) string{
	"dollars":   func(n int) string { return strings.Repeat("$a ", n) },
	"doubles":   func(n int) string { return strings.Repeat("$$a ", n) },
	"begins":    func(n int) string { return strings.Repeat(`\begin{x} `, n) },
	"ends":      func(n int) string { return strings.Repeat(`\end{x} `, n) },
	"brackets":  func(n int) string { return strings.Repeat(`\[ \( `, n) },
	"ticks":     func(n int) string { return strings.Repeat("` `` ``` ", n) },
	"refs":      func(n int) string { return strings.Repeat("Fig. Table Eq. ( ", n) },
	"nested":    func(n int) string { return strings.Repeat(`\begin{a}`, n) + strings.Repeat(`\end{a}`, n) },
	"dollar nl": func(n int) string { return strings.Repeat("$a\n", n) },
	"fences":    func(n int) string { return strings.Repeat("- ```x\n", n) },
	"pipes":     func(n int) string { return strings.Repeat("| a\n", n) },
	"fence run": func(n int) string { return "\n" + strings.Repeat("`", n) + "\n" + strings.Repeat("~~~\n", n) },
}

// scanWork returns the bytes scanRegion looks at in s, every search
// included: its operation count.
func scanWork(s string) int {
	pl := new(poll.Poller)
	scanRegionUnclosed(s, 0, len(s), nil, nil, nil, pl)
	return pl.Work()
}

// TestScanRegionLinear checks that adversarial inputs stay linear,
// counting the bytes the scan and its searches look at (not time): 8×
// the input may cost at most 10× the work (a quadratic scan costs 64×).
func TestScanRegionLinear(t *testing.T) {
	for name, gen := range linearInputs {
		t.Run(name, func(t *testing.T) {
			small, large := gen(10000), gen(80000)
			ws, wl := scanWork(small), scanWork(large)
			if ws < len(small) || wl > 10*ws {
				t.Errorf("%s: scanRegion looked at %d bytes for %d bytes of input, %d for %d: not linear", name, ws, len(small), wl, len(large))
			}
		})
	}
}

// BenchmarkScanRegion times scanRegion on the adversarial inputs at two
// sizes, 8× apart: linear scans show the same MB/s at both.
func BenchmarkScanRegion(b *testing.B) {
	for name, gen := range linearInputs {
		for _, n := range []int{10000, 80000} {
			s := gen(n)
			b.Run(fmt.Sprintf("%s/n=%d", strings.ReplaceAll(name, " ", "-"), n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					scanRegion(s, 0, len(s), nil, nil)
				}
			})
		}
	}
}
