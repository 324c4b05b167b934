package sentences

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/poll"
)

func texts(text string, spans []Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = text[s.Start:s.End]
	}
	return out
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", " \n\t ", nil},
		{"one", "Hello world.", []string{"Hello world."}},
		{"no terminator", "Hello world", []string{"Hello world"}},
		{"three", "The cat sat. The dog ran. The bird flew.", []string{"The cat sat.", "The dog ran.", "The bird flew."}},
		{"question exclamation", "Is it? Yes! Fine.", []string{"Is it?", "Yes!", "Fine."}},
		{"e.g.", "Use a tool, e.g. Go. It is fast.", []string{"Use a tool, e.g. Go.", "It is fast."}},
		{"e.g. capital", "Many e.g. Python work. Done.", []string{"Many e.g. Python work.", "Done."}},
		{"i.e.", "One value, i.e. The answer, is 42. Next.", []string{"One value, i.e. The answer, is 42.", "Next."}},
		{"Dr.", "Dr. Smith arrived. He sat.", []string{"Dr. Smith arrived.", "He sat."}},
		{"Mr. Mrs.", "Mr. and Mrs. Jones left. Bye.", []string{"Mr. and Mrs. Jones left.", "Bye."}},
		{"Prof.", "Ask Prof. Lee. She knows.", []string{"Ask Prof. Lee.", "She knows."}},
		{"et al. lower", "Smith et al. showed it. Then more.", []string{"Smith et al. showed it.", "Then more."}},
		{"et al. year", "Smith et al. (2020) showed it.", []string{"Smith et al. (2020) showed it."}},
		{"et al. capital", "It was shown by Smith et al. The proof is long.", []string{"It was shown by Smith et al.", "The proof is long."}},
		{"vs.", "Go vs. Rust is a debate. Both win.", []string{"Go vs. Rust is a debate.", "Both win."}},
		{"Fig.", "See Fig. 4 for details. It helps.", []string{"See Fig. 4 for details.", "It helps."}},
		{"Eq. paren", "See Eq. (4). It holds.", []string{"See Eq. (4).", "It holds."}},
		{"Tab.", "Tab. 2 lists them. Read it.", []string{"Tab. 2 lists them.", "Read it."}},
		{"No.", "Item No. 5 is here. No. It is not.", []string{"Item No. 5 is here.", "No.", "It is not."}},
		{"no. lowercase", "See no. 4 below. Ok.", []string{"See no. 4 below.", "Ok."}},
		{"no lowercase word", "I said no. Then left.", []string{"I said no.", "Then left."}},
		{"etc. capital", "Apples, pears, etc. The rest is fruit.", []string{"Apples, pears, etc.", "The rest is fruit."}},
		{"etc. lower", "Apples, pears, etc. are fruit.", []string{"Apples, pears, etc. are fruit."}},
		{"initials", "J. R. R. Tolkien wrote it. Read it.", []string{"J. R. R. Tolkien wrote it.", "Read it."}},
		{"initial name", "Written by J. Smith in May. Good.", []string{"Written by J. Smith in May.", "Good."}},
		{"letter then starter", "Take vitamin C. The body needs it.", []string{"Take vitamin C.", "The body needs it."}},
		{"U.S.", "The U.S. Army came. We left.", []string{"The U.S. Army came.", "We left."}},
		{"U.S. end", "He moved to the U.S. The move was long.", []string{"He moved to the U.S.", "The move was long."}},
		{"Ph.D.", "She has a Ph.D. in physics. Wow.", []string{"She has a Ph.D. in physics.", "Wow."}},
		{"decimal", "Pi is 3.14 roughly. Yes.", []string{"Pi is 3.14 roughly.", "Yes."}},
		{"version", "Use v1.2.3 now. Ok.", []string{"Use v1.2.3 now.", "Ok."}},
		{"url", "Visit example.com today. Ok.", []string{"Visit example.com today.", "Ok."}},
		{"ellipsis lower", "I was... thinking. Ok.", []string{"I was... thinking.", "Ok."}},
		{"ellipsis upper", "I was... The end came.", []string{"I was...", "The end came."}},
		{"unicode ellipsis", "Wait… Then go.", []string{"Wait…", "Then go."}},
		{"closing quote", `He said "Stop." Then he left.`, []string{`He said "Stop."`, "Then he left."}},
		{"curly quote", "He said “Stop.” Then he left.", []string{"He said “Stop.”", "Then he left."}},
		{"closing paren", "(This is aside.) Main text.", []string{"(This is aside.)", "Main text."}},
		{"question quote lower", `"Why?" he asked. Fine.`, []string{`"Why?" he asked.`, "Fine."}},
		{"emphasis", "**Note.** The rest.", []string{"**Note.**", "The rest."}},
		{"number end", "It began in 2020. The end.", []string{"It began in 2020.", "The end."}},
		{"quote start", `He left. "Bye," she said.`, []string{"He left.", `"Bye," she said.`}},
		{"paren start", "He left. (She stayed.)", []string{"He left.", "(She stayed.)"}},
		{"digit start", "He left. 5 people stayed.", []string{"He left.", "5 people stayed."}},
		{"multi punct", "Really?! Yes.", []string{"Really?!", "Yes."}},
		{"cjk", "这是一句。这是两句！", []string{"这是一句。", "这是两句！"}},
		{"newline kept", "First line\nsecond line. Next.", []string{"First line\nsecond line.", "Next."}},
		{"abbr across newline", "Ask Dr.\nSmith now. Ok.", []string{"Ask Dr.\nSmith now.", "Ok."}},
		{"blank line", "No period here\n\nNew paragraph", []string{"No period here", "New paragraph"}},
		{"blank line with spaces", "One\n  \t\nTwo", []string{"One", "Two"}},
		{"list", "Items:\n- one\n- two\n* three\n+ four", []string{"Items:", "- one", "- two", "* three", "+ four"}},
		{"ordered list", "Steps:\n1. First step\n2. Second step", []string{"Steps:", "1. First step", "2. Second step"}},
		{"ordered list at start", "1. First step\n2) Second step", []string{"1. First step", "2) Second step"}},
		{"heading", "# Title\nBody text here. More.", []string{"# Title", "Body text here.", "More."}},
		{"heading after text", "Text\n## Sub\nMore", []string{"Text", "## Sub", "More"}},
		{"hashtag", "Text\n#tag more", []string{"Text\n#tag more"}},
		{"quote block", "Text\n> quoted", []string{"Text", "> quoted"}},
		{"quote continues", "> One sentence\n> wraps here. Two\n> wraps too.", []string{"> One sentence\n> wraps here.", "Two\n> wraps too."}},
		{"quote paragraphs", "> One\n>\n> Two", []string{"> One", ">\n> Two"}},
		{"quote heading", "> ### Head\n> Body text", []string{"> ### Head", "> Body text"}},
		{"quote list", "> Intro\n> - item", []string{"> Intro", "> - item"}},
		{"quote lazy continuation", "> Quoted\nText", []string{"> Quoted\nText"}},
		{"table line", "Text\n| a | b |", []string{"Text", "| a | b |"}},
		{"dash in text", "A range\n-5 to 5", []string{"A range\n-5 to 5"}},
		{"crlf", "One.\r\nTwo.\r\n\r\nThree", []string{"One.", "Two.", "Three"}},
		{"nbsp space", "One.\u00a0Two.", []string{"One.", "Two."}},
		{"trailing spaces", "  Hello.   World.  ", []string{"Hello.", "World."}},
		{"period then code", "Run it. `go test` works.", []string{"Run it.", "`go test` works."}},
		{"lowercase start after period", "the end. and more", []string{"the end.", "and more"}},
		{"lowercase after abbreviation", "Use e.g. the tool. Ok.", []string{"Use e.g. the tool.", "Ok."}},
		{"lowercase after number", "It grew in 2014. and more", []string{"It grew in 2014. and more"}},
		{"lowercase after version", "Since Go 1.18. the rule holds", []string{"Since Go 1.18. the rule holds"}},
		{"lowercase after quoted period", `He said "stop." and left.`, []string{`He said "stop." and left.`}},
		{"lowercase after bracketed period", "(See above.) then go.", []string{"(See above.) then go."}},
		{"lone period", "Note the . prefix here.", []string{"Note the . prefix here."}},
		{"question before lowercase", "Is it UTF-8? how many bits? None.", []string{"Is it UTF-8?", "how many bits?", "None."}},
		{"exclamation in parentheses", "It compiles (fast!) to binaries.", []string{"It compiles (fast!) to binaries."}},
		{"abbreviation after bracket", "Runtimes(e.g. containerd) work.", []string{"Runtimes(e.g. containerd) work."}},
		{"version at line start", "Added in Go\n1.21. Interop followed.", []string{"Added in Go\n1.21.", "Interop followed."}},
		{"bold list label", "**1.** Marking types. Done.", []string{"**1.** Marking types.", "Done."}},
		{"initial before initial", "Morris, R. A. wrote it.", []string{"Morris, R. A. wrote it."}},
		{"initial before starter", "In cluster B. Even so, it works.", []string{"In cluster B.", "Even so, it works."}},
		{"CA. state", "It is in San Jose, CA. This event is free.", []string{"It is in San Jose, CA.", "This event is free."}},
		{"ca. circa", "Built ca. 1900 by hand.", []string{"Built ca. 1900 by hand."}},
		{"ms. unit", "It takes 5 ms. The rest waits.", []string{"It takes 5 ms.", "The rest waits."}},
		{"Ms. title", "Ask Ms. Lee today.", []string{"Ask Ms. Lee today."}},
		{"sec. unit", "Wait 30 sec. Then retry.", []string{"Wait 30 sec.", "Then retry."}},
		{"Sec. section", "See Sec. 3 for it.", []string{"See Sec. 3 for it."}},
		{"app. word", "Build a hybrid app. This is the main file.", []string{"Build a hybrid app.", "This is the main file."}},
		{"tab. word", "Jobs are under the tab. Exceptions differ.", []string{"Jobs are under the tab.", "Exceptions differ."}},
		{"ref. word", "Update the git ref. The tag moves.", []string{"Update the git ref.", "The tag moves."}},
		{"Ref. number", "See Ref. 12 for it.", []string{"See Ref. 12 for it."}},
		{"eg. lowercase", "Some parts (eg. klog) are shared.", []string{"Some parts (eg. klog) are shared."}},
		{"St. name", "Thanks to Eric St. Martin and Ann. Bye.", []string{"Thanks to Eric St. Martin and Ann.", "Bye."}},
		{"St. street", "It is on Main St. The shop is old.", []string{"It is on Main St.", "The shop is old."}},
		{"aka.", "The hub (aka. the main cluster) runs it.", []string{"The hub (aka. the main cluster) runs it."}},
		{"months", "Due Jan. 5 at noon. Ok.", []string{"Due Jan. 5 at noon.", "Ok."}},
		{"a.m.", "At 5 p.m. The shop closes.", []string{"At 5 p.m.", "The shop closes."}},
		{"cf.", "This holds (cf. Smith). Next.", []string{"This holds (cf. Smith).", "Next."}},
		{"inc", "Made by Acme Inc. The firm is old.", []string{"Made by Acme Inc.", "The firm is old."}},
		{"long word", strings.Repeat("x", 100) + ". Next.", []string{strings.Repeat("x", 100) + ".", "Next."}},
		{"only punctuation", "... !!! ???", []string{"...", "!!!", "???"}},
		{"period at end no space", "End.", []string{"End."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(tt.in, Split(tt.in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkSpans(t, tt.in, 0, len(tt.in), Split(tt.in))
		})
	}
}

