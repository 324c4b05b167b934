package qdrantsink

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func fnv1a(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// expect builds the expected vector from hand-computed per-token values.
func expect(values map[string]float64) SparseVector {
	sum := map[uint32]float64{}
	for tok, v := range values {
		sum[fnv1a(tok)] += v
	}
	var sv SparseVector
	for _, idx := range slices.Sorted(mapKeys(sum)) {
		sv.Indices = append(sv.Indices, idx)
		sv.Values = append(sv.Values, float32(sum[idx]))
	}
	return sv
}

func mapKeys(m map[uint32]float64) func(func(uint32) bool) {
	return func(yield func(uint32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestBM25HandComputed(t *testing.T) {
	tests := []struct {
		name  string
		avgdl float64
		text  string
		want  map[string]float64
	}{
		// len 4 = avgdl: norm = 1.2; "the" tf 2: 2·2.2/(2+1.2) = 1.375; tf 1: 2.2/2.2 = 1.
		{"repeat and case", 4, "The cat, the HAT.", map[string]float64{"the": 1.375, "cat": 1, "hat": 1}},
		// len 2, avgdl 4: norm = 1.2·(0.25+0.375) = 0.75; tf 1: 2.2/1.75.
		{"short doc", 4, "Hello, world!", map[string]float64{"hello": 2.2 / 1.75, "world": 2.2 / 1.75}},
		// len 1, avgdl 256: norm = 1.2·(0.25+0.75/256).
		{"digits and letters", 256, "--abc123--", map[string]float64{"abc123": 2.2 / (1 + 1.2*(0.25+0.75/256))}},
		// Unicode letters lowercased; "é" is a letter, "-" and "’" separate; len 3.
		{"unicode", 3, "Été—ÉTÉ’s", map[string]float64{"été": 2 * 2.2 / (2 + 1.2), "s": 2.2 / (1 + 1.2)}},
		// Marks (U+0301 combining acute) are not letters: they split tokens.
		{"combining mark splits", 2, "e\u0301t", map[string]float64{"e": 2.2 / 2.2, "t": 2.2 / 2.2}},
		// Non-Latin digits are digits (Nd): "٣" (Arabic-Indic three).
		{"arabic-indic digit", 1, "x٣", map[string]float64{"x٣": 1}},
		// CJK ideographs are letters; a run is one token.
		{"cjk run", 1, "日本語", map[string]float64{"日本語": 1}},
		// Invalid UTF-8 separates tokens.
		{"invalid utf8", 2, "ab\xffcd", map[string]float64{"ab": 1, "cd": 1}},
		// An ASCII token counts as one whether a non-ASCII rune is next to
		// it or not; len 3 = avgdl.
		{"ascii beside non-ascii", 3, "foo—Foo foo", map[string]float64{"foo": 3 * 2.2 / (3 + 1.2)}},
		// A control byte that bit 5 would make a digit still separates.
		{"control byte after a key", 2, "abcdefgh\x11 abcdefgh1", map[string]float64{"abcdefgh": 1, "abcdefgh1": 1}},
		{"control bytes spelling a key's second word", 2, "abcdefgh12345678 abcdefgh\x11\x12\x13\x14\x15\x16\x17\x18",
			map[string]float64{"abcdefgh12345678": 1, "abcdefgh": 1}},
		// Tokens of 8, 9, 16 and 17 bytes (the key sizes), each twice; len 8.
		{"key sizes", 8, "abcdefgh ABCDEFGHI abcdefghijklmnop abcdefghijklmnopq ABCDEFGH abcdefghi ABCDEFGHIJKLMNOP ABCDEFGHIJKLMNOPQ",
			map[string]float64{"abcdefgh": 2 * 2.2 / 3.2, "abcdefghi": 2 * 2.2 / 3.2, "abcdefghijklmnop": 2 * 2.2 / 3.2, "abcdefghijklmnopq": 2 * 2.2 / 3.2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sortedVector(NewBM25(tt.avgdl).Encode(tt.text))
			want := expect(tt.want)
			if !slices.Equal(got.Indices, want.Indices) {
				t.Fatalf("Encode(%q).Indices = %v, want %v", tt.text, got.Indices, want.Indices)
			}
			for i := range want.Values {
				if math.Abs(float64(got.Values[i]-want.Values[i])) > 1e-6 {
					t.Fatalf("Encode(%q).Values = %v, want %v", tt.text, got.Values, want.Values)
				}
			}
		})
	}
}

func TestBM25Empty(t *testing.T) {
	for _, s := range []string{"", "  ", "!?—", "\xff\xfe"} {
		if sv := NewBM25(256).Encode(s); len(sv.Indices) != 0 || len(sv.Values) != 0 {
			t.Errorf("Encode(%q) = %v, want empty", s, sv)
		}
	}
}

func TestBM25KnownIndex(t *testing.T) {
	// FNV-1a 32 of "a" is 0xe40c292c: a fixed point for other languages.
	if sv := NewBM25(1).Encode("A"); len(sv.Indices) != 1 || sv.Indices[0] != 0xe40c292c || sv.Values[0] != 1 {
		t.Fatalf(`Encode("A") = %v, want [0xe40c292c]=1`, sv)
	}
}

func TestBM25Collisions(t *testing.T) {
	// "costarring" and "liquid" collide under FNV-1a 32; so do "declinate"
	// and "macallums". Their values add into one index; repeats still count
	// per token.
	if fnv1a("costarring") != fnv1a("liquid") || fnv1a("declinate") != fnv1a("macallums") {
		t.Fatal("test words do not collide")
	}
	text := "costarring liquid liquid declinate macallums x"
	got := sortedVector(NewBM25(6).Encode(text))
	// len 6 = avgdl: norm = 1.2.
	one, two := 2.2/2.2, 2*2.2/3.2
	want := expect(map[string]float64{"costarring": one + two, "declinate": 2 * one, "x": one})
	if !slices.Equal(got.Indices, want.Indices) {
		t.Fatalf("Indices = %v, want %v", got.Indices, want.Indices)
	}
	for i := range want.Values {
		if math.Abs(float64(got.Values[i]-want.Values[i])) > 1e-6 {
			t.Fatalf("Values = %v, want %v", got.Values, want.Values)
		}
	}
}

// naiveBM25 is the oracle: the formula written the obvious way.
func naiveBM25(text string, avgdl float64) SparseVector {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == utf8.RuneError && size <= 1 {
			flush()
			continue
		}
		if isTokenRune(r) {
			cur.WriteRune(toLower(r))
		} else {
			flush()
		}
	}
	flush()
	tf := map[string]int{}
	for _, tk := range toks {
		tf[tk]++
	}
	vals := map[string]float64{}
	n := float64(len(toks))
	for tk, f := range tf {
		x := float64(f)
		vals[tk] = x * (BM25K1 + 1) / (x + BM25K1*(1-BM25B+BM25B*n/avgdl))
	}
	return expect(vals)
}

func TestBM25MatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAbBzZ09 .,-\n\tÉéßΣσς日本\u0301٣\U0001F600")
	for range 500 {
		var sb strings.Builder
		for range rng.IntN(60) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		got, want := sortedVector(NewBM25(7).Encode(text)), naiveBM25(text, 7)
		if !slices.Equal(got.Indices, want.Indices) {
			t.Fatalf("Encode(%q).Indices = %v, want %v", text, got.Indices, want.Indices)
		}
		for i := range want.Values {
			if math.Abs(float64(got.Values[i]-want.Values[i])) > 1e-5 {
				t.Fatalf("Encode(%q).Values = %v, want %v", text, got.Values, want.Values)
			}
		}
	}
}

// checkOracle fails t unless got is the oracle's vector of text, up to
// order.
func checkOracle(t *testing.T, got SparseVector, text string, avgdl float64) {
	t.Helper()
	sorted, want := sortedVector(got), naiveBM25(text, avgdl)
	if !slices.Equal(sorted.Indices, want.Indices) {
		t.Fatalf("Encode(%.200q): %d indices, want %d: %v, want %v", text, len(sorted.Indices), len(want.Indices), sorted.Indices, want.Indices)
	}
	for i := range want.Values {
		if math.Abs(float64(sorted.Values[i]-want.Values[i])) > 1e-5 {
			t.Fatalf("Encode(%.200q).Values = %v, want %v", text, sorted.Values, want.Values)
		}
	}
}

// randomText returns a text of about n bytes of words of 1 to 20
// characters, mostly ASCII letters of both cases and digits, with some
// non-ASCII letters, separators of several kinds and invalid bytes.
func randomText(rng *rand.Rand, n int, vocab int) string {
	letters := []string{"a", "B", "c", "D", "e", "7", "0", "z", "Q", "é", "Σ", "日", "ß", "٣"}
	// "\x11" is a digit once bit 5 is set: a key must not take it in.
	// The separators unmarkSeparators takes out of the runs, and byte
	// sequences that look like them but are not.
	seps := []string{" ", " ", " ", ", ", ".\n", "—", "\u0301", "\xff", "\t", "-", "’", "\x11", "@",
		"“", "…", "\u00a0", "\u2000", "\u203f", "\u2071", "\xe2\x80", "\xe2\x80a", "\xc2", "\xc2\xa1"}
	var sb strings.Builder
	for sb.Len() < n {
		w := rng.IntN(vocab)
		r := rand.New(rand.NewPCG(uint64(w), 9)) // word w is always spelt alike
		for range 1 + r.IntN(20) {
			c := letters[r.IntN(len(letters))]
			if rng.IntN(50) == 0 { // case varies between occurrences
				c = strings.ToUpper(c)
			}
			sb.WriteString(c)
		}
		sb.WriteString(seps[rng.IntN(len(seps))])
	}
	return sb.String()
}

// TestBM25MatchesOracleLongTexts compares long texts, whose runs cross the
// 64-byte blocks of the bitmap, with the oracle, through one scratch space
// reused call after call.
func TestBM25MatchesOracleLongTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sc := newBM25Scratch()
	for range 300 {
		text := randomText(rng, rng.IntN(3000), 1+rng.IntN(400))
		checkOracle(t, sc.encode(text, 100), text, 100)
	}
}

// TestBM25VocabularyEviction runs enough distinct words through one scratch
// space to fill the vocabulary many times, so that it drops the words not
// seen lately, or all of them; every vector stays exact.
func TestBM25VocabularyEviction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sc := newBM25Scratch()
	dropped := 0
	for call := range 400 {
		var sb strings.Builder
		for range 600 {
			// Fresh words, and some common to all calls.
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&sb, "common%d ", rng.IntN(50))
			} else {
				fmt.Fprintf(&sb, "w%dx%d ", call, rng.IntN(1<<20))
			}
		}
		before := sc.used
		text := sb.String()
		checkOracle(t, sc.encode(text, 256), text, 256)
		if sc.used < before {
			dropped++
		}
		if len(sc.vocab) > vocabMax {
			t.Fatalf("vocabulary grew to %d entries", len(sc.vocab))
		}
	}
	if dropped == 0 {
		t.Fatal("the vocabulary never dropped words: the test does not reach eviction")
	}
}

