package bm25

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the current encoder")

// reference is the package documentation's definition written the obvious
// way: the oracle of every test. query gives the query vector.
func reference(text string, avgdl float64, query bool) Vector {
	var tokens []string
	var tok []byte
	flush := func() {
		if len(tok) > 0 {
			tokens = append(tokens, string(tok))
			tok = tok[:0]
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:]) // an ill-formed byte: utf8.RuneError, not a letter
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			tok = utf8.AppendRune(tok, unicode.ToLower(r))
			continue
		}
		flush()
	}
	flush()
	tf := map[string]int{}
	var distinct []string // in the order of their first occurrence
	for _, t := range tokens {
		if tf[t] == 0 {
			distinct = append(distinct, t)
		}
		tf[t]++
	}
	norm := float64(1.2 * (0.25 + (0.75*float64(len(tokens)))/avgdl))
	var v Vector
	var sums []float64
	entry := map[uint32]int{}
	for _, t := range distinct {
		h := fnv.New32a()
		h.Write([]byte(t))
		index := h.Sum32()
		f := float64(tf[t])
		w := (f * 2.2) / (f + norm)
		if j, ok := entry[index]; ok {
			sums[j] += w
			continue
		}
		entry[index] = len(v.Indices)
		v.Indices = append(v.Indices, index)
		sums = append(sums, w)
	}
	for _, s := range sums {
		if query {
			s = 1
		}
		v.Values = append(v.Values, float32(s))
	}
	return v
}

// same reports whether a and b have the same entries in the same order,
// values compared bit for bit.
func same(a, b Vector) bool {
	bitsOf := func(vs []float32) []uint32 {
		out := make([]uint32, len(vs))
		for i, v := range vs {
			out[i] = math.Float32bits(v)
		}
		return out
	}
	return slices.Equal(a.Indices, b.Indices) && slices.Equal(bitsOf(a.Values), bitsOf(b.Values))
}

// checkDocument fails t unless got is the reference document vector of
// text.
func checkDocument(t *testing.T, got Vector, text string, avgdl float64) {
	t.Helper()
	if want := reference(text, avgdl, false); !same(got, want) {
		t.Fatalf("Document(%.200q) (avgdl %v) =\n%v, want\n%v", text, avgdl, got, want)
	}
}

// checkQuery fails t unless got is the reference query vector of text.
func checkQuery(t *testing.T, got Vector, text string) {
	t.Helper()
	if want := reference(text, 1, true); !same(got, want) {
		t.Fatalf("Query(%.200q) =\n%v, want\n%v", text, got, want)
	}
}

