// Package tokenstest runs OpenAI's tokenizer for tests: js-tiktoken, the
// tokenizer's JavaScript port, under Node.js, installed from
// internal/tokens/testdata/reference (npm ci there; the CI script does
// it). Tests that use it skip when Node.js or the package is missing.
package tokenstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// Dir returns the folder of the reference tokenizer's package, skipping
// the test when Node.js or the installed package is missing.
func Dir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "internal", "tokens", "testdata", "reference")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the reference tokenizer (js-tiktoken) cannot run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "js-tiktoken", "package.json")); err != nil {
		t.Skipf("js-tiktoken not installed: run npm ci in %s", dir)
	}
	return dir
}

// IDs returns the token ids of each text in encoding by the reference
// tokenizer (skipping the test as Dir does). Texts must be UTF-8.
func IDs(t testing.TB, encoding string, texts []string) [][]int {
	t.Helper()
	dir := Dir(t)
	req, err := json.Marshal(map[string]any{"encoding": encoding, "texts": texts})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "tokenize.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tokenstest: running js-tiktoken: %v: %s", err, stderr.Bytes())
	}
	var resp struct {
		IDs [][]int `json:"ids"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("tokenstest: reading js-tiktoken's answer: %v", err)
	}
	if len(resp.IDs) != len(texts) {
		t.Fatalf("tokenstest: js-tiktoken answered %d texts of %d", len(resp.IDs), len(texts))
	}
	return resp.IDs
}

// Counts returns the number of tokens of each text by the reference
// tokenizer (skipping the test as Dir does).
func Counts(t testing.TB, encoding string, texts []string) []int {
	t.Helper()
	ids := IDs(t, encoding, texts)
	n := make([]int, len(ids))
	for i, x := range ids {
		n[i] = len(x)
	}
	return n
}

// FirstDiff returns a description of the first text whose ids differ
// between got and want, or "" when all are equal.
func FirstDiff(texts []string, got, want [][]int) string {
	for i := range texts {
		g, w := got[i], want[i]
		k := 0
		for k < len(g) && k < len(w) && g[k] == w[k] {
			k++
		}
		if k == len(g) && k == len(w) {
			continue
		}
		return fmt.Sprintf("text %d (%d bytes, %.60q…): %d tokens, reference %d; first difference at token %d: %v, reference %v",
			i, len(texts[i]), texts[i], len(g), len(w), k, g[k:min(len(g), k+5)], w[k:min(len(w), k+5)])
	}
	return ""
}
