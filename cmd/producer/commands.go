package main

import (
	"context"
	"io"
	"slices"
	"strings"
)

// command is a subcommand of producer: `producer NAME ARGS...`.
type command struct {
	// usage is its synopsis after "producer " and a summary, for -h.
	usage string
	// run runs it with the arguments after its name; it returns the exit
	// status (2 for a usage error) and an error to print.
	run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error)
}

// commands are the subcommands by name.
var commands = map[string]command{
	"dlq":      {usage: "dlq list|replay|purge [flags]     list, replay or delete dead letters", run: runDLQ},
	"status":   {usage: "status [-json] [-id ID | -failed]  documents by state, backlog, dead letters; one record; the failed", run: runStatus},
	"search":   {usage: `search "TEXT" [-k N] [-collection C] [-json]  hybrid search of the Qdrant collection`, run: runSearch},
	"defaults": {usage: "defaults [set -chunker NAME [chunker flags]]  the fleet's chunker defaults; set them", run: runDefaults},
}

// commandsUsage returns the synopsis lines of the subcommands, sorted.
func commandsUsage() string {
	var lines []string
	for _, c := range commands {
		lines = append(lines, "       producer "+c.usage)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
