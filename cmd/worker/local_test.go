package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

func noEnv(string) (string, bool) { return "", false }

// writeTree writes files (slash paths) under a new temp folder.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLocalEqualsSplit: local mode's output equals `chunk split` on the
// same folder and flags, byte for byte, in JSONL and YAML.
func TestLocalEqualsSplit(t *testing.T) {
	chunkBin := buildBinary(t, "cmd/chunk")
	gen := markdownDocs(30)
	gen["guide/intro.mdx"] = []byte("import X from './x'\n\n# Intro\n\n<Widget a=\"b\" />\n\nSome text here.\n")
	gen["guide/.hidden.md"] = []byte("# hidden\n")
	gen["empty.md"] = nil
	gen["blank.md"] = []byte("\n\n   \n")
	generated := writeTree(t, gen)
	cases := []struct {
		name  string
		dir   string
		flags []string
		out   string
	}{
		{"examples jsonl", filepath.Join(testutil.RepoRoot(t), "examples", "docs"), nil, "out.jsonl"},
		{"generated yaml", generated, nil, "out.yaml"},
		{"generated small chunks", generated, []string{"-max-char", "300", "-chunk-overlap", "0"}, "out.jsonl"},
		{"twostep", generated, []string{"-chunker", "twostep", "-max-chunk-size", "120"}, "out.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			got := filepath.Join(tmp, "local-"+tc.out)
			want := filepath.Join(tmp, "split-"+tc.out)
			args := append([]string{"-local", tc.dir, "-out", got, "-workers", "2", "-no-progress"}, tc.flags...)
			var stderr bytes.Buffer
			if code := run(context.Background(), args, &bytes.Buffer{}, &stderr, noEnv); code != 0 {
				t.Fatalf("worker %v = %d\n%s", args, code, stderr.String())
			}
			cmd := exec.Command(chunkBin, append(append([]string{"split", "-o", want}, tc.flags...), tc.dir)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("chunk split: %v\n%s", err, out)
			}
			g, _ := os.ReadFile(got)
			w, _ := os.ReadFile(want)
			if len(w) == 0 {
				t.Fatal("chunk split wrote nothing")
			}
			if !bytes.Equal(g, w) {
				t.Errorf("local mode output (%d bytes) differs from chunk split (%d bytes)", len(g), len(w))
			}
			if !strings.Contains(stderr.String(), "0 dead letters") {
				t.Errorf("summary = %q", stderr.String())
			}
		})
	}
}

// TestLocalDeadLetter: a document that cannot be chunked is a dead
// letter with its reason; the others are written; exit status 1.
func TestLocalDeadLetter(t *testing.T) {
	dir := writeTree(t, map[string][]byte{
		"good.md":   []byte("# Good\n\ntext\n"),
		"latin1.md": []byte("caf\xe9\n"),
	})
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-local", dir, "-out", out, "-no-progress"}, &bytes.Buffer{}, &stderr, noEnv)
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "1 dead letters") || !strings.Contains(s, "latin1.md") || !strings.Contains(s, "not_utf8") {
		t.Errorf("summary = %q, want the dead letter and its reason", s)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), `"file": "good.md"`) && !strings.Contains(string(b), `"file":"good.md"`) {
		t.Errorf("output lacks good.md:\n%s", b)
	}
}

func TestLocalUsage(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.md": []byte("# A")})
	for _, args := range [][]string{
		{"-local", dir},                                        // no -out
		{"-local", dir, "-out", "x.txt"},                       // unknown output format
		{"-local", dir, "-out", "x.jsonl", "-chunker", "nope"}, // unknown chunker
		{"-local", dir, "-out", "x.jsonl", "-max-char", "-5"},  // invalid option
		{"-out", "x.jsonl"},                                    // -out without -local
		{"-no-such-flag"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, &bytes.Buffer{}, &stderr, noEnv); code != 2 {
			t.Errorf("run(%q) = %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}
