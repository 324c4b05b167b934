package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
)

// noEnv is an empty environment (with CHUNKSTREAM_TEST_TRACING=1, traced:
// tracingtest.Lookup).
var noEnv = tracingtest.Lookup(func(string) (string, bool) { return "", false })

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
	testutil.OptIn(t, testutil.Processes)
	chunkBin := testutil.Binary(t, "./cmd/chunk")
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
		{"code", writeTree(t, map[string][]byte{
			"srv/server.go": []byte("package srv\n\n// Serve serves.\nfunc Serve() error {\n\treturn nil\n}\n"),
			"tools/run.py":  []byte("import sys\n\n\ndef main():\n    print(sys.argv)\n\n\nmain()\n"),
			"web/app.ts":    []byte("export function hi(): string {\n  return 'hi';\n}\n"),
			"notes.md":      []byte("# not code: the code chunker's walk leaves it\n"),
		}), []string{"-chunker", "code", "-max-char", "40"}, "out.jsonl"},
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
			if tc.name == "code" && (bytes.Contains(g, []byte("not code")) || !bytes.Contains(g, []byte(`"srv.Serve"`)) || !bytes.Contains(g, []byte(`"language":"typescript"`))) {
				t.Errorf("code: the walk by the code chunker's extensions: %s", g)
			}
			if !strings.Contains(stderr.String(), "0 dead letters") {
				t.Errorf("summary = %q", stderr.String())
			}
		})
	}
}

// TestLocalDeadLetter: a document that cannot be chunked is a dead
// letter with its reason, a text file that is not UTF-8 is reported with
// where and not sent; the others are written; exit status 1.
func TestLocalDeadLetter(t *testing.T) {
	dir := writeTree(t, map[string][]byte{
		"good.md":   []byte("# Good\n\ntext\n"),
		"latin1.md": []byte("caf\xe9\n"),
		"long.md":   []byte(strings.Repeat("A sentence of a long document. ", 40)),
	})
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stderr bytes.Buffer
	args := []string{"-local", dir, "-out", out, "-no-progress", "-max-chunks-per-doc", "2", "-max-char", "100", "-chunk-overlap", "0", "-min-char", "0"}
	code := run(context.Background(), args, &bytes.Buffer{}, &stderr, noEnv)
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s", code, stderr.String())
	}
	s := stderr.String()
	if !strings.Contains(s, "1 dead letters") || !strings.Contains(s, "dead letter: long.md") || !strings.Contains(s, "too_complex") {
		t.Errorf("summary = %q, want the dead letter and its reason", s)
	}
	if !strings.Contains(s, "latin1.md (markdown): invalid UTF-8 at byte 3: not sent") {
		t.Errorf("summary = %q, want latin1.md reported with where", s)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), `"file": "good.md"`) && !strings.Contains(string(b), `"file":"good.md"`) {
		t.Errorf("output lacks good.md:\n%s", b)
	}
}

func TestLocalUsage(t *testing.T) {
	dir := writeTree(t, map[string][]byte{"a.md": []byte("# A")})
	for _, args := range [][]string{
		{"-local", dir},                                                         // no -out
		{"-local", dir, "-out", "x.txt"},                                        // unknown output format
		{"-local", dir, "-out", "x.jsonl", "-chunker", "nope"},                  // unknown chunker
		{"-local", dir, "-out", "x.jsonl", "-max-char", "-5"},                   // invalid option
		{"-local", dir, "-out", "x.jsonl", "-chunker", "email", "-ext", "mbox"}, // -ext with a mailbox
		{"-out", "x.jsonl"},                                                     // -out without -local
		{"-no-such-flag"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, &bytes.Buffer{}, &stderr, noEnv); code != 2 {
			t.Errorf("run(%q) = %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

// TestLocalMailbox: with -chunker email the folder or mbox is one mailbox
// sent one thread per request; the chunks are chunk split's (in document
// id order rather than the mailbox's thread order).
func TestLocalMailbox(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	chunkBin := testutil.Binary(t, "./cmd/chunk")
	mbox := []byte("From a@x.com Mon Jan  1 00:00:00 2024\n" +
		"From: Ann <a@x.com>\nTo: Bob <b@x.com>\nSubject: Plans\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nMessage-ID: <m1@x.com>\n\nShall we meet?\n\n" +
		"From b@x.com Mon Jan  1 00:00:00 2024\n" +
		"From: Bob <b@x.com>\nTo: Ann <a@x.com>\nSubject: Re: Plans\nDate: Mon, 1 Jan 2024 11:00:00 +0000\nMessage-ID: <m2@x.com>\nIn-Reply-To: <m1@x.com>\n\nYes, at noon.\n\n" +
		"From c@x.com Tue Jan  2 00:00:00 2024\n" +
		"From: Cid <c@x.com>\nTo: Ann <a@x.com>\nSubject: Other\nDate: Tue, 2 Jan 2024 09:00:00 +0000\nMessage-ID: <m3@x.com>\n\nUnrelated.\n\n")
	dir := writeTree(t, map[string][]byte{"box.mbox": mbox})
	path := filepath.Join(dir, "box.mbox")
	tmp := t.TempDir()
	got, want := filepath.Join(tmp, "local.jsonl"), filepath.Join(tmp, "split.jsonl")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-local", path, "-out", got, "-chunker", "email", "-no-progress"}, &bytes.Buffer{}, &stderr, noEnv); code != 0 {
		t.Fatalf("worker = %d\n%s", code, stderr.String())
	}
	if out, err := exec.Command(chunkBin, "split", "-chunker", "email", "-o", want, path).CombinedOutput(); err != nil {
		t.Fatalf("chunk split: %v\n%s", err, out)
	}
	hashes := func(p string) []string {
		c, err := chunking.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, ch := range c.Chunks() {
			hs = append(hs, ch.Hash())
		}
		slices.Sort(hs)
		return hs
	}
	g, w := hashes(got), hashes(want)
	if len(w) < 2 || !slices.Equal(g, w) {
		t.Errorf("local mode chunks %v, chunk split %v: want the same chunks", g, w)
	}
	if !strings.Contains(stderr.String(), "2 documents") {
		t.Errorf("summary = %q, want 2 documents (one per thread)", stderr.String())
	}
}
