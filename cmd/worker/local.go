package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/local"
	"github.com/chunkstream/chunkstream/cmd/internal/otelenv"
	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
)

// localFlags are the flags of local mode.
type localFlags struct {
	dir, out, store, ext string
	cpuProfile           string
	workers              int
	noProgress           bool
	// chunker and options are the chunker of every request and its
	// options (-chunker, -chunker-options and the chunker flags, or
	// their variables).
	chunker registry.Entry
	options map[string]any
}

// runLocal runs local mode (package local) and returns the exit status: 1
// when a document was dead-lettered or could not be sent. The OTEL_*
// variables of lookup trace it as they trace the service.
func runLocal(ctx context.Context, c *config, lf *localFlags, log *slog.Logger, lookup func(string) (string, bool), _, stderr io.Writer) (int, error) {
	if lf.out == "" {
		return 2, fmt.Errorf("%w: -local needs -out FILE", envflag.ErrUsage)
	}
	if _, err := chunking.FormatOf(lf.out); err != nil {
		return 2, fmt.Errorf("%w: -out: %v", envflag.ErrUsage, err)
	}
	// The options set, checked and in the wire's types: the chunker's
	// defaults apply to the others.
	opts, err := lf.chunker.Normalize(lf.options)
	if err != nil {
		return 2, fmt.Errorf("%w: %v", envflag.ErrUsage, err)
	}
	cfg := c.Config
	if lf.workers > 0 {
		cfg.Concurrency = lf.workers
	}
	if err := envflag.Explain(cfg.Validate(), &cfg, nil); err != nil {
		return 2, fmt.Errorf("%w: %v", envflag.ErrUsage, err)
	}
	// Every document's request carries the flags: a size the worker
	// refuses would dead-letter them all, so it is refused here.
	rs, err := registry.Default().Resolver(registry.Defaults{})
	if err != nil {
		return 1, err
	}
	choice, err := rs.Choose(registry.Request{Chunker: lf.chunker.Name, Options: opts})
	if err == nil {
		err = worker.CheckChunkSize(cfg, choice)
	}
	if err != nil {
		return 2, fmt.Errorf("%w: %v", envflag.ErrUsage, err)
	}
	if lf.cpuProfile != "" {
		f, err := os.Create(lf.cpuProfile)
		if err != nil {
			return 1, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 1, err
		}
		defer pprof.StopCPUProfile()
	}
	tp, stopTracing, err := otelenv.Provider(ctx, "chunkstream-worker", lookup)
	if err != nil {
		return 2, fmt.Errorf("%w: %v", envflag.ErrUsage, err)
	}
	defer otelenv.Stop(stopTracing, c.Log.Logger(stderr))
	o := local.Options{Dir: lf.dir, Out: lf.out, Store: lf.store, Worker: cfg, Chunkers: registry.Default(),
		Chunker: lf.chunker, Options: opts, Logger: log, TracerProvider: tp}
	if o.Exts, err = chunkflags.Extensions(lf.chunker, lf.ext, opts); err != nil {
		return 2, err
	}
	if !lf.noProgress && tty.Is(stderr) {
		bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("chunking"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("docs"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		o.OnProgress = func(done, total int) {
			if total > 0 && bar.GetMax() != total {
				bar.ChangeMax(total)
			}
			_ = bar.Set(done)
		}
		defer bar.Finish()
	}
	cpu0 := processCPU()
	sum, err := local.Run(ctx, o)
	cpu := processCPU() - cpu0
	if err != nil {
		return 1, err
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "worker: warning: %s\n", w)
	}
	for _, f := range sum.Failures {
		fmt.Fprintf(stderr, "worker: failed: %s\n", strings.TrimPrefix(f.Err.Error(), "producer: ")) // it names the document
	}
	secs := sum.Elapsed.Seconds()
	fmt.Fprintf(stderr, "worker -local: %d documents, %d chunks, %.2f MB in %.3f s (%.1f docs/s, %.1f chunks/s, %.2f MB/s, %.3f ms CPU/doc), %d dead letters\n",
		sum.Documents, sum.Chunks, float64(sum.Bytes)/1e6, secs, float64(sum.Documents)/secs, float64(sum.Chunks)/secs,
		float64(sum.Bytes)/1e6/secs, cpu.Seconds()*1e3/float64(max(sum.Documents, 1)), len(sum.DeadLetters))
	for _, r := range sum.DeadLetters {
		reason := ""
		if r.Err != nil {
			reason = messages.OneLine(r.Err.Error(), 300)
		}
		fmt.Fprintf(stderr, "  dead letter: %s (%s, %s): %s\n", r.DocID, r.Outcome, r.Cause, reason)
	}
	if len(sum.DeadLetters) > 0 || len(sum.Failures) > 0 {
		return 1, nil
	}
	return 0, nil
}