func TestAppendProtected(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		protect []string // substrings to protect (first occurrence)
		want    []string
	}{
		{"ref with period", "See Fig. 3. The result holds.", []string{"Fig. 3."}, []string{"See Fig. 3. The result holds."}},
		{"inline math", "Let $x. Y$ be. Then go.", []string{"$x. Y$"}, []string{"Let $x. Y$ be.", "Then go."}},
		{"math newline", "A $x\n- y$ b. Then.", []string{"$x\n- y$"}, []string{"A $x\n- y$ b.", "Then."}},
		{"code span", "Run `a. B` now. Ok.", []string{"`a. B`"}, []string{"Run `a. B` now.", "Ok."}},
		{"protected at end", "Value $x$.", []string{"$x$"}, []string{"Value $x$."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var protect []Span
			for _, p := range tt.protect {
				i := strings.Index(tt.in, p)
				protect = append(protect, Span{i, i + len(p)})
			}
			spans := Append(nil, tt.in, 0, len(tt.in), protect, new(poll.Poller))
			got := texts(tt.in, spans)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Append(%q, %v) = %q, want %q", tt.in, tt.protect, got, tt.want)
			}
			checkSpans(t, tt.in, 0, len(tt.in), spans)
		})
	}
}

func TestAppendRange(t *testing.T) {
	text := "Ignore. One two. Three. Ignore."
	from, to := strings.Index(text, "One"), strings.LastIndex(text, " Ignore")
	got := texts(text, Append([]Span{{0, 0}}, text, from, to, []Span{{0, 3}, {100, 101}}, new(poll.Poller))[1:])
	want := []string{"One two.", "Three."}
	if !slices.Equal(got, want) {
		t.Errorf("Append(range) = %q, want %q", got, want)
	}
	if got := Append(nil, text, 5, 5, nil, new(poll.Poller)); got != nil {
		t.Errorf("Append(empty range) = %v, want nil", got)
	}
	if got := Append(nil, text, 0, 1000, nil, new(poll.Poller)); got != nil {
		t.Errorf("Append(out of range) = %v, want nil", got)
	}
}

