package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpIsShort: -h of producer and of each of its commands is a
// synopsis of at most 40 lines that exits 0 and points to -help-all (or,
// for dlq, to each operation's -h); -help-all lists every flag.
func TestHelpIsShort(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		args  []string
		names string // what the synopsis must name
	}{
		{[]string{"-h"}, "producer -help-all"},
		{[]string{"dlq", "-h"}, `"producer dlq OP -h"`},
		{[]string{"dlq", "list", "-h"}, "producer dlq list -help-all"},
		{[]string{"dlq", "replay", "-h"}, "producer dlq replay -help-all"},
		{[]string{"dlq", "purge", "-h"}, "producer dlq purge -help-all"},
		{[]string{"status", "-h"}, "producer status -help-all"},
		{[]string{"search", "-h"}, "producer search -help-all"},
		{[]string{"defaults", "-h"}, "producer defaults -help-all"},
		{[]string{"defaults", "set", "-h"}, "producer defaults set -help-all"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, nil, &stdout, &stderr, noEnv)
		help := stdout.String() + stderr.String()
		if n := strings.Count(help, "\n"); code != 0 || n > 40 || !strings.Contains(help, tc.names) {
			t.Errorf("producer %q = %d, %d lines:\n%s\nwant 0 and at most 40 lines naming %s", tc.args, code, n, help, tc.names)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-help-all"}, nil, &stdout, &stderr, noEnv); code != 0 {
		t.Fatalf("producer -help-all = %d", code)
	}
	for _, f := range []string{"-max-pending-bytes", "-retry-for", "-resend-stale", "-max-chunk-size", "-docs-bucket"} {
		if !strings.Contains(stderr.String(), "  "+f+" ") && !strings.Contains(stderr.String(), "  "+f+"\n") {
			t.Errorf("producer -help-all does not list %s", f)
		}
	}
	// Without -chunker the requests name no chunker (the workers' defaults
	// choose): -h shows no default for it.
	if _, usage, _ := strings.Cut(stderr.String(), "  -chunker "); strings.Contains(strings.SplitN(usage, "\n  -", 2)[0], "(default") {
		t.Errorf("producer -help-all shows a default for -chunker: %q", strings.SplitN(usage, "\n  -", 2)[0])
	}
}