// TestBM25EpochWrap wraps the call counter: the vocabulary starts afresh
// and no count of an earlier call leaks in.
func TestBM25EpochWrap(t *testing.T) {
	sc := newBM25Scratch()
	rng := rand.New(rand.NewPCG(7, 7))
	sc.encode("the same words again and again", 10)
	sc.epoch = ^uint32(0) - 3
	for range 10 {
		text := randomText(rng, 500, 30) + " the same words again and again"
		checkOracle(t, sc.encode(text, 10), text, 10)
	}
	if sc.epoch > 100 {
		t.Fatalf("epoch = %d after the wrap, want a fresh count", sc.epoch)
	}
}

// TestBM25HugeText has more distinct words in one text than the
// vocabulary keeps between calls: the table grows for it, and shrinks back
// on the next call.
func TestBM25HugeText(t *testing.T) {
	sc := newBM25Scratch()
	var sb strings.Builder
	for i := range 3 * vocabMax / 4 {
		fmt.Fprintf(&sb, "w%d W%d ", i, i)
	}
	text := sb.String()
	checkOracle(t, sc.encode(text, 256), text, 256)
	if len(sc.vocab) <= vocabMax {
		t.Fatalf("vocabulary of %d entries for %d distinct words", len(sc.vocab), 3*vocabMax/4)
	}
	checkOracle(t, sc.encode("after the huge text", 256), "after the huge text", 256)
	if len(sc.vocab) != vocabMax {
		t.Fatalf("vocabulary of %d entries after a small text, want %d", len(sc.vocab), vocabMax)
	}
}

