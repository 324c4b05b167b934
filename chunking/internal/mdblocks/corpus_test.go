package mdblocks

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestCorpus scans every file of ../shared/corpus/markdown (every tenth
// with -short or the race detector) with the invariants and checks that
// the bound on nesting changes nothing for files within it, then scans
// them concatenated in segments and checks the blocks against one parse of
// the same text.
func TestCorpus(t *testing.T) {
	dir := testutil.SharedDir(t, "corpus", "markdown")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && (filepath.Ext(p) == ".md" || filepath.Ext(p) == ".mdx") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	step := 1
	if testing.Short() || raceEnabled {
		step = 10
	}
	var all bytes.Buffer
	deepest := 0
	for i := 0; i < len(files); i += step {
		p := files[i]
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		deepest = max(deepest, checkBound(t, src, MaxNesting))
		all.Write(src)
		all.WriteString("\n\n")
	}
	t.Logf("deepest nesting of lists and quotes in the corpus: %d", deepest)
	src := all.Bytes()
	if testing.Short() || raceEnabled {
		src = src[:min(len(src), 4<<20)]
	}
	whole, _ := scan(src, len(src)+1)
	segmented, n := scan(src, 1<<20)
	if n < len(src)>>22 {
		t.Errorf("scan(%d MB corpus, 1 MiB segments) parsed %d segments only", len(src)>>20, n)
	}
	if len(whole) != len(segmented) {
		t.Fatalf("segmented scan: %d blocks, one parse: %d", len(segmented), len(whole))
	}
	for i := range whole {
		if fmt.Sprint(whole[i]) != fmt.Sprint(segmented[i]) {
			t.Fatalf("block %d: segmented %v, one parse %v", i, segmented[i], whole[i])
		}
	}
}

// BenchmarkDropParagraphLines scans 8 MB of the Markdown corpus with the
// scanner's parser and, in the same iterations, with that parser without
// the dropParagraphLines transformer (the simple version), and reports
// the simple version's time over the scanner's.
func BenchmarkDropParagraphLines(b *testing.B) {
	dir := testutil.SharedDir(b, "corpus", "markdown")
	var docs [][]byte
	size := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || filepath.Ext(p) != ".md" || size > 8<<20 {
			return err
		}
		src, err := os.ReadFile(p)
		docs, size = append(docs, src), size+len(src)
		return err
	})
	fast := defaultScanner()
	fast.goldmarkOnly = true
	simple := defaultScanner()
	simple.goldmarkOnly = true
	simple.parser = parser.NewParser(parser.WithBlockParsers(
		append(boundedBlockParsers(MaxNesting), util.Prioritized(mathParser{}, 650))...))
	var tf, ts time.Duration
	b.SetBytes(int64(2 * size))
	for b.Loop() {
		for _, src := range docs {
			start := time.Now()
			fast.scan(src)
			tf += time.Since(start)
			start = time.Now()
			simple.scan(src)
			ts += time.Since(start)
		}
	}
	b.ReportMetric(float64(ts)/float64(tf), "simple/fast")
}
