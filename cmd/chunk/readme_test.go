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

// chunkFlags returns the flags `chunk sub -h` lists, chunker flags
// included.
func chunkFlags(t *testing.T, sub string) []string {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	_, out, errOut := runApp(t, registry.Entries(), sub, "-h")
	ms := flagLine.FindAllStringSubmatch(out+errOut, -1)
	if len(ms) < 3 {
		t.Fatalf("chunk %s -h lists %d flags; the help format changed?", sub, len(ms))
	}
	var flags []string
	for _, m := range ms {
		flags = append(flags, m[1])
	}
	return flags
}

// TestREADMEDocumentsEveryFlag keeps the CLI reference in step with the
// flags, chunker flags included: the `chunk` section of docs/cli.md
// always, and the README while it still documents the command.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	cli, ok := testutil.DocSection(t, "docs/cli.md", "`chunk`")
	if !ok {
		t.Fatal("docs/cli.md has no ## `chunk` section")
	}
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, readmeHasChunk := testutil.DocSection(t, "README.md", "The `chunk` command")
	for _, sub := range []string{"split", "inspect", "bench"} {
		if !strings.Contains(cli, "### `chunk "+sub+"`") {
			t.Errorf("docs/cli.md has no ### `chunk %s` section", sub)
		}
		for _, f := range chunkFlags(t, sub) {
			if !strings.Contains(cli, "`-"+f) {
				t.Errorf("docs/cli.md does not document `chunk %s -%s`", sub, f)
			}
			if readmeHasChunk && !strings.Contains(string(readme), "`-"+f) {
				t.Errorf("README.md does not document `chunk %s -%s`", sub, f)
			}
		}
	}
}