func fnv1a(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// TestReferenceHandComputed checks the oracle itself on values computed by
// hand from the formula.
func TestReferenceHandComputed(t *testing.T) {
	tests := []struct {
		name  string
		avgdl float64
		text  string
		want  map[string]float64
	}{
		// n 4 = avgdl: norm = 1.2; "the" tf 2: 2·2.2/(2+1.2) = 1.375; tf 1: 2.2/2.2 = 1.
		{"repeat and case", 4, "The cat, the HAT.", map[string]float64{"the": 1.375, "cat": 1, "hat": 1}},
		// n 2, avgdl 4: norm = 1.2·(0.25+0.375) = 0.75; tf 1: 2.2/1.75.
		{"short doc", 4, "Hello, world!", map[string]float64{"hello": 2.2 / 1.75, "world": 2.2 / 1.75}},
		// n 1, avgdl 256: norm = 1.2·(0.25+0.75/256).
		{"digits and letters", 256, "--abc123--", map[string]float64{"abc123": 2.2 / (1 + 1.2*(0.25+0.75/256))}},
		// Unicode letters lowercased; "é" is a letter, "-" and "’" separate; n 3.
		{"unicode", 3, "Été—ÉTÉ’s", map[string]float64{"été": 2 * 2.2 / (2 + 1.2), "s": 2.2 / (1 + 1.2)}},
		// Marks (U+0301 combining acute) are not letters: they split tokens.
		{"combining mark splits", 2, "e\u0301t", map[string]float64{"e": 1, "t": 1}},
		// Non-Latin digits are digits (Nd): "٣" (Arabic-Indic three).
		{"arabic-indic digit", 1, "x٣", map[string]float64{"x٣": 1}},
		// CJK ideographs are letters; a run is one token.
		{"cjk run", 1, "日本語", map[string]float64{"日本語": 1}},
		// Invalid UTF-8 separates tokens.
		{"invalid utf8", 2, "ab\xffcd", map[string]float64{"ab": 1, "cd": 1}},
		// An ASCII token counts as one whether a non-ASCII rune is next to
		// it or not; n 3 = avgdl.
		{"ascii beside non-ascii", 3, "foo—Foo foo", map[string]float64{"foo": 3 * 2.2 / (3 + 1.2)}},
		// Simple case mapping: İ → i, final and medial sigma alike, Kelvin
		// sign → k; n 4 = avgdl.
		{"simple case mapping", 4, "İx ix ΣΑΣ \u212a", map[string]float64{"ix": 2 * 2.2 / 3.2, "σασ": 1, "k": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reference(tt.text, tt.avgdl, false)
			if len(got.Indices) != len(tt.want) {
				t.Fatalf("reference(%q) = %v, want %d entries", tt.text, got, len(tt.want))
			}
			for tok, w := range tt.want {
				i := slices.Index(got.Indices, fnv1a(tok))
				if i < 0 || math.Abs(float64(got.Values[i])-w) > 1e-6 {
					t.Fatalf("reference(%q) = %v, want %q (%#x) = %v", tt.text, got, tok, fnv1a(tok), w)
				}
			}
			checkDocument(t, Document(tt.text), tt.text, DefaultAvgDL)
			enc, _ := NewEncoder(tt.avgdl)
			checkDocument(t, enc.Document(tt.text), tt.text, tt.avgdl)
			checkQuery(t, Query(tt.text), tt.text)
		})
	}
}

func TestEmpty(t *testing.T) {
	enc, _ := NewEncoder(DefaultAvgDL)
	for _, s := range []string{"", "  ", "!?—", "\xff\xfe", "\u0301"} {
		for name, v := range map[string]Vector{"Document": Document(s), "Query": Query(s), "Encoder.Document": enc.Document(s), "Encoder.Query": enc.Query(s)} {
			if v.Indices != nil || v.Values != nil {
				t.Errorf("%s(%q) = %v, want the empty vector", name, s, v)
			}
		}
	}
}

func TestKnownIndex(t *testing.T) {
	// FNV-1a 32 of "a" is 0xe40c292c: a fixed point for other languages.
	if v := Document("A"); len(v.Indices) != 1 || v.Indices[0] != 0xe40c292c {
		t.Fatalf(`Document("A") = %v, want index 0xe40c292c`, v)
	}
}

func TestNewEncoder(t *testing.T) {
	for _, avgdl := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := NewEncoder(avgdl); err == nil || !strings.Contains(err.Error(), "average document length") {
			t.Errorf("NewEncoder(%v) error = %v, want one naming the average document length", avgdl, err)
		}
	}
	enc, err := NewEncoder(100)
	if err != nil || enc.AvgDL() != 100 {
		t.Fatalf("NewEncoder(100) = %v, %v", enc, err)
	}
}

