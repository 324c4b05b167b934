package mdblocks

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

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