// TestBM25LongTokenCollision finds a token longer than the vocabulary keys
// and a short one with equal FNV-1a hashes, and two long ones, and checks
// that their values add into one index: with one long token, two, and
// more than longFew, and with long tokens that collide with nothing.
func TestBM25LongTokenCollision(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
		}
		return string(b)
	}
	short := map[uint32]string{}
	for range 1 << 17 {
		w := word(1 + rng.IntN(shortMax))
		short[fnv1a(w)] = w
	}
	var long, other string
	for range 1 << 20 {
		w := word(shortMax + 1 + rng.IntN(8))
		if s, ok := short[fnv1a(w)]; ok {
			long, other = w, s
			break
		}
	}
	if long == "" {
		t.Fatal("no collision found")
	}
	var long1, long2 string
	longs := map[uint32]string{}
	for long1 == "" {
		w := word(shortMax + 1 + rng.IntN(8))
		if l, ok := longs[fnv1a(w)]; ok && l != w {
			long1, long2 = l, w
		}
		longs[fnv1a(w)] = w
	}
	many := "abcdefghijklmnopqrstu bcdefghijklmnopqrstuv cdefghijklmnopqrstuvw defghijklmnopqrstuvwx efghijklmnopqrstuvwxy"
	enc := NewBM25(4)
	for _, text := range []string{
		long + " " + other + " " + other,
		other + " " + long + " x " + long,
		long1 + " y " + long2 + " " + long1,
		"x " + long2 + " " + long1,
		many + " " + long + " " + other,
		many + " " + long1 + " " + long2,
		many + " " + other + " " + many,
		"z " + long + " z " + long1,
	} {
		sv := enc.Encode(text)
		checkOracle(t, sv, text, 4)
	}
}

