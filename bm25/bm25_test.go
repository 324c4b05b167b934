package bm25

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
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

	"github.com/chunkstream/chunkstream/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the current encoder")

// simple is docs/wire.md's definition ("The definition") written the obvious
// way, with no cache and no state between calls: the oracle of record of
// the tests and the baseline of the benchmarks. It shares the word rule
// (lowercasing, stop words, stemmer, index) with the encoder; the
// JavaScript oracle (oracle_test.go) shares nothing.
func simple(lang Language, text string, avgdl float64, query bool) Vector {
	p := pipelines[lang]
	var terms []word
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !isAlnum(r) }) {
		if w := p.word(tok); !w.stop {
			terms = append(terms, w)
		}
	}
	if len(terms) == 0 {
		return Vector{}
	}
	tf := map[word]int{}
	for _, w := range terms {
		tf[w]++
	}
	byID := map[uint32]float32{}
	for w, c := range tf {
		f := float64(c)
		den := math.FMA(1.2, 0.25+0.75*float64(len(terms))/avgdl, f)
		byID[w.id] = max(byID[w.id], float32(f*2.2/den))
	}
	var v Vector
	v.Indices = slices.Sorted(maps.Keys(byID))
	for _, i := range v.Indices {
		if query {
			v.Values = append(v.Values, 1)
		} else {
			v.Values = append(v.Values, byID[i])
		}
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

// check fails t unless enc's document and query vectors of text are the
// simple implementation's.
func check(t *testing.T, enc *Encoder, text string) {
	t.Helper()
	if got, want := enc.Document(text), simple(enc.Language(), text, enc.AvgDL(), false); !same(got, want) {
		t.Fatalf("Document(%.200q) (%s) =\n%v, want\n%v", text, enc.Encoding(), got, want)
	}
	if got, want := enc.Query(text), simple(enc.Language(), text, 1, true); !same(got, want) {
		t.Fatalf("Query(%.200q) (%s) =\n%v, want\n%v", text, enc.Language(), got, want)
	}
	if got, want := enc.HasTerms(text), len(enc.Document(text).Indices) > 0; got != want {
		t.Fatalf("HasTerms(%.200q) (%s) = %v, want %v", text, enc.Language(), got, want)
	}
}

func encoder(t testing.TB, lang Language, avgdl float64) *Encoder {
	t.Helper()
	enc, err := NewEncoder(lang, avgdl)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestTerms checks the word rule on hand-made cases: the terms a text
// gives, in order, stop words dropped.
func TestTerms(t *testing.T) {
	tests := []struct {
		name string
		lang Language
		text string
		want []string
	}{
		{"stop words and stems", English, "The cats are running to the tables", []string{"cat", "run", "tabl"}},
		{"split on non-alphanumerics", English, "key=value, foo_bar; a-b/c.d’e", []string{"key", "valu", "foo", "bar", "b", "c", "e"}},
		{"apostrophes split", English, "don't rock’n’roll", []string{"rock", "n", "roll"}},
		{"digits and letters stay together", English, "abc123 v1.2.3 2024", []string{"abc123", "v1", "2", "3", "2024"}},
		{"other numbers are alphanumeric", English, "x² ½ Ⅻ", []string{"x²", "½", "ⅻ"}},
		{"circled letters are alphabetic", English, "Ⓐⓑ", []string{"ⓐⓑ"}},
		{"vowel signs join, a virama splits", English, "हिन्दी", []string{"हिन", "दी"}},
		{"full lowercase mapping", English, "İstanbul", []string{"i\u0307stanbul"}},
		{"unicode 17: combining Latin letters join", None, "x\u0363y \U00016EA0", []string{"x\u0363y", "\U00016EBB"}},
		{"final sigma", None, "ΣΑΣ Σ ΑΣΑ", []string{"σας", "σ", "ασα"}},
		{"final sigma before a number", None, "ΑΣ1", []string{"ας1"}},
		{"short words are not stemmed", English, "és ís", []string{"és", "ís"}},
		{"english stemmer exceptions", English, "skies dying news", []string{"sky", "die", "news"}},
		{"none keeps stop words", None, "The cats are running", []string{"the", "cats", "are", "running"}},
		{"norwegian", Norwegian, "Jeg liker hyttene og fjellene", []string{"lik", "hytt", "fjell"}},
		{"cjk run is one token", English, "日本語のテキスト", []string{"日本語のテキスト"}},
		{"invalid utf-8 separates", None, "ab\xffcd", []string{"ab", "cd"}},
		{"no tokens", English, "  !? — … ", nil},
		{"only stop words", English, "the and of", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pipelines[tt.lang]
			var got []string
			for _, tok := range strings.FieldsFunc(tt.text, func(r rune) bool { return !isAlnum(r) }) {
				if w := p.word(tok); !w.stop {
					got = append(got, w.term)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("terms(%q, %s) = %q, want %q", tt.text, tt.lang, got, tt.want)
			}
			check(t, encoder(t, tt.lang, 100), tt.text)
		})
	}
}

// TestValuesHandComputed checks values computed by hand from the formula.
func TestValuesHandComputed(t *testing.T) {
	tests := []struct {
		name  string
		avgdl float64
		text  string
		want  map[string]float64 // term → value
	}{
		// n 4 = avgdl: k1·(0.25+0.75) = 1.2; "cat" tf 2: 2·2.2/(1.2+2) = 1.375; tf 1: 2.2/2.2 = 1.
		{"repeat and case", 4, "The cat, the CAT, a hat and a mat.", map[string]float64{"cat": 1.375, "hat": 1, "mat": 1}},
		// n 2, avgdl 4: 1.2·(0.25+0.375) = 0.75; tf 1: 2.2/1.75.
		{"short document", 4, "Hello, world!", map[string]float64{"hello": 2.2 / 1.75, "world": 2.2 / 1.75}},
		// n 1, avgdl 256: 1.2·(0.25+0.75/256).
		{"one token", 256, "--abc123--", map[string]float64{"abc123": 2.2 / (1 + 1.2*(0.25+0.75/256))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := encoder(t, English, tt.avgdl).Document(tt.text)
			if len(got.Indices) != len(tt.want) {
				t.Fatalf("Document(%q) = %v, want %d entries", tt.text, got, len(tt.want))
			}
			for term, w := range tt.want {
				i := slices.Index(got.Indices, tokenID(term))
				if i < 0 || math.Abs(float64(got.Values[i])-w) > 1e-6 {
					t.Fatalf("Document(%q) = %v, want %q (%d) = %v", tt.text, got, term, tokenID(term), w)
				}
			}
		})
	}
}

// TestTokenID pins the index rule: murmur3 32 of the UTF-8 bytes, as a
// signed integer made non-negative. The words were found by inverting
// murmur3; they are their own stems.
func TestTokenID(t *testing.T) {
	tests := []struct {
		term string
		want uint32
	}{
		{"hello", 0x248bfa47},
		{"qnxpdhwx", 0x80000000}, // murmur3 0x80000000: |i32::MIN| = 2^31
		{"gbmpjdbf", 0x12345678}, // murmur3 0x12345678
		{"fvwldqtb", 0x12345678}, // murmur3 0x12345678 too
		{"twnlzxvc", 0x12345678}, // murmur3 0xedcba988 = -0x12345678
	}
	for _, tt := range tests {
		if got := tokenID(tt.term); got != tt.want {
			t.Errorf("tokenID(%q) = %#x, want %#x", tt.term, got, tt.want)
		}
		if got := stemEnglish(tt.term); got != tt.term {
			t.Errorf("stemEnglish(%q) = %q, want the word itself", tt.term, got)
		}
	}
}

// TestCollisions: distinct terms of one index make one entry whose value
// is the largest of theirs; a query has the index once.
func TestCollisions(t *testing.T) {
	enc := encoder(t, English, 8)
	text := "gbmpjdbf fvwldqtb fvwldqtb twnlzxvc qnxpdhwx hello"
	check(t, enc, text)
	v := enc.Document(text)
	if want := []uint32{0x12345678, 0x248bfa47, 0x80000000}; !slices.Equal(v.Indices, want) {
		t.Fatalf("Document(%q).Indices = %#x, want %#x", text, v.Indices, want)
	}
	// n 6, avgdl 8: x = 0.25+0.75·6/8 = 0.8125; tf 2 ("fvwldqtb") beats tf 1.
	if want := float32(2 * 2.2 / math.FMA(1.2, 0.8125, 2)); v.Values[0] != want {
		t.Fatalf("Document(%q) value at 0x12345678 = %v, want %v (the largest)", text, v.Values[0], want)
	}
}

func TestEmpty(t *testing.T) {
	enc := encoder(t, English, DefaultAvgDL)
	for _, s := range []string{"", "  ", "!?—", "\xff\xfe", "\u0301", "the of and"} {
		for name, v := range map[string]Vector{"Document": Document(s), "Query": Query(s), "Encoder.Document": enc.Document(s), "Encoder.Query": enc.Query(s)} {
			if v.Indices != nil || v.Values != nil {
				t.Errorf("%s(%q) = %v, want the empty vector", name, s, v)
			}
		}
	}
}

func TestParseLanguage(t *testing.T) {
	tests := []struct {
		in   string
		want Language
	}{
		{"", English}, {"english", English}, {"en", English}, {"norwegian", Norwegian}, {"no", Norwegian}, {"none", None},
	}
	for _, tt := range tests {
		if got, err := ParseLanguage(tt.in); got != tt.want || err != nil {
			t.Errorf("ParseLanguage(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"English", "french", "german", "klingon", " english"} {
		_, err := ParseLanguage(in)
		if !errors.Is(err, ErrUnsupportedLanguage) || !strings.Contains(err.Error(), "english (en), norwegian (no) and none") {
			t.Errorf("ParseLanguage(%q) error = %v, want ErrUnsupportedLanguage naming the supported ones", in, err)
		}
		if _, err := NewEncoder(Language(in), 10); !errors.Is(err, ErrUnsupportedLanguage) {
			t.Errorf("NewEncoder(%q) error = %v, want ErrUnsupportedLanguage", in, err)
		}
	}
}

func TestNewEncoder(t *testing.T) {
	for _, avgdl := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := NewEncoder(English, avgdl); err == nil || !strings.Contains(err.Error(), "average document length") {
			t.Errorf("NewEncoder(%v) error = %v, want one naming the average document length", avgdl, err)
		}
	}
	tests := []struct {
		lang     Language
		avgdl    float64
		encoding string
	}{
		{English, 256, "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=256"},
		{"en", 100, "qdrant/bm25 language=english k=1.2 b=0.75 avg_len=100"},
		{Norwegian, 64.5, "qdrant/bm25 language=norwegian k=1.2 b=0.75 avg_len=64.5"},
		{None, 1e9, "qdrant/bm25 language=none k=1.2 b=0.75 avg_len=1e+09"},
	}
	for _, tt := range tests {
		enc := encoder(t, tt.lang, tt.avgdl)
		if got := enc.Encoding(); got != tt.encoding {
			t.Errorf("NewEncoder(%q, %v).Encoding() = %q, want %q", tt.lang, tt.avgdl, got, tt.encoding)
		}
		if got := enc.Options(); got["avg_len"] != tt.avgdl || got["language"] != string(enc.Language()) || len(got) != 2 {
			t.Errorf("NewEncoder(%q, %v).Options() = %v", tt.lang, tt.avgdl, got)
		}
	}
}

// TestDefaults: the one-shot functions are an English Encoder of
// DefaultAvgDL.
func TestDefaults(t *testing.T) {
	enc := encoder(t, English, DefaultAvgDL)
	for _, text := range []string{"The cats are running", "Σίσυφος ΣΊΣΥΦΟΣ", ""} {
		if !same(Document(text), enc.Document(text)) || !same(Query(text), enc.Query(text)) {
			t.Errorf("Document/Query(%q) differ from an English Encoder's", text)
		}
	}
}

// randomText returns a text of about n bytes of words spelt alike each
// time, mixing English words, stop words, letters of other scripts,
// numbers, marks and separators of several kinds, and invalid bytes.
func randomText(rng *rand.Rand, n int, vocab int) string {
	pieces := []string{"a", "B", "c", "D", "e", "s", "ing", "ed", "ies", "ly", "y", "7", "0", "Σ", "ς", "İ", "é", "日", "ß", "٣", "²", "Ⓐ", "\u0301", "\u0345", "ʰ", "the", "ÆØÅ"}
	seps := []string{" ", " ", " ", ", ", ".\n", "—", "\xff", "\t", "-", "’", "'", "@", "\u00a0", "\xe2\x80", "\xc2"}
	var sb strings.Builder
	for sb.Len() < n {
		w := rng.IntN(vocab)
		r := rand.New(rand.NewPCG(uint64(w), 9)) // word w is always spelt alike
		for range 1 + r.IntN(6) {
			c := pieces[r.IntN(len(pieces))]
			if rng.IntN(30) == 0 {
				c = strings.ToUpper(c)
			}
			sb.WriteString(c)
		}
		sb.WriteString(seps[rng.IntN(len(seps))])
	}
	return sb.String()
}

// TestMatchesSimple runs the encoders of every language over random texts,
// again and again (the cache fills, and starts over).
func TestMatchesSimple(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lang := range Languages {
		enc := encoder(t, lang, 50)
		for range 300 {
			check(t, enc, randomText(rng, rng.IntN(3000), 1+rng.IntN(2000)))
		}
	}
}

// TestHasTerms: texts of stop words, separators and nothing have no
// terms; one word that is not a stop word anywhere makes one.
func TestHasTerms(t *testing.T) {
	enc := encoder(t, English, DefaultAvgDL)
	for text, want := range map[string]bool{
		"": false, "  --  ": false, "The, and OF it!": false, "don't": false,
		"the a of table": true, "x": true, "— 42 —": true, "İs": true,
	} {
		if got := enc.HasTerms(text); got != want {
			t.Errorf("HasTerms(%q) = %v, want %v", text, got, want)
		}
		check(t, enc, text)
	}
}

// TestCacheStartsOver fills a cache past cacheMax words.
func TestCacheStartsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 40,000 words")
	}
	enc := encoder(t, English, 100)
	var sb strings.Builder
	for i := range cacheMax + 8000 {
		fmt.Fprintf(&sb, "w%dx ", i)
		if sb.Len() > 4000 {
			check(t, enc, sb.String())
			sb.Reset()
		}
	}
	check(t, enc, sb.String())
}

func TestConcurrent(t *testing.T) {
	enc := encoder(t, English, 50)
	done := make(chan string, 8)
	for g := range 8 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for range 40 {
				text := randomText(rng, rng.IntN(2000), 300)
				if !same(enc.Document(text), simple(English, text, 50, false)) {
					done <- text
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if text := <-done; text != "" {
			t.Fatalf("Document(%.200q) differs from the simple implementation under concurrency", text)
		}
	}
}

// goldenVector is one entry of testdata/vectors.json: a text, the language
// and average document length, its document vector and its query indices
// (each with the value 1).
type goldenVector struct {
	Text       string    `json:"text,omitempty"`
	TextBase64 []byte    `json:"text_base64,omitempty"` // a text that is not valid UTF-8
	Language   Language  `json:"language"`
	AvgLen     float64   `json:"avg_len"`
	Indices    []uint32  `json:"indices"`
	Values     []float32 `json:"values"`
	ValueBits  []string  `json:"value_bits"` // the values' IEEE 754 binary32 bits
	Query      []uint32  `json:"query"`
}

// readGolden reads testdata/vectors.json.
func readGolden(t *testing.T) []goldenVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
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
	return golden
}

func (g *goldenVector) text() string {
	if g.TextBase64 != nil {
		return string(g.TextBase64)
	}
	return g.Text
}

// TestGoldenVectors checks the encoder against fixed vectors, bit for bit.
// They are test vectors for implementations in other languages; -update
// rewrites them from the current encoder.
func TestGoldenVectors(t *testing.T) {
	golden := readGolden(t)
	for i := range golden {
		g := &golden[i]
		text := g.text()
		enc := encoder(t, g.Language, g.AvgLen)
		check(t, enc, text)
		got, q := enc.Document(text), enc.Query(text)
		if *update {
			g.Indices, g.Values, g.ValueBits, g.Query = nonNil(got.Indices), got.Values, []string{}, nonNil(q.Indices)
			if g.Values == nil {
				g.Values = []float32{}
			}
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
			t.Errorf("Document(%q) (%s) =\n%v, want\n%v", text, enc.Encoding(), got, want)
		}
		for j, bits := range g.ValueBits {
			if b, err := strconv.ParseUint(bits, 0, 32); err != nil || math.Float32frombits(uint32(b)) != g.Values[j] {
				t.Errorf("%q: value_bits[%d] %s is not values[%d] %v", text, j, bits, j, g.Values[j])
			}
		}
		if !slices.Equal(q.Indices, g.Query) && len(q.Indices)+len(g.Query) > 0 {
			t.Errorf("Query(%q) = %v, want indices %v", text, q.Indices, g.Query)
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
		if err := os.WriteFile(filepath.Join("testdata", "vectors.json"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func nonNil(s []uint32) []uint32 {
	if s == nil {
		return []uint32{}
	}
	return s
}

func FuzzBM25(f *testing.F) {
	f.Add("The cats are running to the tables.", 256.0, uint8(0))
	f.Add("gbmpjdbf fvwldqtb fvwldqtb twnlzxvc qnxpdhwx", 1.0, uint8(0))
	f.Add("ab\xffcd Été ΣΑΣ İx Ⓐⓑ x² हिन्दी", 3.5, uint8(2))
	f.Add("Jeg liker hyttene og fjellene, ÆØÅ", 7.0, uint8(1))
	f.Add("don’t “x”\u00a0y… \xe2\x80a \xc2\xa0\xc2 skies dying", 1e9, uint8(0))
	f.Fuzz(func(t *testing.T, text string, avgdl float64, lang uint8) {
		l := Languages[int(lang)%len(Languages)]
		enc, err := NewEncoder(l, avgdl)
		if err != nil {
			if avgdl > 0 && !math.IsInf(avgdl, 1) {
				t.Fatalf("NewEncoder(%v): %v", avgdl, err)
			}
			return
		}
		check(t, enc, text)
		v := enc.Document(text)
		for i := range v.Indices {
			if i > 0 && v.Indices[i-1] >= v.Indices[i] {
				t.Fatalf("indices not increasing: %v", v.Indices)
			}
			if !(v.Values[i] >= 0) || math.IsInf(float64(v.Values[i]), 0) {
				t.Fatalf("value %v out of range", v.Values[i])
			}
		}
		check(t, enc, text) // again, from the cache
	})
}

// TestUnicodeVersion pins Go's Unicode tables, from which unicode17.go
// holds the differences to Unicode 17.0.0: a Go release with other tables
// needs the file regenerated (go test -run TestUnicodeTables
// -update-unicode), not an unnoticed change of vectors.
func TestUnicodeVersion(t *testing.T) {
	if unicode.Version != "15.0.0" || unicodeVersion != "17.0.0" {
		t.Fatalf("unicode.Version = %s, unicode17.go holds the differences of Go's Unicode 15.0.0 to %s: regenerate it", unicode.Version, unicodeVersion)
	}
}

// TestOneFusedMultiplyAdd compiles the package for arm64 (a long form: a
// cold cache compiles the standard library for arm64 too), whose compiler
// fuses a multiplication and an addition into one instruction unless a
// conversion forces the rounding between them: the definition has exactly
// one fused multiply-add (Qdrant's mul_add), math.FMA in bm25.go, and no
// other.
func TestOneFusedMultiplyAdd(t *testing.T) {
	testutil.OptIn(t, testutil.Full) // compiles the package, and the standard library, for arm64
	src, err := os.ReadFile("bm25.go")
	if err != nil {
		t.Fatal(err)
	}
	fmaLine := 0
	for i, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, "math.FMA(") {
			fmaLine = i + 1
		}
	}
	cmd := exec.Command("go", "build", "-gcflags=github.com/chunkstream/chunkstream/bm25=-S", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%s", err, out)
	}
	want := fmt.Sprintf("bm25.go:%d)", fmaLine)
	fused := 0
	for line := range bytes.Lines(out) {
		for _, op := range []string{"FMADD", "FMSUB", "FNMADD", "FNMSUB"} {
			if bytes.Contains(line, []byte("\t"+op)) {
				fused++
				if !bytes.Contains(line, []byte(want)) {
					t.Errorf("fused multiply-add on arm64 outside %s: %s", want, bytes.TrimSpace(line))
				}
			}
		}
	}
	if fused == 0 {
		t.Errorf("no fused multiply-add at %s in the arm64 listing", want)
	}
}
