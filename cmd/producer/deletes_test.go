package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/messages"
)

// summaryLine matches the summary line a run ends with.
var summaryLine = regexp.MustCompile(`(?m)^producer: \d+ documents: .*\n`)

// TestDeleteMissingCommand: -delete-missing without a scope is refused,
// saying what it would delete and how to scope it; the count comes first;
// -dry-run lists the ids; above the threshold it needs -yes; scoped, it
// deletes exactly the gone documents of its scope, on their own subject,
// not the run's.
func TestDeleteMissingCommand(t *testing.T) {
	e := newDLQEnv(t)
	ctx := context.Background()
	kb, wiki := map[string]string{}, map[string]string{}
	for i := range 10 {
		kb[fmt.Sprintf("a%02d.md", i)] = fmt.Sprintf("# A%d\n\ntext\n", i)
	}
	wiki["w0.md"], wiki["w1.md"] = "# W0\n", "# W1\n"
	kbDir, wikiDir := writeTree(t, kb), writeTree(t, wiki)
	send := func(args ...string) (int, string, string) {
		t.Helper()
		return e.producer(append([]string{"-progress=false"}, args...)...)
	}
	for _, args := range [][]string{{"-id-prefix", "kb/", kbDir}, {"-id-prefix", "wiki/", "-subject", "ingest.wiki", wikiDir}} {
		if code, _, errOut := send(args...); code != 0 {
			t.Fatalf("producer %q = %d\n%s", args, code, errOut)
		}
	}
	e.work(nil, 12)
	ingest := e.top.Ingest
	last := func() uint64 {
		t.Helper()
		info, err := ingest.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	remove := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if err := os.Remove(filepath.Join(kbDir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove("a03.md")
	sent := last()

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // the whole of it
	}{
		{"no scope", []string{"-delete-missing", kbDir}, 2, "",
			"producer: -delete-missing: 12 deletes: 12 of the 12 documents recorded (100%), on ingest.docs (10), ingest.wiki (2)\n" +
				"producer: usage: -delete-missing without a scope would delete 12 of the 12 documents recorded (100%), on ingest.docs (10), ingest.wiki (2); nothing was sent: " +
				"give -id-prefix PREFIX (the prefix the documents were sent with) to delete only the gone documents under it, or -all to delete across every id; -dry-run lists them\n"},
		{"-all excludes -id-prefix", []string{"-delete-missing", "-all", "-id-prefix", "kb/", kbDir}, 2, "",
			"producer: usage: -id-prefix excludes -all: -id-prefix scopes -delete-missing to its ids, -all to every id\n"},
		{"-yes without -delete-missing", []string{"-yes", "-id-prefix", "kb/", kbDir}, 2, "",
			"producer: usage: -yes has no effect without -delete-missing\n"},
		{"dry run", []string{"-delete-missing", "-id-prefix", "kb/", "-dry-run", kbDir}, 0, "delete\tkb/a03.md\t0\n",
			"producer: -delete-missing: 1 deletes would be sent: 1 of the 10 documents recorded under \"kb/\" (10%), on ingest.docs (1)\n"},
		{"dry run without a scope", []string{"-delete-missing", "-dry-run", kbDir}, 0, "",
			"producer: -delete-missing: 12 deletes would be sent: 12 of the 12 documents recorded (100%), on ingest.docs (10), ingest.wiki (2)\n" +
				"producer: -delete-missing: a run without -dry-run is refused: give -id-prefix, or -all\n"},
	} {
		code, out, errOut := send(tc.args...)
		errOut = summaryLine.ReplaceAllString(errOut, "")
		if code != tc.code || !strings.HasPrefix(out, tc.stdout) || errOut != tc.stderr {
			t.Errorf("%s: producer %q = %d\nstdout %q\nstderr %q\nwant %d, stdout starting %q, stderr %q", tc.name, tc.args, code, out, errOut, tc.code, tc.stdout, tc.stderr)
		}
		if got := last(); got != sent {
			t.Fatalf("%s: INGEST's last sequence is %d, was %d: something was sent", tc.name, got, sent)
		}
	}

	// Scoped, on another subject than the documents': the delete goes to
	// the document's own, and nothing else is sent.
	code, _, errOut := send("-delete-missing", "-id-prefix", "kb/", "-subject", "ingest.other", "-ext", "md", kbDir)
	if code != 0 || !strings.HasPrefix(errOut, "producer: -delete-missing: 1 deletes: 1 of the 10 documents recorded under \"kb/\" (10%), on ingest.docs (1)\n") {
		t.Fatalf("scoped run = %d\n%s", code, errOut)
	}
	// The nine others were sent on ingest.docs: a run on ingest.other
	// re-sends them (the subject is a setting), after the delete it is not.
	if got := last(); got != sent+10 {
		t.Fatalf("INGEST's last sequence %d, want %d", got, sent+10)
	}
	deletes := 0
	for seq := sent + 1; seq <= sent+10; seq++ {
		m, err := ingest.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case req.IsDelete() && (req.ID != "kb/a03.md" || m.Subject != "ingest.docs"):
			t.Errorf("delete of %s on %s, want kb/a03.md on ingest.docs", req.ID, m.Subject)
		case req.IsDelete():
			deletes++
		case m.Subject != "ingest.other":
			t.Errorf("upsert of %s on %s, want the run's ingest.other", req.ID, m.Subject)
		}
	}
	if deletes != 1 {
		t.Errorf("%d deletes sent, want 1", deletes)
	}
	e.work(nil, 10)

	// Over the threshold (2 of 9 kb/ documents), -yes is needed.
	remove("a04.md", "a05.md")
	sent = last()
	code, _, errOut = send("-delete-missing", "-id-prefix", "kb/", "-subject", "ingest.other", kbDir)
	want := "producer: -delete-missing: 2 deletes: 2 of the 9 documents recorded under \"kb/\" (22.2%), on ingest.other (2)\n" +
		"producer: usage: -delete-missing would delete 2 of the 9 documents recorded under \"kb/\" (22.2%), on ingest.other (2), more than 10%; nothing was sent: list them with -dry-run, then run again with -yes to delete them\n"
	if code != 2 || errOut != want || last() != sent {
		t.Errorf("over the threshold = %d\n%s\nwant 2 and\n%s", code, errOut, want)
	}
	code, _, errOut = send("-delete-missing", "-yes", "-id-prefix", "kb/", "-subject", "ingest.other", kbDir)
	if code != 0 || !strings.Contains(errOut, "2 deletes") || last() != sent+2 {
		t.Errorf("with -yes = %d\n%s", code, errOut)
	}
}