func FuzzBM25(f *testing.F) {
	f.Add("The cat, the HAT.")
	f.Add("costarring liquid")
	f.Add("ab\xffcd Été")
	f.Add("abcdefghijklmnopq ABCDEFGHIJKLMNOP abcdefgh—abcdefghi")
	f.Add("don’t “x”\u00a0y… \xe2\x80a \xe2\x80\u2071 \xc2\xa0\xc2")
	f.Fuzz(func(t *testing.T, text string) {
		sc := newBM25Scratch()
		sv := sc.encode(text, 256)
		checkOracle(t, sv, text, 256)
		if p := newPortableTwin(sc).encode(text, 256); !slices.Equal(sv.Indices, p.Indices) || !slices.Equal(sv.Values, p.Values) {
			t.Fatalf("kernels disagree: %v, portable %v", sv, p)
		}
		if len(sv.Indices) != len(sv.Values) {
			t.Fatalf("lengths differ: %d indices, %d values", len(sv.Indices), len(sv.Values))
		}
		seen := map[uint32]bool{}
		for i := range sv.Indices {
			if seen[sv.Indices[i]] {
				t.Fatalf("repeated index %d: %v", sv.Indices[i], sv.Indices)
			}
			seen[sv.Indices[i]] = true
			if !(sv.Values[i] > 0) || math.IsInf(float64(sv.Values[i]), 0) {
				t.Fatalf("value %v out of range", sv.Values[i])
			}
		}
		again := NewBM25(256).Encode(text)
		if !slices.Equal(sv.Indices, again.Indices) || !slices.Equal(sv.Values, again.Values) {
			t.Fatal("not deterministic")
		}
	})
}

func isTokenRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func toLower(r rune) rune { return unicode.ToLower(r) }

// sortedVector returns sv with its entries sorted by index.
func sortedVector(sv SparseVector) SparseVector {
	idx := make([]int, len(sv.Indices))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(sv.Indices[a], sv.Indices[b]) })
	var out SparseVector
	for _, i := range idx {
		out.Indices = append(out.Indices, sv.Indices[i])
		out.Values = append(out.Values, sv.Values[i])
	}
	return out
}

// TestBM25UnmarkedSeparators checks that the runes unmarkSeparators takes
// out of the runs are separators for the Unicode tables Go has, and that a
// text of ASCII words between them has no non-ASCII byte left.
func TestBM25UnmarkedSeparators(t *testing.T) {
	var sb strings.Builder
	for r := rune(0x2000); r <= 0x203f; r++ {
		if isTokenRune(r) {
			t.Fatalf("%U is a letter or digit", r)
		}
		sb.WriteString("ab")
		sb.WriteRune(r)
	}
	sb.WriteString("x\u00a0y")
	text := sb.String()
	checkOracle(t, NewBM25(256).Encode(text), text, 256)
	pad := make([]byte, (len(text)+63)/64*64+64)
	copy(pad, text)
	cand, high := make([]uint64, len(pad)/64), make([]uint64, len(pad)/64)
	if !classifyBytesGo(pad, cand, high) || unmarkSeparators(text, cand, high) {
		t.Fatalf("non-ASCII bytes left: %x", high)
	}
}

