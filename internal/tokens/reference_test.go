package tokens

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tokens/tokenstest"
)

// corpusSamples returns up to 16 KiB (cut at a line break) of every
// step-th file of the shared Markdown corpus, or nothing when it is absent.
func corpusSamples(t testing.TB, step int) []string {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "..", "shared", "corpus", "markdown")
	if _, err := os.Stat(dir); err != nil {
		t.Logf("corpus absent (%v): hand-written and generated texts only", err)
		return nil
	}
	files, _, err := chunking.WalkFolder(context.Background(), dir, []string{".md", ".mdx"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := 0; i < len(files); i += step {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files[i])))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(src) {
			continue
		}
		if len(src) > 16<<10 {
			cut := bytes.LastIndexByte(src[:16<<10], '\n')
			src = src[:cut+1]
		}
		out = append(out, string(src))
	}
	return out
}

func benchSamples(b *testing.B) []string { return corpusSamples(b, 5) }

// TestReference compares token ids with OpenAI's tokenizer run for real
// (js-tiktoken under Node.js; skipped without them) on hand-written text,
// generated text that mixes every class the patterns tell apart, and
// samples of the Markdown corpus (16 KiB of every 250th file; every 25th
// with CHUNKSTREAM_TEST_FULL=1). It also shows the comparison fails when
// the encodings differ.
func TestReference(t *testing.T) {
	tokenstest.Dir(t)
	r := rand.New(rand.NewPCG(3, 4))
	texts := append([]string{}, handTexts...)
	for range 2000 {
		texts = append(texts, randomText(r, 1+r.IntN(30)))
	}
	step := 250 // a sample; every 25th file with CHUNKSTREAM_TEST_FULL=1
	if testutil.Enabled(testutil.Full) {
		step = 25
	}
	corpus := corpusSamples(t, step)
	texts = append(texts, corpus...)
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	got := map[string][][]int{}
	for _, name := range Names() {
		e := mustGet(t, name)
		ids := make([][]int, len(texts))
		for i, s := range texts {
			ids[i] = e.Encode(s)
		}
		got[name] = ids
		want := tokenstest.IDs(t, name, texts)
		if d := tokenstest.FirstDiff(texts, ids, want); d != "" {
			t.Errorf("%s: token ids differ from the reference: %s", name, d)
		}
		for i := range handTexts {
			if d := tokenstest.FirstDiff(handTexts[i:i+1], knownIDs[name][i:i+1], want[i:i+1]); d != "" {
				t.Errorf("%s: recorded ids of hand text %d differ from the reference: %s", name, i, d)
			}
		}
	}
	t.Logf("%d texts (%d from the corpus), %d bytes, compared in both encodings", len(texts), len(corpus), size)
	// The comparison can fail: one encoding's ids against the other's.
	if d := tokenstest.FirstDiff(texts, got[CL100KBase], tokenstest.IDs(t, O200KBase, texts)); d == "" {
		t.Error("cl100k_base ids compared with the reference's o200k_base ids: no difference found, so the comparison cannot fail")
	}
}
