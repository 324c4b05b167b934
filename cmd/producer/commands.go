package main

import (
	"context"
	"io"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// runFunc runs a form of producer with the arguments after its name; it
// returns the exit status (2 for a usage error) and an error to print.
type runFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error)

// commands are producer's forms, which its synopsis and its dispatch
// read: the forms of producer itself (sending documents), then its
// subcommands, each run with stdin, stdout, stderr and lookup.
func commands(stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) envflag.Verbs {
	verb := func(name, usage, summary string, run runFunc) envflag.Verb {
		return envflag.Verb{Name: name, Mode: name == "", Usage: usage, Summary: summary,
			Run: func(ctx context.Context, args []string) (int, error) {
				return run(ctx, args, stdin, stdout, stderr, lookup)
			}}
	}
	return envflag.Verbs{
		verb("", "[flags] PATH...", "send every document under the paths", send),
		verb("", "-chunker email [flags] MAILBOX...", "send each mailbox one thread per request", send),
		verb("", "-stdin [flags] < requests.jsonl", "send JSON lines of ingest requests", send),
		verb("defaults", "defaults [set -chunker NAME [chunker flags]]", "the fleet's chunker defaults; set them", runDefaults),
		verb("dlq", "dlq list|replay|purge [flags]", "list, replay or delete dead letters", runDLQ),
		verb("reembed", "reembed -vector NAME [-model M] | -cut-over -vector NAME | -drop NAME [-yes]", "switch the embedding model of the live collection", runReembed),
		verb("search", `search "TEXT" [-k N] [-collection C] [-tenant T] [-vector NAME] [-json]`, "hybrid search of the Qdrant collection", runSearch),
		verb("status", "status [-json] [-id ID | -failed] [-tenant T]", "documents by state, backlog, dead letters, workers", runStatus),
	}
}

// usageLines returns the synopsis of producer: its forms, then its
// subcommands, each with what it does, in two columns.
func usageLines() string { return commands(nil, nil, nil, nil).Synopsis("producer") }
