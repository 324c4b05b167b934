package main

import (
	"regexp"
	"testing"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/internal/testutil"
)

// chunkFlags returns the flags `chunk sub -help-all` lists, chunker flags
// included.
func chunkFlags(t *testing.T, sub string) []string {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	_, out, errOut := runApp(t, registry.Default().Entries(), sub, "-help-all")
	ms := flagLine.FindAllStringSubmatch(out+errOut, -1)
	if len(ms) < 3 {
		t.Fatalf("chunk %s -help-all lists %d flags; the help format changed?", sub, len(ms))
	}
	var flags []string
	for _, m := range ms {
		flags = append(flags, m[1])
	}
	return flags
}

// TestREADMEDocumentsEveryFlag keeps the CLI reference, the `chunk`
// section of docs/cli.md, in step with the flags: every flag of `chunk
// sub -h` has a row in the table of its subcommand or, for a chunker
// flag, in the table of chunker flags.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	cli, ok := testutil.DocSection(t, "docs/cli.md", "`chunk`")
	if !ok {
		t.Fatal("docs/cli.md has no ## `chunk` section")
	}
	chunkers, ok := testutil.Subsection(cli, "Chunker flags")
	if !ok {
		t.Fatal("docs/cli.md has no ### Chunker flags")
	}
	chunkerRows := testutil.TableFlags(chunkers, 1) // | chunker | flag | …
	if len(chunkerRows) < 10 {
		t.Fatalf("docs/cli.md's chunker flags table names %d flags; its format changed?", len(chunkerRows))
	}
	for _, sub := range []string{"split", "inspect", "bench", "view", "eval"} {
		text, ok := testutil.Subsection(cli, "`chunk "+sub+"`")
		if !ok {
			t.Errorf("docs/cli.md has no ### `chunk %s` section", sub)
			continue
		}
		rows := testutil.TableFlags(text, 0)
		for _, f := range chunkFlags(t, sub) {
			if !rows[f] && !(sub != "inspect" && chunkerRows[f]) {
				t.Errorf("docs/cli.md has no row for `chunk %s -%s`", sub, f)
			}
		}
	}
}

// TestREADMECommandsRun runs every `chunk` line of the README as written,
// in order, in a copy of the examples folder: each exits 0.
func TestREADMECommandsRun(t *testing.T) {
	cmds := testutil.ReadmeCommands(t, "chunk")
	testutil.CopyExamples(t)
	for _, c := range cmds {
		code, _, errOut := runApp(t, registry.Default().Entries(), c.Args...)
		if code != 0 {
			t.Errorf("%s\n= %d: %s", c.Line, code, errOut)
		}
	}
}
