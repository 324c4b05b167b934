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

	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/otelenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// command is one run of the worker: its settings, as the flags and the
// environment set them, and where it writes.
type command struct {
	c              config
	lf             localFlags
	cf             *chunkflags.Set
	fs             *flag.FlagSet
	logLevelSet    bool
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
}

// forms are the worker's forms, which its synopsis and its dispatch
// read: its flags choose one (modeOf).
func (w *command) forms() envflag.Verbs {
	return envflag.Verbs{
		{Name: modeService, Mode: true, Usage: "[setting flags]", Summary: "service mode: process ingest requests until SIGTERM", Run: w.service},
		{Name: modeLocal, Mode: true, Usage: "-local DIR -out FILE [-workers N] [flags]", Summary: "local mode: the whole pipeline in one process", Run: w.local},
		{Name: modeHealthcheck, Mode: true, Usage: "-healthcheck [-metrics-addr ADDR]", Summary: "probe a running worker", Run: w.healthcheck},
	}
}

// workerHelp is what -h and -help-all say after the synopsis.
var workerHelp = envflag.Help{
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
	code, err := runErr(ctx, args, stdout, stderr, lookup)
	if err != nil {
		envflag.Report(stderr, "worker", err)
	}
	return code
}

// runErr parses the settings, picks the form they choose and runs it.
func runErr(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	w := &command{stdout: stdout, stderr: stderr, lookup: lookup}
	var err error
	if w.c, err = loadConfig(lookup); err != nil {
		return 2, err
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lf := &w.lf
	fs.StringVar(&lf.dir, "local", "", "local mode: chunk every document under this folder through an embedded server")
	fs.StringVar(&lf.out, "out", "", "local mode: output file, .jsonl, .yaml or .yml")
	fs.IntVar(&lf.workers, "workers", 0, "local mode: documents processed in parallel (default: -concurrency)")
	fs.StringVar(&lf.store, "store", "", "local mode: JetStream store folder, kept (default: memory)")
	fs.StringVar(&lf.ext, "ext", "", "local mode: comma-separated extensions picked in the folder (default: the chunker's)")
	fs.BoolVar(&lf.noProgress, "no-progress", false, "local mode: no progress bar")
	fs.StringVar(&lf.cpuProfile, "cpuprofile", "", "local mode: write a CPU profile to this file")
	healthcheck := fs.Bool("healthcheck", false, "probe /healthz and /readyz of the worker at -metrics-addr; exit 0 when both answer 200")
	w.cf = bindFlags(fs, &w.c)
	forms := w.forms()
	help := workerHelp
	help.Usage = forms.Synopsis("worker")
	envflag.SetHelp(fs, help)
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	mode := modeOf(*healthcheck, lf.dir)
	if err := checkMode(fs, mode, &w.c); err != nil {
		return 2, err
	}
	_, w.logLevelSet = lookup("CHUNKSTREAM_LOG_LEVEL")
	fs.Visit(func(f *flag.Flag) { w.logLevelSet = w.logLevelSet || f.Name == "log-level" })
	if err := w.c.Log.Validate(); err != nil {
		return 2, err
	}
	w.fs = fs
	form, _ := forms.Mode(mode)
	return form.Run(ctx, nil)
}

// healthcheck probes the worker at -metrics-addr.
func (w *command) healthcheck(context.Context, []string) (int, error) {
	if err := healthcheckAddr(w.c.MetricsAddr); err != nil {
		return 1, fmt.Errorf("healthcheck: %w", err)
	}
	return 0, nil
}

// local runs the whole pipeline in one process.
func (w *command) local(ctx context.Context, _ []string) (int, error) {
	entry, err := applyChunker(&w.c, w.cf)
	if err != nil {
		return 2, err
	}
	w.lf.chunker, w.lf.options = entry, w.c.ChunkerOptions
	var log *slog.Logger
	if w.logLevelSet {
		log = w.c.Log.Logger(w.stderr)
	}
	code, err := runLocal(ctx, &w.c, &w.lf, log, w.lookup, w.stdout, w.stderr)
	if errors.Is(err, envflag.ErrUsage) {
		return 2, err
	}
	if err != nil {
		return 1, err
	}
	return code, nil
}

// service processes ingest requests until ctx ends.
func (w *command) service(ctx context.Context, _ []string) (int, error) {
	if _, err := applyChunker(&w.c, w.cf); err != nil {
		return 2, err
	}
	if err := w.c.validate(w.fs); err != nil {
		return 2, err
	}
	log := w.c.Log.Logger(w.stderr)
	tp, stopTracing, err := otelenv.Provider(ctx, "chunkstream-worker", w.lookup)
	if err != nil {
		return 2, err
	}
	defer otelenv.Stop(stopTracing, log)
	if err := serve(ctx, &w.c, log, tp); err != nil {
		log.Error("worker failed", "err", err)
		return 1, nil
	}
	return 0, nil
}
