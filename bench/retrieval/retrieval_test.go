package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/eval"
)

// TestLocate runs the span-locating tests of locate.mjs (node --test),
// which need Node.js alone, no npm packages.
func TestLocate(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH: locate.mjs's tests not run")
	}
	out, err := exec.Command(node, "--test", "locate.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test locate.test.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("node --test locate.test.mjs ran no test or failed:\n%s", out)
	}
}

// TestReadPeer: located spans are checked against the file; unlocated
// chunks become passages without a range, counted.
func TestReadPeer(t *testing.T) {
	files := map[string][]byte{"a.md": []byte("héllo wörld")}
	ps, unloc, err := readPeer(strings.NewReader(
		`{"file":"a.md","start":0,"end":6,"text":"héllo"}`+"\n"+
			`{"file":"a.md","start":-1,"end":-1,"text":"changed"}`+"\n"), files)
	if err != nil || unloc != 1 || len(ps) != 2 || ps[0].End != 6 || ps[1].Start != 0 || ps[1].End != 0 {
		t.Fatalf("readPeer = %+v, %d, %v; want one located passage and one unlocated", ps, unloc, err)
	}
	for _, bad := range []string{
		`{"file":"a.md","start":0,"end":5,"text":"héllo"}`,  // one byte short
		`{"file":"b.md","start":0,"end":1,"text":"h"}`,      // no such file
		`{"file":"a.md","start":7,"end":99,"text":"wörld"}`, // past the end
	} {
		if _, _, err := readPeer(strings.NewReader(bad), files); err == nil {
			t.Errorf("readPeer(%s) accepted a span that is not the chunk's text", bad)
		}
	}
}

// TestParseMatch: -match names the statistic the peers are matched on.
func TestParseMatch(t *testing.T) {
	r := row{sizes: eval.Sizes{P50: 300, Mean: 400}, top5: 2000}
	for _, tc := range []struct {
		arg  string
		want float64
		err  bool
	}{{"", 400, false}, {"mean", 400, false}, {"median", 300, false}, {"retrieved", 2000, false}, {"p90", 0, true}} {
		args := []string{"-set", "a=q.jsonl,dir"}
		if tc.arg != "" {
			args = append(args, "-match", tc.arg)
		}
		c, err := parse(args)
		if tc.err {
			if err == nil {
				t.Errorf("-match %s: no error", tc.arg)
			}
			continue
		}
		if err != nil {
			t.Fatalf("-match %s: %v", tc.arg, err)
		}
		if got := c.stat(r); got != tc.want {
			t.Errorf("-match %s: stat %v, want %v", tc.arg, got, tc.want)
		}
	}
}

// TestRunPeerReuses: a peer's chunks already in the work folder are read,
// not made again (the script is not run).
func TestRunPeerReuses(t *testing.T) {
	work := t.TempDir()
	files := map[string][]byte{"a.md": []byte("hello world")}
	line := `{"file":"a.md","start":0,"end":5,"text":"hello"}` + "\n"
	if err := os.WriteFile(filepath.Join(work, "s-lc-recursive-100-0.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &config{work: work, script: filepath.Join(work, "no-such-script.mjs")}
	cp := &corpus{set: set{name: "s", dir: work}, files: files}
	ps, unloc, err := c.runPeer(context.Background(), cp, "lc-recursive", 100, 0)
	if err != nil || unloc != 0 || len(ps) != 1 || ps[0].Text != "hello" {
		t.Fatalf("runPeer = %+v, %d, %v; want the stored chunk", ps, unloc, err)
	}
}

// TestTopChars: the characters of the top k passages, averaged over the
// questions, each passage counted in code points.
func TestTopChars(t *testing.T) {
	ps := []eval.Passage{{Text: "héllo"}, {Text: "ab"}, {Text: "wörld!"}}
	res := &eval.Result{Questions: []eval.QuestionResult{{Retrieved: []int{0, 1, 2}}, {Retrieved: []int{2}}}}
	if got, want := topChars(res, ps, 2), (5+2+6)/2.0; got != want {
		t.Errorf("topChars = %v, want %v", got, want)
	}
}
