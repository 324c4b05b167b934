package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chunkstream/chunkstream/chunking/internal/measure"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

func TestRuneCount(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld ünïcode", "日本語のテキスト😀👍🏽 mixed ascii and ñ", "\x00\x7f", string(make([]byte, 17))} {
		for i := range len(s) + 1 {
			if !utf8.ValidString(s[i:]) {
				continue
			}
			if got, want := measure.RuneCount([]byte(s[i:])), utf8.RuneCountInString(s[i:]); got != want {
				t.Errorf("RuneCount(%q) = %d, want %d", s[i:], got, want)
			}
		}
	}
}

// BenchmarkIsSpaceAt asks isSpaceAt, and the simple version that decodes
// every character, about every byte of the first 8 MiB of the Markdown
// corpus, the two in one loop: simple/fast is the ASCII path's gain.
func BenchmarkIsSpaceAt(b *testing.B) {
	var docs [][]byte
	n := 0
	err := filepath.WalkDir(testutil.SharedDir(b, "corpus", "markdown"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || n >= 8<<20 {
			return err
		}
		src, err := os.ReadFile(p)
		if err == nil && utf8.Valid(src) {
			docs, n = append(docs, src), n+len(src)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	simpleAt := func(src []byte, i int) bool {
		r, _ := utf8.DecodeRune(src[i:])
		return isSpace(r)
	}
	run := func(at func([]byte, int) bool) time.Duration {
		t := time.Now()
		for _, d := range docs {
			for i := range d {
				at(d, i)
			}
		}
		return time.Since(t)
	}
	for _, d := range docs {
		for i := range d {
			if simpleAt(d, i) != isSpaceAt(d, i) {
				b.Fatalf("isSpaceAt(%q) differs from decoding", d[i:min(i+8, len(d))])
			}
		}
	}
	var fast, simple time.Duration
	for b.Loop() {
		fast += run(isSpaceAt)
		simple += run(simpleAt)
	}
	b.ReportMetric(float64(simple)/float64(fast), "simple/fast")
}
