package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestReadmeDocumentsEveryFlag keeps the README's CLI reference in step
// with the flags, chunker flags included.
func TestReadmeDocumentsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, sub := range []string{"split", "inspect", "bench"} {
		_, out, errOut := runApp(t, registry.Entries(), sub, "-h")
		ms := flagLine.FindAllStringSubmatch(out+errOut, -1)
		if len(ms) < 3 {
			t.Fatalf("chunk %s -h lists %d flags; the help format changed?", sub, len(ms))
		}
		for _, m := range ms {
			if !strings.Contains(string(readme), "`-"+m[1]) {
				t.Errorf("README.md does not document `chunk %s -%s`", sub, m[1])
			}
		}
	}
}
