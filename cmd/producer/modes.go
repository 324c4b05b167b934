package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
)

// A setting is given when its flag is on the command line or, for the
// producer's own settings (CHUNKSTREAM_PRODUCER_*, which configure one
// run, and CHUNKSTREAM_TENANT, whose documents a run sends), when its
// variable is set. The variables shared with the workers (NATS,
// topology) are set once per deployment for every command, so only their
// flags count.

// given reports which settings are given, by flag name.
func given(fs *flag.FlagSet, lookup func(string) (string, bool)) map[string]bool {
	out := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { out[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		v := flagVariable(f)
		if f.Name == "chunker" {
			v = "CHUNKSTREAM_PRODUCER_CHUNKER"
		}
		if strings.HasPrefix(v, "CHUNKSTREAM_PRODUCER_") || f.Name == "tenant" {
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
// their own (a line without "tenant" is the untenanted document's, so a
// -tenant that would not reach it is refused, not ignored).
var requestFlags = []string{"id-prefix", "ext", "chunker", "options", "format", "source", "collection", "tenant", "force",
	"delete-missing", "all", "yes", "resend-stale", "readers", "bulk"}

// Flags of publishing, which a dry run does not do.
var publishFlags = []string{"rate", "max-pending", "max-pending-bytes", "retry-for", "retry-wait", "ack-timeout", "json",
	"objects-ttl", "replicas", "wait", "wait-timeout"}

// checkModes reports the first setting given that has no effect in the
// run's mode, or two that exclude each other. chunkerFlags are the
// chunker option flags; mailbox tells that the paths are mailboxes.
func checkModes(set map[string]bool, c *config, chunkerFlags map[string]bool, mailbox bool) error {
	rules := []struct {
		mode  bool
		names []string
		why   string
	}{
		{c.Stdin, slices.Concat(requestFlags, slices.Sorted(maps.Keys(chunkerFlags))), "has no effect with -stdin: each line is a whole request"},
		{mailbox, []string{"format"}, "has no effect with -chunker email: each path is one mailbox, sent as format mbox"}, // -ext: chunkflags.Extensions
		{c.DryRun, publishFlags, "has no effect with -dry-run, which publishes nothing"},
		{!c.Wait, []string{"wait-timeout"}, "has no effect without -wait"},
		{c.ResendStale, []string{"force", "delete-missing"}, "excludes -resend-stale, which sends only documents whose settings changed"},
		{!c.DeleteMissing, []string{"all", "yes"}, "has no effect without -delete-missing"},
		{c.All, []string{"id-prefix"}, "excludes -all: -id-prefix scopes -delete-missing to its ids, -all to every id"},
	}
	for _, r := range rules {
		for _, name := range r.names {
			if r.mode && set[name] {
				return fmt.Errorf("%w: -%s %s", envflag.ErrUsage, name, r.why)
			}
		}
	}
	return nil
}
