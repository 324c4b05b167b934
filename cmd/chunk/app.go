package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// app is the chunk command with its dependencies, for tests.
type app struct {
	entries []registry.Entry
	stdout  io.Writer
	stderr  io.Writer
	// environ is the environment chunk eval reads its embedder from
	// (nil: the process's).
	environ map[string]string
}

// verbs are chunk's subcommands, which its synopsis and its dispatch
// read.
func (a *app) verbs() envflag.Verbs {
	verb := func(name, usage string, run func(context.Context, []string) error) envflag.Verb {
		return envflag.Verb{Name: name, Usage: usage, Run: func(ctx context.Context, args []string) (int, error) {
			err := run(ctx, args)
			return exitStatus(err), err
		}}
	}
	return envflag.Verbs{
		verb("split", "split [-chunker NAME] [chunker flags] [-ext LIST] [-workers N] [-o FILE] PATH...", a.split),
		verb("inspect", "inspect [-max-depth N] [-max-files N] [-read N | -file PATH | -sample [-seed S]] FILE",
			func(_ context.Context, args []string) error { return a.inspect(args) }),
		verb("bench", "bench [-chunker NAME] [chunker flags] [-parse-only] [-ext LIST] DIR", a.bench),
		verb("view", "view [-chunker NAME] [chunker flags] [-compare OPTIONS] [-root DIR] [-file PATH] [-o FILE] FILE", a.view),
		verb("eval", "eval -questions FILE [-k LIST] [-json | -misses] [-try FLAGS]... [-chunks FILE]... [chunker flags] DIR", a.eval),
	}
}

// usage is chunk's help: what it does, its synopsis, and where the rest is.
func usage(verbs envflag.Verbs) string {
	return "chunk splits documents into chunks, shows how they are chunked, inspects chunk collections, benchmarks chunkers and measures retrieval.\n\n" +
		verbs.Synopsis("chunk") +
		"\nRun \"chunk <subcommand> -h\" for the flags of each subcommand.\n" +
		"Exit status: 0 success, 1 a file or the command failed, 2 usage error.\n"
}

// exitStatus is the exit status of a subcommand that returned err.
func exitStatus(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, envflag.ErrUsage):
		return exitUsage
	default:
		return exitFailure
	}
}

// run runs the command line args (without the program name) and returns
// the exit status.
func (a *app) run(ctx context.Context, args []string) int {
	verbs := a.verbs()
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usage(verbs))
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(a.stdout, usage(verbs))
		return exitOK
	}
	v, ok := verbs.Subcommand(args)
	if !ok {
		fmt.Fprintf(a.stderr, "chunk: unknown subcommand %q\n\n%s", args[0], usage(verbs))
		return exitUsage
	}
	code, err := v.Run(ctx, args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, envflag.ErrShown), errors.Is(err, errFilesFailed):
	case errors.Is(err, envflag.ErrUsage):
		fmt.Fprintf(a.stderr, "chunk %s: %v\nRun \"chunk %s -h\" for help.\n", args[0], err, args[0])
	default:
		fmt.Fprintf(a.stderr, "chunk %s: %v\n", args[0], err)
	}
	return code
}

// newFlagSet returns a flag set whose -h prints head's usage lines,
// summary and the flags named, and whose -help-all prints all of head
// and every flag.
func (a *app) newFlagSet(name, head, summary string, flags ...string) *flag.FlagSet {
	fs := flag.NewFlagSet("chunk "+name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	usage, details, _ := strings.Cut(strings.TrimLeft(head, "\n"), "\n\n")
	envflag.SetHelp(fs, envflag.Help{Usage: usage, Summary: summary, Details: details, Flags: flags})
	return fs
}

// parseInterspersed parses args into fs, flags before and after the
// arguments alike, and returns the arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := envflag.Parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// chunkerFlagsNote is the -h line on the chunker option flags.
const chunkerFlagsNote = `The chunker's options are flags too (-max-char, -max-chunk-size, -word-overlap, ...): -help-all
lists them, docs/cli.md ("Chunker flags") says what they do.`