// TestCollisions: "costarring" and "liquid" collide under FNV-1a 32, and
// so do "declinate" and "macallums"; so then do the words that extend both
// words of a pair alike (the hash of a prefix decides the rest), and
// "kvctwub" and "yslhtprl" collide after either of the first pair: four
// words of one index. Distinct tokens of one index add their values; the
// index takes the place of the first.
func TestCollisions(t *testing.T) {
	four := []string{"costarringkvctwub", "costarringyslhtprl", "liquidkvctwub", "liquidyslhtprl"}
	if fnv1a("costarring") != fnv1a("liquid") || fnv1a("declinate") != fnv1a("macallums") ||
		fnv1a(four[0]) != fnv1a(four[1]) || fnv1a(four[0]) != fnv1a(four[2]) || fnv1a(four[0]) != fnv1a(four[3]) {
		t.Fatal("test words do not collide")
	}
	for _, text := range []string{
		"costarring liquid liquid declinate macallums x",
		"b A b c costarring d liquid",
		"liquidkvctwub costarringyslhtprl costarringyslhtprl liquidyslhtprl costarringkvctwub liquidyslhtprl liquidyslhtprl",
		"liquid costarringkvctwub COSTARRING liquidyslhtprl costarring",
	} {
		checkDocument(t, Document(text), text, DefaultAvgDL)
		checkQuery(t, Query(text), text)
	}
	v := Document("b A b c costarring d liquid")
	want := []uint32{fnv1a("b"), fnv1a("a"), fnv1a("c"), fnv1a("costarring"), fnv1a("d")}
	if !slices.Equal(v.Indices, want) {
		t.Fatalf("Indices = %v, want first-occurrence order %v", v.Indices, want)
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

func TestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAbBzZ09 .,-\n\tÉéßΣσς日本\u0301٣\U0001F600İ\u212a")
	enc, _ := NewEncoder(7)
	for range 500 {
		var sb strings.Builder
		for range rng.IntN(60) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		checkDocument(t, enc.Document(text), text, 7)
		checkQuery(t, enc.Query(text), text)
		checkDocument(t, Document(text), text, DefaultAvgDL)
	}
}

// TestLongTexts compares long texts, whose runs cross the 64-byte blocks
// of the bitmap, with the reference, through one scratch space reused call
// after call.
func TestLongTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sc := newScratch(vocabMin)
	for range 300 {
		text := randomText(rng, rng.IntN(3000), 1+rng.IntN(400))
		if rng.IntN(3) == 0 {
			text = strings.ToUpper(text)
		}
		checkDocument(t, sc.document(text, 100), text, 100)
		checkQuery(t, sc.query(text), text)
	}
}

// TestVocabularyEviction runs enough distinct words through one scratch
// space to fill the vocabulary many times, so that it drops the words not
// seen lately, or all of them; every vector stays exact.
func TestVocabularyEviction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sc := newScratch(vocabMin)
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
		checkDocument(t, sc.document(text, 256), text, 256)
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

// TestLongTokenEviction runs more distinct long tokens through one scratch
// space than it keeps: it drops them all and starts again; every vector
// stays exact.
func TestLongTokenEviction(t *testing.T) {
	sc := newScratch(vocabMin)
	dropped := 0
	for call := range 40 {
		var sb strings.Builder
		for i := range 300 {
			fmt.Fprintf(&sb, "longtokennumber%dx%d longtokenkeptforever%d ", call, i, i%7)
		}
		before := len(sc.longs)
		text := sb.String()
		checkDocument(t, sc.document(text, 256), text, 256)
		if len(sc.longs) < before {
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatal("the long tokens were never dropped: the test does not reach eviction")
	}
}

// TestEpochWrap wraps the call counter: the vocabulary starts afresh and
// no count of an earlier call leaks in.
func TestEpochWrap(t *testing.T) {
	sc := newScratch(vocabMin)
	rng := rand.New(rand.NewPCG(7, 7))
	sc.document("the same words again and again, internationalization", 10)
	sc.epoch = ^uint32(0) - 3
	for range 10 {
		text := randomText(rng, 500, 30) + " the same words again and again, internationalization"
		checkDocument(t, sc.document(text, 10), text, 10)
	}
	if sc.epoch > 100 {
		t.Fatalf("epoch = %d after the wrap, want a fresh count", sc.epoch)
	}
}

// TestHugeText has more distinct words in one text than the vocabulary
// keeps between calls: the table grows for it, and shrinks back on the
// next call.
func TestHugeText(t *testing.T) {
	sc := newScratch(vocabMin)
	var sb strings.Builder
	for i := range 3 * vocabMax / 4 {
		fmt.Fprintf(&sb, "w%d W%d ", i, i)
	}
	text := sb.String()
	checkDocument(t, sc.document(text, 256), text, 256)
	if len(sc.vocab) <= vocabMax {
		t.Fatalf("vocabulary of %d entries for %d distinct words", len(sc.vocab), 3*vocabMax/4)
	}
	checkDocument(t, sc.document("after the huge text", 256), "after the huge text", 256)
	if len(sc.vocab) != vocabMax {
		t.Fatalf("vocabulary of %d entries after a small text, want %d", len(sc.vocab), vocabMax)
	}
}

// TestLongTokenCollision finds a token longer than the vocabulary keys
// and a short one with equal FNV-1a hashes, and two long ones, and checks
// that their values add into one index: with one long token, two, and
// more than longFew, and with long tokens that collide with nothing.
func TestLongTokenCollision(t *testing.T) {
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
	enc, _ := NewEncoder(4)
	for range 2 { // the second round finds the long tokens kept
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
			checkDocument(t, enc.Document(text), text, 4)
			checkQuery(t, enc.Query(text), text)
		}
	}
}

