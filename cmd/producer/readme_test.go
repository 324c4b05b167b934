package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// TestReadmeDocumentsEveryFlag keeps the README's producer section in
// step with the flags and their variables.
func TestReadmeDocumentsEveryFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "## Backfills and the producer")
	if i < 0 {
		t.Fatal("README has no section \"## Backfills and the producer\"")
	}
	sec := text[i:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
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
