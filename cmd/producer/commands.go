package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is a subcommand of producer: `producer NAME ARGS...`.
type command struct {
	// usage is its synopsis after "producer ", and summary what it does,
	// for -h.
	usage, summary string
	// run runs it with the arguments after its name; it returns the exit
	// status (2 for a usage error) and an error to print.
	run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error)
}

// commands are the subcommands by name.
var commands = map[string]command{
	"dlq":      {usage: "dlq list|replay|purge [flags]", summary: "list, replay or delete dead letters", run: runDLQ},
	"status":   {usage: "status [-json] [-id ID | -failed]", summary: "documents by state, backlog, dead letters, workers", run: runStatus},
	"search":   {usage: `search "TEXT" [-k N] [-collection C] [-tenant T] [-vector NAME] [-json]`, summary: "hybrid search of the Qdrant collection", run: runSearch},
	"reembed":  {usage: "reembed -vector NAME [-model M] | -cut-over -vector NAME | -drop NAME", summary: "switch the embedding model of the live collection", run: runReembed},
	"defaults": {usage: "defaults [set -chunker NAME [chunker flags]]", summary: "the fleet's chunker defaults; set them", run: runDefaults},
}

// producerForms are the forms of `producer` itself, with what they do.
var producerForms = [][2]string{
	{"[flags] PATH...", "send every document under the paths"},
	{"-chunker email [flags] MAILBOX...", "send each mailbox one thread per request"},
	{"-stdin [flags] < requests.jsonl", "send JSON lines of ingest requests"},
}

// usageLines returns the synopsis of producer: its forms, then its
// subcommands (sorted), each with what it does, in two columns.
func usageLines() string {
	forms := slices.Clone(producerForms)
	var subs [][2]string
	for _, c := range commands {
		subs = append(subs, [2]string{c.usage, c.summary})
	}
	slices.SortFunc(subs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	forms = append(forms, subs...)
	width := 0
	for _, f := range forms {
		width = max(width, len(f[0]))
	}
	var b strings.Builder
	for i, f := range forms {
		lead := "       producer "
		if i == 0 {
			lead = "usage: producer "
		}
		fmt.Fprintf(&b, "%s%-*s  %s\n", lead, width, f[0], f[1])
	}
	return b.String()
}
