// Command worker runs chunkstream's chunking workers: in service mode
// (the default) it consumes ingest requests from NATS until SIGTERM; with
// -local DIR -out FILE it runs the whole pipeline in one process on an
// embedded server; -healthcheck probes a running worker. docs/cli.md
// describes the modes, flags and exit statuses; every setting is an
// environment variable and a flag of the same name (docs/configuration.md),
// the flag winning. A flag that has no effect in the mode chosen is a
// usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/otelenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// workerHelp is what -h and -help-all say.
var workerHelp = envflag.Help{
	Usage: `usage: worker [setting flags]                         service mode: process ingest requests until SIGTERM
       worker -local DIR -out FILE [-workers N] [flags]  local mode: the whole pipeline in one process
       worker -healthcheck [-metrics-addr ADDR]          probe a running worker`,
	Summary: `Every setting is an environment variable and a flag of the same name (CHUNKSTREAM_ACK_WAIT:
-ack-wait); the flag wins. -chunker and the chunker's option flags (-max-char, -max-chunk-size,
...) are this worker's own chunker defaults; the fleet's, which every worker applies, are set
by the first worker to start (producer defaults shows them). docs/cli.md and
docs/configuration.md describe every flag.`,
	Details: `Every setting is an environment variable and a flag of the same name (CHUNKSTREAM_ACK_WAIT:
-ack-wait); the flag wins; secrets are environment only. A flag that has no effect in the mode
chosen is a usage error. -chunker and the chunker's option flags are this worker's own chunker
defaults; the fleet's, which every worker applies, are set by the first worker to start and
changed with producer defaults set. Exit status: 0 after a clean shutdown, 1 when the worker
could not start or failed, 2 on a usage error or an invalid setting.`,
	Flags: []string{"nats-url", "sink", "concurrency", "chunker", "chunker-options", "metrics-addr", "log-level",
		"local", "out", "workers", "healthcheck"},
}

// run is the whole command, testable: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	c, err := loadConfig(lookup)
	if err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lf localFlags
	fs.StringVar(&lf.dir, "local", "", "local mode: chunk every document under this folder through an embedded server")
	fs.StringVar(&lf.out, "out", "", "local mode: output file, .jsonl, .yaml or .yml")
	fs.IntVar(&lf.workers, "workers", 0, "local mode: documents processed in parallel (default: -concurrency)")
	fs.StringVar(&lf.store, "store", "", "local mode: JetStream store folder, kept (default: memory, or for an input over 256 MiB a temporary folder, removed)")
	fs.StringVar(&lf.ext, "ext", "", "local mode: comma-separated extensions picked in the folder (default: the chunker's)")
	fs.BoolVar(&lf.noProgress, "no-progress", false, "local mode: no progress bar")
	fs.StringVar(&lf.cpuProfile, "cpuprofile", "", "local mode: write a CPU profile to this file")
	healthcheck := fs.Bool("healthcheck", false, "probe /healthz and /readyz of the worker at -metrics-addr; exit 0 when both answer 200")
	cf := bindFlags(fs, &c)
	envflag.SetHelp(fs, workerHelp)
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "worker: unexpected arguments %q\n", fs.Args())
		return 2
	}
	mode := modeOf(*healthcheck, lf.dir)
	if err := checkMode(fs, mode, &c); err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}
	_, logLevelSet := lookup("CHUNKSTREAM_LOG_LEVEL")
	fs.Visit(func(f *flag.Flag) { logLevelSet = logLevelSet || f.Name == "log-level" })
	if err := c.Log.Validate(); err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}

	if mode == modeHealthcheck {
		if err := healthcheckAddr(c.MetricsAddr); err != nil {
			fmt.Fprintf(stderr, "worker: healthcheck: %v\n", err)
			return 1
		}
		return 0
	}
	entry, err := applyChunker(&c, cf)
	if err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}
	if mode == modeLocal {
		lf.chunker, lf.options = entry, c.ChunkerOptions
		var log *slog.Logger
		if logLevelSet {
			log = c.Log.Logger(stderr)
		}
		code, err := runLocal(ctx, &c, &lf, log, lookup, stdout, stderr)
		if err != nil {
			envflag.Report(stderr, "worker", err)
			if errors.Is(err, envflag.ErrUsage) {
				return 2
			}
			return 1
		}
		return code
	}
	if err := c.validate(fs); err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}
	log := c.Log.Logger(stderr)
	tp, stopTracing, err := otelenv.Provider(ctx, "chunkstream-worker", lookup)
	if err != nil {
		envflag.Report(stderr, "worker", err)
		return 2
	}
	defer otelenv.Stop(stopTracing, log)
	if err := serve(ctx, &c, log, tp); err != nil {
		log.Error("worker failed", "err", err)
		return 1
	}
	return 0
}
