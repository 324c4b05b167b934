package main

import (
	"os/exec"
	"strings"
	"testing"
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
