package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestMain removes the binary TestEndToEnd builds.
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

func runBin(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return code, out.String(), errb.String()
}

func TestEndToEnd(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	bin := testutil.Binary(t, "./cmd/chunk")
	docs := filepath.Join("testdata", "docs")
	dir := t.TempDir()

	// split to stdout (JSONL) with the real markdown chunker, which reads
	// plain text too (notes.txt); hidden files are skipped.
	code, out, errOut := runBin(t, bin, "split", docs)
	if code != 0 || !strings.Contains(errOut, "4 files,") {
		t.Fatalf("chunk split = %d\n%s", code, errOut)
	}
	c, err := chunking.DecodeJSONL(strings.NewReader(out), "stdout")
	if err != nil {
		t.Fatalf("split output does not load: %v", err)
	}
	if got, want := c.Files(), []string{"a.md", "notes.txt", "sub/b.md", "sub/z.md"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("split files = %q, want %q", got, want)
	}

	// -workers 4 gives the same bytes; YAML output loads with the same hashes.
	_, out4, _ := runBin(t, bin, "split", "-workers", "4", docs)
	if out4 != out {
		t.Error("split -workers 4 output differs from the default run")
	}
	yamlFile := filepath.Join(dir, "c.yaml")
	if code, _, errOut := runBin(t, bin, "split", "-workers", "4", "-o", yamlFile, docs); code != 0 {
		t.Fatalf("split -o c.yaml = %d: %s", code, errOut)
	}
	cy, err := chunking.Load(yamlFile)
	if err != nil {
		t.Fatal(err)
	}
	if cy.Len() != c.Len() {
		t.Fatalf("YAML holds %d chunks, JSONL %d", cy.Len(), c.Len())
	}
	for i := range c.Len() {
		if cy.At(i).Hash() != c.At(i).Hash() {
			t.Errorf("chunk %d: YAML hash %s, JSONL hash %s", i, cy.At(i).Hash(), c.At(i).Hash())
		}
	}

	// A file that is not UTF-8 fails alone: exit 1, the path on stderr.
	bad := filepath.Join(dir, "in")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "good.md"), []byte("# Good\n\ntext\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "bad.md"), []byte("# Bad\n\n\xff\xfe\n"), 0o644)
	code, out, errOut = runBin(t, bin, "split", bad)
	if code != 1 || !strings.Contains(errOut, "bad.md") || !strings.Contains(out, "# Good") {
		t.Errorf("split with a bad file = %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// Usage errors exit 2; -h exits 0.
	if code, _, _ := runBin(t, bin, "split", "-no-such-flag", docs); code != 2 {
		t.Errorf("split -no-such-flag exit = %d, want 2", code)
	}
	if code, _, errOut := runBin(t, bin, "split", "-h"); code != 0 || !strings.Contains(errOut, "-max-char") {
		t.Errorf("split -h = %d, %s", code, errOut)
	}

	// inspect and bench.
	if code, out, _ := runBin(t, bin, "inspect", yamlFile); code != 0 || !strings.HasPrefix(out, "ChunkCollection Summary\n") {
		t.Errorf("inspect = %d, %s", code, out)
	}
	for _, args := range [][]string{{"bench", "-chunker", "markdown", docs}, {"bench", "-parse-only", docs}} {
		code, out, errOut := runBin(t, bin, args...)
		if code != 0 || !resultLine.MatchString(out) {
			t.Errorf("chunk %q = %d, %q (%s)", args, code, out, errOut)
		}
	}
}