// TestCollisionsAcrossCalls runs texts full of colliding tokens through
// one encoder many times (its scratch space is reused) against the
// reference.
func TestCollisionsAcrossCalls(t *testing.T) {
	words := []string{"costarring", "liquid", "declinate", "macallums", "altarage", "zinke", "altarages", "zinkes", "Liquid", "other",
		"costarringkvctwub", "costarringyslhtprl", "liquidkvctwub", "liquidyslhtprl"}
	rng := rand.New(rand.NewPCG(7, 8))
	enc, _ := NewEncoder(5)
	for range 300 {
		var parts []string
		for range rng.IntN(30) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		text := strings.Join(parts, " ")
		checkDocument(t, enc.Document(text), text, 5)
		checkQuery(t, enc.Query(text), text)
	}
}

// TestManyDistinctTokens grows the table several times within one call.
func TestManyDistinctTokens(t *testing.T) {
	var sb strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&sb, "w%d ", i%20000)
	}
	text := sb.String()
	v := Document(text)
	checkDocument(t, v, text, DefaultAvgDL)
	if len(v.Indices) != 20000 {
		t.Fatalf("%d indices, want 20000", len(v.Indices))
	}
}

// TestSharedPrefixes has thousands of distinct tokens whose first 8 bytes
// (their key's first word) are alike, each seen several times, so that
// probes run past entries that differ only in the second word.
func TestSharedPrefixes(t *testing.T) {
	var sb strings.Builder
	for range 3 {
		for i := range 6000 {
			fmt.Fprintf(&sb, "Prefixab%s ", strconv.FormatInt(int64(i*7919), 36))
		}
	}
	text := sb.String()
	sc := newScratch(vocabMin)
	for range 2 {
		checkDocument(t, sc.document(text, 256), text, 256)
	}
}

// TestTextEnds places tokens of every length against the end of the text,
// where keys are loaded from a padded copy.
func TestTextEnds(t *testing.T) {
	sc := newScratch(vocabMin)
	for n := 1; n <= 3*shortMax; n++ {
		for lead := range 70 {
			text := strings.Repeat(" ", lead) + strings.Repeat("Ab9", n)[:n]
			checkDocument(t, sc.document(text, 256), text, 256)
			text = strings.Repeat("x ", lead) + strings.Repeat("é", n%3) + strings.Repeat("Ab9", n)[:n]
			checkDocument(t, sc.document(text, 256), text, 256)
		}
	}
}

