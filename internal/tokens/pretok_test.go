package tokens

import "testing"

// FuzzASCII: where the ASCII fast path finds a piece, the general
// scanners find the same piece, having read as far (Index relies on the
// reads), in both encodings.
func FuzzASCII(f *testing.F) {
	for _, s := range handTexts {
		f.Add(s)
	}
	f.Add("Hello, World! It's 12345 \t\n\n  x")
	f.Add("camelCaseWORDS end.\r\n/path/to ")
	f.Fuzz(func(t *testing.T, text string) {
		s := []byte(text)
		for _, o200k := range []bool{false, true} {
			for i := range s {
				fast := scanner{s: s}
				j := fast.ascii(i, o200k)
				if j == 0 {
					continue
				}
				slow := scanner{s: s}
				var want int
				if o200k {
					want = slow.nextO200K(i)
				} else {
					want = slow.nextCL100K(i)
				}
				if j != want || fast.reach != slow.reach || fast.eof != slow.eof {
					t.Fatalf("o200k %v: %q at %d: fast path ends at %d (read to %d, eof %v), the general scanners at %d (%d, %v)",
						o200k, text, i, j, fast.reach, fast.eof, want, slow.reach, slow.eof)
				}
			}
		}
	})
}

// TestClassTable: the table of the Basic Multilingual Plane's classes
// holds what the Unicode tables say, surrogates and all.
func TestClassTable(t *testing.T) {
	for r := range rune(1 << 16) {
		if got, want := classOf(r), classOfSlow(r); got != want {
			t.Fatalf("class of %U: %08b, want %08b", r, got, want)
		}
	}
}
