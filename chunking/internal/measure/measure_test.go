package measure

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/internal/tokens"
)

func tokenMeasure(t *testing.T) Measure {
	t.Helper()
	enc, err := tokens.Get(tokens.CL100KBase)
	if err != nil {
		t.Fatal(err)
	}
	c := enc.Counter()
	t.Cleanup(c.Release)
	return OfTokens(c)
}

func TestLen(t *testing.T) {
	tok := tokenMeasure(t)
	text := "Hello, wörld! 你好 😀 again"
	tests := []struct {
		m     Measure
		want  int
		exact bool
	}{
		{OfChars(), utf8.RuneCountInString(text), true},
		{Measure{}, utf8.RuneCountInString(text), true},
		{OfWords(), 5, true},
		{tok, tok.Counter().Encoding().CountString(text), false},
	}
	for _, tt := range tests {
		if got := tt.m.Len([]byte(text)); got != tt.want {
			t.Errorf("%v: Len = %d, want %d", tt.m.Unit(), got, tt.want)
		}
		if got := tt.m.LenString(text); got != tt.want {
			t.Errorf("%v: LenString = %d, want %d", tt.m.Unit(), got, tt.want)
		}
		if got := tt.m.LenLimit([]byte(text), tt.want); got != tt.want {
			t.Errorf("%v: LenLimit(at the size) = %d, want %d", tt.m.Unit(), got, tt.want)
		}
		if got := tt.m.LenStringLimit(text, tt.want-1); got <= tt.want-1 {
			t.Errorf("%v: LenStringLimit(below the size) = %d, want > %d", tt.m.Unit(), got, tt.want-1)
		}
		if tt.m.Exact() != tt.exact {
			t.Errorf("%v: Exact = %v", tt.m.Unit(), tt.m.Exact())
		}
	}
	if tok.Unit().String() != "tokens" || OfWords().Unit().String() != "words" || OfChars().Unit().String() != "characters" {
		t.Error("unit names")
	}
}

func TestLongestSuffix(t *testing.T) {
	s := "alpha beta gamma delta epsilon"
	starts := []int{0, 6, 11, 17, 23}
	for _, m := range []Measure{OfChars(), OfWords(), tokenMeasure(t)} {
		for limit := 0; limit <= 40; limit++ {
			start, n := LongestSuffix(m, s, starts, limit)
			// The answer is the first start whose suffix fits.
			want, wantN := -1, 0
			for _, st := range starts {
				if k := m.LenString(s[st:]); k <= limit {
					want, wantN = st, k
					break
				}
			}
			if start != want || n != wantN {
				t.Errorf("%v: LongestSuffix(limit %d) = %d, %d; want %d, %d", m.Unit(), limit, start, n, want, wantN)
			}
			if b, bn := LongestSuffix(m, []byte(s), starts, limit); b != start || bn != n {
				t.Errorf("%v: LongestSuffix([]byte, %d) = %d, %d; want %d, %d", m.Unit(), limit, b, bn, start, n)
			}
		}
	}
}

func TestRuneCount(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld", strings.Repeat("日本語", 9), "😀x😀yz"} {
		if got := RuneCount([]byte(s)); got != utf8.RuneCountInString(s) {
			t.Errorf("RuneCount(%q) = %d", s, got)
		}
	}
}

// BenchmarkRuneCount times RuneCount and, in the same iterations, the
// simple version (utf8.RuneCount) over Markdown-like text, and reports
// the simple version's time over RuneCount's.
func BenchmarkRuneCount(b *testing.B) {
	text := []byte(strings.Repeat("## Über `code` and prose, with a list:\n\n- one item — ünïcode 😀\n- two\n\n", 2000))
	var fast, simple time.Duration
	b.SetBytes(int64(2 * len(text)))
	for b.Loop() {
		start := time.Now()
		RuneCount(text)
		fast += time.Since(start)
		start = time.Now()
		utf8.RuneCount(text)
		simple += time.Since(start)
	}
	b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
}

func TestTargetArithmetic(t *testing.T) {
	for _, tc := range []struct{ n, ceil int }{{1, 2}, {2, 3}, {400, 600}, {801, 1202}} {
		if got := Ceiling(tc.n); got != tc.ceil {
			t.Errorf("Ceiling(%d) = %d, want %d", tc.n, got, tc.ceil)
		}
	}
	for _, tc := range []struct{ total, n, want int }{
		{100, 400, 100},  // shorter than the target: one piece
		{599, 400, 599},  // under 1.5 targets: one piece
		{600, 400, 300},  // 1.5 targets: two halves
		{1000, 400, 334}, // 2.5 targets: three near-equal pieces, not 400+400+200
		{4000, 800, 800}, // exact
		{4100, 800, 820}, // five pieces of 820, no tail of 100
		{10, 1, 1},
	} {
		if got := Balanced(tc.total, tc.n); got != tc.want {
			t.Errorf("Balanced(%d, %d) = %d, want %d", tc.total, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cur, p, b int
		want      bool
	}{{0, 900, 400, false}, {300, 100, 400, false}, {300, 300, 400, true}, {300, 200, 400, false}, {350, 101, 400, true}} {
		if got := NearerWithout(tc.cur, tc.p, tc.b); got != tc.want {
			t.Errorf("NearerWithout(%d, %d, %d) = %v, want %v", tc.cur, tc.p, tc.b, got, tc.want)
		}
	}
}