// checkSpans asserts the segmenter's invariants: spans in order, within
// the range, trimmed, and every non-whitespace byte covered.
func checkSpans(t testing.TB, text string, from, to int, spans []Span) {
	t.Helper()
	prev := from
	for _, s := range spans {
		if s.Start < prev || s.End <= s.Start || s.End > to {
			t.Fatalf("spans %v out of order or range [%d,%d) in %q", spans, from, to, text)
		}
		if gap := text[prev:s.Start]; CountWords(gap) != 0 {
			t.Fatalf("text %q between sentences not covered in %q", gap, text)
		}
		if a, b := TrimSpace(text, s.Start, s.End); a != s.Start || b != s.End {
			t.Fatalf("span %q not trimmed", text[s.Start:s.End])
		}
		prev = s.End
	}
	if CountWords(text[prev:to]) != 0 {
		t.Fatalf("tail %q not covered in %q", text[prev:to], text)
	}
}

func TestCountWords(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   ", 0},
		{"a", 1},
		{"a b  c", 3},
		{" a\tb\nc\r\nd ", 4},
		{"a\u00a0b", 2},
		{"a\u2003b\u3000c", 3},
		{"a\x1cb\x1fc", 3},
		{"a\u200bb", 1}, // zero width space is not White_Space
		{"héllo wörld", 2},
		{"a\x85b", 1},    // a lone 0x85 byte is not U+0085
		{"a\u0085b", 2},  // U+0085 is
		{"\xff \xfe", 2}, // invalid bytes are words
		{"日本語 テキスト", 2},
	}
	for _, tt := range tests {
		if got := CountWords(tt.in); got != tt.want {
			t.Errorf("CountWords(%q) = %d, want %d", tt.in, got, tt.want)
		}
		if got := len(WordStarts(nil, tt.in)); got != tt.want {
			t.Errorf("len(WordStarts(%q)) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestIsSpaceMatchesPython(t *testing.T) {
	// The set of Python's str.split() whitespace.
	want := map[rune]bool{}
	for _, r := range "\t\n\v\f\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000" {
		want[r] = true
	}
	for r := rune(0); r < 0x11000; r++ {
		if got := IsSpace(r); got != want[r] {
			t.Errorf("IsSpace(%U) = %v, want %v", r, got, want[r])
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"Dr. Smith. Hi!", "a... B", "1. x\n2. y", "“Hi.” Yo", "\xe2\x80", "x.\xe3\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spans := Split(s)
		checkSpans(t, s, 0, len(s), spans)
		if utf8.ValidString(s) {
			for _, sp := range spans {
				if !utf8.ValidString(s[sp.Start:sp.End]) {
					t.Fatalf("span %v cuts a rune in %q", sp, s)
				}
			}
		}
	})
}

func BenchmarkSplit(b *testing.B) {
	para := "Smith et al. showed in Fig. 3 that the U.S. data hold, i.e. the model fits. " +
		"See Eq. (4). It holds for 3.14 and more... The end is near! Is it? Yes.\n\n"
	text := strings.Repeat(para, 4000)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	var dst []Span
	for b.Loop() {
		dst = Append(dst[:0], text, 0, len(text), nil, new(poll.Poller))
	}
}

func BenchmarkSplitNoSentenceEnd(b *testing.B) {
	text := strings.Repeat("word ", 2<<20)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Split(text)
	}
}

// BenchmarkCountWords times CountWords and, in the same iterations, the
// simple version without its ASCII fast path (every character through
// SpaceAt), and reports the simple version's time over CountWords'.
func BenchmarkCountWords(b *testing.B) {
	text := strings.Repeat("Some words here, and a few more.\n", 30000)
	simple := func(s string) int {
		n, inWord := 0, false
		for i := 0; i < len(s); {
			sp, size := SpaceAt(s, i)
			if !sp && !inWord {
				n++
			}
			inWord = !sp
			i += size
		}
		return n
	}
	if CountWords(text) != simple(text) {
		b.Fatal("CountWords and the simple version disagree")
	}
	var fast, slow time.Duration
	b.ReportAllocs()
	b.SetBytes(int64(2 * len(text)))
	for b.Loop() {
		start := time.Now()
		CountWords(text)
		fast += time.Since(start)
		start = time.Now()
		simple(text)
		slow += time.Since(start)
	}
	b.ReportMetric(float64(slow)/float64(fast), "simple/fast")
}

// Split returns the sentences of text as byte spans, in order.
func Split(text string) []Span {
	return Append(nil, text, 0, len(text), nil, new(poll.Poller))
}
