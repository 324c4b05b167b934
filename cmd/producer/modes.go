package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// A setting is given when its flag is on the command line or, for the
// producer's own settings (CHUNKSTREAM_PRODUCER_*, which configure one
// run), when its variable is set. The variables shared with the workers
// (NATS, topology) are set once per deployment for every command, so
// only their flags count.

// given reports which settings are given, by flag name.
func given(fs *flag.FlagSet, lookup func(string) (string, bool)) map[string]bool {
	out := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { out[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		v := flagVariable(f)
		if f.Name == "chunker" {
			v = "CHUNKSTREAM_PRODUCER_CHUNKER"
		}
		if strings.HasPrefix(v, "CHUNKSTREAM_PRODUCER_") {
			if _, ok := lookup(v); ok {
				out[f.Name] = true
			}
		}
		// A switch turned off does nothing in any mode.
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && f.Value.String() == "false" {
			delete(out, f.Name)
		}
	})
	return out
}

// flagVariable returns the variable a flag's usage names ("(env VAR)").
func flagVariable(f *flag.Flag) string {
	_, rest, ok := strings.Cut(f.Usage, "(env ")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, ")")
	return v
}

// Flags that shape the requests of a backfill: a stream's lines carry
// their own.
var requestFlags = []string{"id-prefix", "ext", "chunker", "options", "format", "source", "collection", "force",
	"delete-missing", "resend-stale", "readers"}

// Flags of publishing, which a dry run does not do.
var publishFlags = []string{"rate", "max-pending", "max-pending-bytes", "retry-for", "retry-wait", "ack-timeout", "json",
	"objects-ttl", "replicas", "wait", "wait-timeout"}

// checkModes reports the first setting given that has no effect in the
// run's mode, or two that exclude each other. chunkerFlags are the
// chunker option flags; mailbox tells that the paths are mailboxes.
func checkModes(set map[string]bool, c *config, chunkerFlags map[string]bool, mailbox bool) error {
	bad := func(name, why string) error {
		return fmt.Errorf("%w: -%s %s", envflag.ErrUsage, name, why)
	}
	if c.Stdin {
		for _, name := range requestFlags {
			if set[name] {
				return bad(name, "has no effect with -stdin: each line is a whole request")
			}
		}
		for name := range chunkerFlags {
			if set[name] {
				return bad(name, "has no effect with -stdin: each line is a whole request")
			}
		}
	}
	if mailbox {
		for _, name := range []string{"ext", "format"} {
			if set[name] {
				return bad(name, "has no effect with -chunker email: each path is one mailbox, sent as format mbox")
			}
		}
	}
	if c.DryRun {
		for _, name := range publishFlags {
			if set[name] {
				return bad(name, "has no effect with -dry-run, which publishes nothing")
			}
		}
	}
	if set["wait-timeout"] && !c.Wait {
		return bad("wait-timeout", "has no effect without -wait")
	}
	if c.ResendStale {
		for _, name := range []string{"force", "delete-missing"} {
			if set[name] {
				return bad(name, "excludes -resend-stale, which sends only documents whose settings changed")
			}
		}
	}
	return nil
}