// TestUnmarkedSeparators checks that the runes unmarkSeparators takes out
// of the runs are separators for the Unicode tables Go has, and that a
// text of ASCII words between them has no non-ASCII byte left.
func TestUnmarkedSeparators(t *testing.T) {
	var sb strings.Builder
	for r := rune(0x2000); r <= 0x203f; r++ {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			t.Fatalf("%U is a letter or digit", r)
		}
		sb.WriteString("ab")
		sb.WriteRune(r)
	}
	sb.WriteString("x\u00a0y")
	text := sb.String()
	checkDocument(t, Document(text), text, DefaultAvgDL)
	pad := make([]byte, (len(text)+63)/64*64+64)
	copy(pad, text)
	cand, high := make([]uint64, len(pad)/64), make([]uint64, len(pad)/64)
	if !classify(pad, cand, high) || unmarkSeparators(text, cand, high) {
		t.Fatalf("non-ASCII bytes left: %x", high)
	}
}

// TestClassify checks the eight-bytes-at-a-time classifier against the
// definition for every byte value at every position of a block.
func TestClassify(t *testing.T) {
	for c := range 256 {
		for _, filler := range []byte{' ', 'a', 0x80} {
			block := bytes.Repeat([]byte{filler}, 2*64)
			for i := c % 7; i < len(block); i += 7 {
				block[i] = byte(c)
			}
			cand, high := make([]uint64, 2), make([]uint64, 2)
			anyHigh := classify(block, cand, high)
			wantAny := false
			for i, b := range block {
				isHigh := b >= 0x80
				isCand := isHigh || '0' <= b && b <= '9' || 'a' <= b|0x20 && b|0x20 <= 'z'
				wantAny = wantAny || isHigh
				gotCand, gotHigh := cand[i/64]>>(i%64)&1 == 1, high[i/64]>>(i%64)&1 == 1
				if gotCand != isCand || gotHigh != isHigh {
					t.Fatalf("classify: byte %#x at %d: candidate %v, non-ASCII %v; want %v, %v", b, i, gotCand, gotHigh, isCand, isHigh)
				}
			}
			if anyHigh != wantAny {
				t.Fatalf("classify(%x) reports non-ASCII %v", block, anyHigh)
			}
		}
	}
}