func TestBM25FirstOccurrenceOrder(t *testing.T) {
	// "liquid" collides with the earlier "costarring" and joins its entry.
	sv := NewBM25(256).Encode("b A b c costarring d liquid")
	want := []uint32{fnv1a("b"), fnv1a("a"), fnv1a("c"), fnv1a("costarring"), fnv1a("d")}
	if !slices.Equal(sv.Indices, want) {
		t.Fatalf("Indices = %v, want first-occurrence order %v", sv.Indices, want)
	}
}

// TestBM25CollisionsAcrossCalls runs texts full of colliding tokens through
// one encoder many times (its scratch space is reused) against the oracle.
func TestBM25CollisionsAcrossCalls(t *testing.T) {
	words := []string{"costarring", "liquid", "declinate", "macallums", "altarage", "zinke", "altarages", "zinkes", "Liquid", "other"}
	rng := rand.New(rand.NewPCG(7, 8))
	enc := NewBM25(5)
	for range 300 {
		var parts []string
		for range rng.IntN(30) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		text := strings.Join(parts, " ")
		got, want := sortedVector(enc.Encode(text)), naiveBM25(text, 5)
		if !slices.Equal(got.Indices, want.Indices) {
			t.Fatalf("Encode(%q).Indices = %v, want %v", text, got.Indices, want.Indices)
		}
		for i := range want.Values {
			if math.Abs(float64(got.Values[i]-want.Values[i])) > 1e-5 {
				t.Fatalf("Encode(%q).Values = %v, want %v", text, got.Values, want.Values)
			}
		}
	}
}

// TestBM25ManyDistinctTokens grows the table several times.
func TestBM25ManyDistinctTokens(t *testing.T) {
	var sb strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&sb, "w%d ", i%20000)
	}
	text := sb.String()
	got, want := sortedVector(NewBM25(256).Encode(text)), naiveBM25(text, 256)
	if !slices.Equal(got.Indices, want.Indices) || len(got.Indices) != 20000 {
		t.Fatalf("%d indices, want %d", len(got.Indices), len(want.Indices))
	}
}

// TestBM25SharedPrefixes has thousands of distinct tokens whose first 8
// bytes (their key's first word) are alike, each seen several times, so
// that probes run past entries that differ only in the second word.
func TestBM25SharedPrefixes(t *testing.T) {
	var sb strings.Builder
	for range 3 {
		for i := range 6000 {
			fmt.Fprintf(&sb, "Prefixab%s ", strconv.FormatInt(int64(i*7919), 36))
		}
	}
	text := sb.String()
	sc := newBM25Scratch()
	for range 2 {
		checkOracle(t, sc.encode(text, 256), text, 256)
	}
}

// newPortableTwin returns a scratch space hashing like sc but counting
// with the Go kernels, where sc may use assembly ones.
func newPortableTwin(sc *bm25Scratch) *bm25Scratch {
	twin := newBM25Scratch()
	twin.mul0, twin.mul1, twin.mulH = sc.mul0, sc.mul1, sc.mulH
	twin.portable = true
	return twin
}

// TestBM25KernelsMatchPortable runs the same texts through the default
// kernels (assembly where there are some) and the Go ones: the vectors,
// in order, and the vocabulary tables are identical.
func TestBM25KernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	sc := newBM25Scratch()
	twin := newPortableTwin(sc)
	for range 300 {
		text := randomText(rng, rng.IntN(5000), 1+rng.IntN(3000))
		if rng.IntN(3) == 0 {
			text = strings.ToUpper(text)
		}
		got, want := sc.encode(text, 100), twin.encode(text, 100)
		if !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Values, want.Values) {
			t.Fatalf("Encode(%.200q) = %v, portable kernels %v", text, got, want)
		}
		if !slices.Equal(sc.vocab, twin.vocab) {
			t.Fatalf("vocabulary tables differ after %.200q", text)
		}
	}
}
