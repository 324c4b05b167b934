package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// readmeSection returns the README's section under the heading title,
// up to the next section.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("README has no section \"## %s\"", title)
	}
	sec := text[i+1:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	return sec
}

// TestREADMEDocumentsEveryFlag keeps the README's producer section in
// step with the flags and their variables.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	sec := readmeSection(t, "Backfills and the producer")
	var c config
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	bindFlags(fs, &c)
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(sec, "`-"+f.Name+"`") && !strings.Contains(sec, "`-"+f.Name+" ") {
			t.Errorf("README producer section does not document -%s", f.Name)
		}
	})
	for _, v := range []string{"NATS_URL", "CHUNKSTREAM_PRODUCER_CHUNKER", "CHUNKSTREAM_PRODUCER_OPTIONS", "CHUNKSTREAM_NATS_PASSWORD", "CHUNKSTREAM_NATS_TOKEN"} {
		if !strings.Contains(sec, v) {
			t.Errorf("README producer section does not name %s", v)
		}
	}
}

// TestREADMEDocumentsDLQ keeps the README in step with producer dlq: its
// flags in the producer section, the runbook's steps, and the cause
// header in the message formats.
func TestREADMEDocumentsDLQ(t *testing.T) {
	sec := readmeSection(t, "Backfills and the producer")
	for op := range dlqOps {
		var c dlqConfig
		var a dlqArgs
		fs := flag.NewFlagSet("producer dlq "+op, flag.ContinueOnError)
		bindDLQFlags(fs, op, &c, &a)
		fs.VisitAll(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "nats-") {
				return // the connection flags, documented above and named "-nats-*"
			}
			if !strings.Contains(sec, "`-"+f.Name+"`") && !strings.Contains(sec, "`-"+f.Name+" ") {
				t.Errorf("README producer section does not document -%s of producer dlq %s", f.Name, op)
			}
		})
		if !strings.Contains(sec, "producer dlq "+op) {
			t.Errorf("README producer section does not show producer dlq %s", op)
		}
	}
	runbook := readmeSection(t, "Dead letters: a runbook")
	for _, s := range []string{"producer dlq list", "producer dlq replay", "-dry-run", "producer dlq purge", "-yes", "last_failure"} {
		if !strings.Contains(runbook, s) {
			t.Errorf("README runbook does not mention %s", s)
		}
	}
	formats := readmeSection(t, "Message formats")
	for _, s := range []string{"Chunkstream-Error-Cause", "dead_lettered", "last_failure"} {
		if !strings.Contains(formats, s) {
			t.Errorf("README message formats do not mention %s", s)
		}
	}
}

// TestREADMEDocumentsStatus keeps the README in step with producer
// status: its flags and its forms in the producer section.
func TestREADMEDocumentsStatus(t *testing.T) {
	sec := readmeSection(t, "Backfills and the producer")
	var c statusConfig
	var a statusArgs
	fs := flag.NewFlagSet("producer status", flag.ContinueOnError)
	bindStatusFlags(fs, &c, &a)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "nats-") || f.Name == "s" || f.Name == "connect-timeout" || f.Name == "log-level" {
			return // the connection flags, documented above
		}
		if !strings.Contains(sec, "`-"+f.Name+"`") && !strings.Contains(sec, "`-"+f.Name+" ") {
			t.Errorf("README producer section does not document -%s of producer status", f.Name)
		}
	})
	for _, s := range []string{"producer status", "producer status -id", "producer status -failed", "-wait-timeout"} {
		if !strings.Contains(sec, s) {
			t.Errorf("README producer section does not show %s", s)
		}
	}
}