// TestConcurrent encodes from many goroutines through one encoder (run it
// with -race): every vector is exact.
func TestConcurrent(t *testing.T) {
	enc, _ := NewEncoder(50)
	done := make(chan string, 8)
	for g := range 8 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for range 50 {
				text := randomText(rng, rng.IntN(2000), 300)
				if want := reference(text, 50, false); !same(enc.Document(text), want) {
					done <- text
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if text := <-done; text != "" {
			t.Fatalf("Document(%.200q) differs from the reference under concurrency", text)
		}
	}
}

// goldenVector is one entry of testdata/vectors.json: a text, its average
// document length, and its document vector (its query vector has the same
// indices, each with the value 1).
type goldenVector struct {
	Text       string    `json:"text,omitempty"`
	TextBase64 []byte    `json:"text_base64,omitempty"` // a text that is not valid UTF-8
	AvgDL      float64   `json:"avgdl"`
	Indices    []uint32  `json:"indices"`
	Values     []float32 `json:"values"`
	ValueBits  []string  `json:"value_bits"` // the values' IEEE 754 binary32 bits
}

// TestGoldenVectors checks the encoder against fixed vectors, bit for bit,
// in order. They are test vectors for implementations in other
// languages; -update rewrites them from the current encoder.
func TestGoldenVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden []goldenVector
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) < 20 {
		t.Fatalf("%d golden vectors, want the whole file", len(golden))
	}
	for i := range golden {
		g := &golden[i]
		text := g.Text
		if g.TextBase64 != nil {
			text = string(g.TextBase64)
		}
		enc, err := NewEncoder(g.AvgDL)
		if err != nil {
			t.Fatal(err)
		}
		got := enc.Document(text)
		checkDocument(t, got, text, g.AvgDL)
		if *update {
			g.Indices, g.Values, g.ValueBits = append([]uint32{}, got.Indices...), append([]float32{}, got.Values...), []string{}
			for _, v := range got.Values {
				g.ValueBits = append(g.ValueBits, fmt.Sprintf("%#08x", math.Float32bits(v)))
			}
			continue
		}
		want := Vector{Indices: g.Indices, Values: g.Values}
		if len(want.Indices) == 0 {
			want = Vector{}
		}
		if !same(got, want) {
			t.Errorf("Document(%q) (avgdl %v) =\n%v, want\n%v", text, g.AvgDL, got, want)
		}
		for j, bits := range g.ValueBits {
			if b, err := strconv.ParseUint(bits, 0, 32); err != nil || math.Float32frombits(uint32(b)) != g.Values[j] {
				t.Errorf("%q: value_bits[%d] %s is not values[%d] %v", text, j, bits, j, g.Values[j])
			}
		}
		q := Query(text)
		if !slices.Equal(q.Indices, want.Indices) || slices.ContainsFunc(q.Values, func(v float32) bool { return v != 1 }) {
			t.Errorf("Query(%q) = %v, want indices %v with values 1", text, q, want.Indices)
		}
	}
	if *update {
		var buf bytes.Buffer
		buf.WriteString("[\n")
		for i, g := range golden {
			line, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(line)
			if i < len(golden)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString("]\n")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzBM25(f *testing.F) {
	f.Add("The cat, the HAT.", 256.0)
	f.Add("costarring liquid", 1.0)
	f.Add("ab\xffcd Été", 3.5)
	f.Add("abcdefghijklmnopq ABCDEFGHIJKLMNOP abcdefgh—abcdefghi", 256.0)
	f.Add("don’t “x”\u00a0y… \xe2\x80a \xe2\x80\u2071 \xc2\xa0\xc2", 1e9)
	f.Add("costarringkvctwub liquidyslhtprl liquid costarring İ\u212a", 7.0)
	f.Fuzz(func(t *testing.T, text string, avgdl float64) {
		enc, err := NewEncoder(avgdl)
		if err != nil {
			if avgdl > 0 && !math.IsInf(avgdl, 1) {
				t.Fatalf("NewEncoder(%v): %v", avgdl, err)
			}
			return
		}
		v := enc.Document(text)
		checkDocument(t, v, text, avgdl)
		checkQuery(t, enc.Query(text), text)
		if len(v.Indices) != len(v.Values) {
			t.Fatalf("lengths differ: %d indices, %d values", len(v.Indices), len(v.Values))
		}
		seen := map[uint32]bool{}
		for i := range v.Indices {
			if seen[v.Indices[i]] {
				t.Fatalf("repeated index %d: %v", v.Indices[i], v.Indices)
			}
			seen[v.Indices[i]] = true
			if !(v.Values[i] >= 0) || math.IsInf(float64(v.Values[i]), 0) {
				t.Fatalf("value %v out of range", v.Values[i])
			}
		}
		if again := enc.Document(text); !same(v, again) {
			t.Fatal("not deterministic")
		}
	})
}

// TestUnicodeVersion pins the Unicode tables of the definition: a Go
// release with other tables changes the vectors of some texts, which
// needs a decision (and the package documentation updated), not an
// unnoticed upgrade.
func TestUnicodeVersion(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Fatalf("unicode.Version = %s, the package documentation defines tokens by Unicode 15.0.0", unicode.Version)
	}
}

// TestNoFusedMultiplyAdd compiles the package for arm64, whose compiler
// fuses a multiplication and an addition into one instruction unless a
// conversion forces the rounding between them: a fused multiply-add
// rounds once, so the values would differ from the definition (and from
// amd64) in their last bit for some texts.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	cmd := exec.Command("go", "build", "-gcflags=github.com/chunkstream/chunkstream/bm25=-S", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("bm25.go")) {
		t.Fatalf("no assembly listing of the package in the compiler's output:\n%.500s", out)
	}
	for line := range bytes.Lines(out) {
		for _, op := range []string{"FMADD", "FMSUB", "FNMADD", "FNMSUB"} {
			if bytes.Contains(line, []byte("\t"+op)) {
				t.Errorf("fused multiply-add on arm64: %s", bytes.TrimSpace(line))
			}
		}
	}
}
