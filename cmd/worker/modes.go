package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/worker"
)

// Modes of the command.
const (
	modeService     = "service"
	modeLocal       = "local"
	modeHealthcheck = "healthcheck"
)

// localOnly are the flags of local mode.
var localOnly = []string{"local", "out", "workers", "store", "ext", "no-progress", "cpuprofile"}

// checkMode reports the first flag given on the command line that has no
// effect in mode (docs/cli.md lists them). Only flags count: environment
// variables are shared by every mode (a deployment sets them once).
func checkMode(fs *flag.FlagSet, mode string, c *config) error {
	var given []string
	fs.Visit(func(f *flag.Flag) { given = append(given, f.Name) })
	sinkFlags := flagNames(func(fs *flag.FlagSet) { bindSinkFlags(fs, &config{}) })
	natsFlags := flagNames(func(fs *flag.FlagSet) { natsconn.BindFlags(fs, &natsconn.Config{}) })
	for _, name := range given {
		var why string
		switch mode {
		case modeHealthcheck:
			if name != "healthcheck" && name != "metrics-addr" {
				why = "with -healthcheck, which reads only -metrics-addr"
			}
		case modeLocal:
			switch {
			case name == "connect-timeout":
			case slices.Contains(natsFlags, name):
				why = "in local mode, which runs its own embedded server"
			case name == "metrics-addr" || name == "sink" || name == "record-format" || slices.Contains(sinkFlags, name):
				why = "in local mode, which writes the chunks to -out and serves no metrics"
			case name == "concurrency" && slices.Contains(given, "workers"):
				why = "with -workers, which sets local mode's concurrency"
			}
		case modeService:
			switch {
			case slices.Contains(localOnly, name):
				why = "without -local"
			case c.Sink != worker.SinkQdrant && slices.Contains(sinkFlags, name):
				why = fmt.Sprintf("with -sink %s: it configures the Qdrant sink (-sink qdrant)", c.Sink)
			case c.Sink != worker.SinkSubject && name == "record-format":
				why = fmt.Sprintf("with -sink %s: it is the subject sink's record encoding", c.Sink)
			}
		}
		if why != "" {
			return fmt.Errorf("%w: -%s has no effect %s", envflag.ErrUsage, name, why)
		}
	}
	return nil
}

// bindSinkFlags binds the Qdrant sink's and the embedder's settings.
func bindSinkFlags(fs *flag.FlagSet, c *config) {
	envflag.Bind(fs, &c.Qdrant, notSecret)
	envflag.Bind(fs, &c.Embed, notSecret)
}

func notSecret(envVar string) bool { return !secretVars[envVar] }

// flagNames returns the names of the flags bind defines.
func flagNames(bind func(*flag.FlagSet)) []string {
	fs := flag.NewFlagSet("names", flag.ContinueOnError)
	bind(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// modeOf names the mode the parsed flags select.
func modeOf(healthcheck bool, local string) string {
	switch {
	case healthcheck:
		return modeHealthcheck
	case strings.TrimSpace(local) != "":
		return modeLocal
	}
	return modeService
}
