// Command producer sends documents to the INGEST stream: backfills of
// folders (millions of files), event streams as JSON lines, and mailboxes
// sharded by thread. The work is done by package producer.
//
//	producer [flags] PATH...          folders and files
//	producer -chunker email [flags] MAILBOX...   one request per thread
//	producer -stdin [flags] < requests.jsonl
//	producer dlq list|replay|purge [flags]       dead letters
//	producer status [-json] [-id ID | -failed] [-tenant T]   documents by state, backlog
//
// docs/cli.md describes its settings, modes and exit statuses. A first
// argument naming a subcommand (the table of commands.go) runs it instead, so a
// folder named like one is sent as ./dlq. A subcommand's settings are
// variables and flags; its selections (the dlq filters, -json, -dry-run,
// -yes, -all, -id, -failed) are flags only, since they belong to one
// command line; so are -all and -yes of -delete-missing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/cmd/internal/otelenv"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
)

func main() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		// The live heap is small (the requests in flight) and the garbage
		// large (every document read and encoded): collect less often.
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// maxListedFailures bounds the failures printed one per line.
const maxListedFailures = 100

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	code, err := runErr(ctx, args, stdin, stdout, stderr, lookup)
	if err != nil {
		envflag.Report(stderr, "producer", err)
	}
	return code
}

// runErr runs the subcommand args name, or else sends documents.
func runErr(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	if v, ok := commands(stdin, stdout, stderr, lookup).Subcommand(args); ok {
		return v.Run(ctx, args[1:])
	}
	return send(ctx, args, stdin, stdout, stderr, lookup)
}

// send sends the documents of the paths, mailboxes or JSON lines args
// name.
func send(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	var c config
	if err := loadEnv(&c, lookup); err != nil {
		return 2, err
	}
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, &c)
	chunkers := chunkflags.Register(fs, registry.Default().Entries(), c.Chunker)
	chunkers.SetUnnamed("markdown") // unnamed, requests name no chunker; the flags and -ext are markdown's
	envflag.SetHelp(fs, envflag.Help{
		Usage: usageLines(),
		Summary: `Sends what changed since the last run (same content and settings are skipped); -delete-missing
also deletes, under -id-prefix, the documents whose files are gone. Settings are flags and
CHUNKSTREAM_PRODUCER_* variables (the flag wins); "producer COMMAND -h" helps with a command;
docs/cli.md describes every flag.`,
		Details: `Sends what changed since the last run: a document whose content and settings are those of its
done record is skipped. -delete-missing also deletes, under -id-prefix (or, with -all, any id),
the documents whose files are gone, each on its record's subject; it says how many first, and
more than 10% of the documents under the scope needs -yes. Settings are flags and
CHUNKSTREAM_PRODUCER_* variables (the flag wins); the NATS and topology variables are the
workers'. Exit status: 0 when every document was accepted or skipped, 1 when any failed, 2 on a
usage error or a refused -delete-missing.`,
		Flags: []string{"nats-url", "subject", "id-prefix", "ext", "chunker", "options", "dry-run", "force",
			"delete-missing", "yes", "wait", "stdin"}, // -all: in -delete-missing's help and -help-all
	})
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	if err := c.validate(fs); err != nil {
		return 2, err
	}
	chunkerSet := c.Chunker != ""
	fs.Visit(func(f *flag.Flag) { chunkerSet = chunkerSet || f.Name == "chunker" })
	entry, raw, err := chunkers.Chunker()
	if err != nil {
		return 2, err
	}
	opts := map[string]any{}
	if c.Options != "" {
		_ = json.Unmarshal([]byte(c.Options), &opts) // validated
	}
	maps.Copy(opts, raw)
	var options map[string]any
	if len(opts) > 0 {
		if options, err = entry.Normalize(opts); err != nil {
			return 2, err
		}
		chunkerSet = true // options belong to one chunker: name it
	}
	paths := fs.Args()
	if c.Dir != "" {
		paths = append([]string{c.Dir}, paths...)
	}
	if c.Stdin == (len(paths) > 0) {
		fs.Usage()
		return 2, fmt.Errorf("%w: give PATH arguments (or -dir), or -stdin", envflag.ErrUsage)
	}
	// A chunker that splits its inputs (email: a mailbox into threads)
	// named for paths: one request per part.
	mailbox := chunkerSet && entry.Split != nil && !c.Stdin
	optionFlags := map[string]bool{}
	for _, e := range registry.Default().Entries() {
		for _, o := range e.Options() {
			optionFlags[o.Flag] = true
		}
	}
	if err := checkModes(given(fs, lookup), &c, optionFlags, mailbox); err != nil {
		return 2, err
	}
	for _, path := range paths {
		if mailbox && producer.CheckInputID(c.IDPrefix, path) != nil {
			return 2, fmt.Errorf("%w: mailbox %s: its id %q holds '#', which ends a mailbox's name in its threads' ids: rename the mailbox, or give an -id-prefix without '#'",
				envflag.ErrUsage, path, producer.InputID(c.IDPrefix, path))
		}
	}
	exts, err := chunkflags.Extensions(entry, c.Ext, options) // -ext with a mailbox: a usage error
	if err != nil {
		return 2, err
	}

	log := c.Log.Logger(stderr)
	nc, err := natsconn.Connect(ctx, c.NATS, "chunkstream-producer", log)
	if err != nil {
		return 1, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(c.AckTimeout),
		jetstream.WithPublishAsyncMaxPending(2*c.MaxPending))
	if err != nil {
		return 1, err
	}
	if !c.DryRun {
		// Fail before sending anything when nothing stores the subject;
		// wait while workers starting too may still be creating INGEST.
		name, err := streamForSubject(ctx, js, &c, stderr)
		if err != nil {
			return 1, err
		}
		warnDuplicateWindow(ctx, js, name, &c, log)
	}
	ct := messages.ContentTypeMsgpack
	if c.JSON {
		ct = messages.ContentTypeJSON
	}
	tp, stopTracing, err := otelenv.Provider(ctx, "chunkstream-producer", lookup)
	if err != nil {
		return 2, err
	}
	defer otelenv.Stop(stopTracing, log)
	p := producer.New(nc, js, producer.Options{
		Subject: c.Subject, ContentType: ct, Topology: c.Config, MaxPending: c.MaxPending,
		MaxDocBytes: c.MaxDocBytes, TracerProvider: tp,
	})
	retry := producer.RetryOptions{RetryFor: c.RetryFor, Wait: c.RetryWait, AckTimeout: c.AckTimeout}
	if c.RetryFor == 0 {
		retry.RetryFor = -1
	}
	bar := newProgress(stderr, c.Progress)
	dry := func(pl producer.Planned) {
		where := ""
		if pl.Object {
			where = "\tobject"
		}
		fmt.Fprintf(stdout, "%s\t%s\t%d%s\n", pl.Op, pl.ID, pl.Bytes, where)
	}
	var sum producer.Summary
	var sent []producer.Awaited
	var onSent func(producer.Sent)
	if c.Wait {
		onSent = func(s producer.Sent) { sent = append(sent, s.Awaited()) }
	}
	if c.Stdin {
		sum, err = p.SendLines(ctx, stdin, producer.StreamOptions{
			Rate: c.Rate, MaxPendingBytes: c.MaxPendingBytes, Retry: retry, DryRun: c.DryRun, OnDryRun: dry, OnProgress: bar.update,
			OnSent:    onSent,
			OnBadLine: func(f producer.Failure) { bar.printf("producer: bad request: %s\n", errText(f.Err)) },
			Logger:    log,
		})
	} else {
		tmpl := producer.Document{Format: c.Format, Options: options, Source: c.Source, Collection: c.Collection, Tenant: c.Tenant}
		if chunkerSet {
			tmpl.Chunker = entry.Name
		}
		var split producer.Splitter
		if mailbox {
			split = entry.Split
		}
		sum, err = p.Backfill(ctx, producer.BackfillOptions{
			Paths: paths, IDPrefix: c.IDPrefix, Exts: exts, Template: tmpl, Split: split,
			Force: c.Force, SendInvalidText: c.SendInvalidUTF8, DeleteMissing: c.DeleteMissing, ResendStale: c.ResendStale, DryRun: c.DryRun, Bulk: c.Bulk,
			DeleteAll: c.All, ConfirmDeletes: c.Yes, OnDeletes: func(d producer.DeletePlan) { printDeletePlan(stderr, d, c.DryRun) },
			Rate: c.Rate, MaxPendingBytes: c.MaxPendingBytes, Retry: retry, Readers: c.Readers,
			OnProgress: bar.update, OnDryRun: dry, OnSent: onSent, Logger: log,
		})
	}
	bar.finish()
	if refused := new(producer.DeleteRefusedError); errors.As(err, &refused) {
		return 2, deleteRefusal(refused)
	}
	printSummary(stderr, &sum, c.DryRun, c.Stdin, c.ResendStale)
	code := 0
	if err == nil && c.Wait {
		code, err = waitProcessed(ctx, js, &c, sent, stderr)
	}
	if drainErr := nc.Drain(); drainErr != nil {
		log.Warn("drain", "err", drainErr)
	}
	if err != nil || !sum.OK() {
		code = 1
	}
	return code, err
}

// printSummary writes the final summary and the failures.
func printSummary(w io.Writer, s *producer.Summary, dryRun, stdin, resendStale bool) {
	for i, f := range s.Failures {
		if i == maxListedFailures {
			fmt.Fprintf(w, "producer: … and %d more failures\n", len(s.Failures)-i)
			break
		}
		if !stdin || f.Line == 0 { // stdin lines were reported as found
			hint := ""
			if errors.Is(f.Err, producer.ErrTextNotSent) {
				hint = " (fix the file, or send it as it is with -send-invalid-utf8)"
			}
			fmt.Fprintf(w, "producer: failed: %s%s\n", errText(f.Err), hint)
		}
	}
	secs := max(s.Elapsed.Seconds(), 1e-9)
	verb := "sent"
	if dryRun {
		verb = "would send"
	}
	skipped := "unchanged"
	if resendStale {
		skipped = "not stale"
	}
	fmt.Fprintf(w, "producer: %d documents: %d %s (%d deletes, %d duplicates, %d stale), %d %s skipped, %d failed (%d given up); %d retries, %d outages (%s unavailable); %.2f MB in %s (%.0f docs/s, %.2f MB/s)\n",
		s.Total, s.Sent, verb, s.Deleted, s.Duplicates, s.Stale, s.Skipped, skipped, s.Failed, s.GaveUp, s.Retries, s.Outages, s.Unavailable.Round(time.Millisecond),
		float64(s.Bytes)/1e6, s.Elapsed.Round(time.Millisecond), float64(s.Done)/secs, float64(s.ReadBytes)/1e6/secs)
	switch {
	case s.Total == 0:
		fmt.Fprintln(w, "producer: no document found: check the paths, -ext and -id-prefix")
	case resendStale && s.Sent == 0 && s.Failed == 0:
		fmt.Fprintln(w, "producer: -resend-stale: no document is stale: each was processed with the settings it would get now")
	}
}

// printDeletePlan says what -delete-missing deletes, before anything is
// sent; a dry run also says what would refuse a real run.
func printDeletePlan(w io.Writer, d producer.DeletePlan, dryRun bool) {
	verb := "deletes"
	if dryRun {
		verb = "deletes would be sent"
	}
	fmt.Fprintf(w, "producer: -delete-missing: %d %s: %s\n", len(d.IDs), verb, d.Summary())
	switch {
	case !dryRun:
	case d.Unscoped:
		fmt.Fprintln(w, "producer: -delete-missing: a run without -dry-run is refused: give -id-prefix, or -all")
	case d.OverThreshold:
		fmt.Fprintf(w, "producer: -delete-missing: a run without -dry-run needs -yes: more than %d%% of the documents under the scope\n", producer.ConfirmDeletesAbove)
	}
}

// deleteRefusal is a refused -delete-missing in the command's words.
func deleteRefusal(e *producer.DeleteRefusedError) error {
	d := e.Plan
	switch {
	case errors.Is(e, producer.ErrDeleteUnscoped):
		return fmt.Errorf("%w: -delete-missing without a scope would delete %s; nothing was sent: give -id-prefix PREFIX (the prefix the documents were sent with) to delete only the gone documents under it, or -all to delete across every id; -dry-run lists them",
			envflag.ErrUsage, d.Summary())
	case errors.Is(e, producer.ErrDeletePrefix):
		return fmt.Errorf("%w: -delete-missing under -id-prefix %q would delete %s; nothing was sent: a prefix not ending in \"/\" also holds other folders' ids (%q, %q): end it with \"/\"",
			envflag.ErrUsage, d.Scopes[0], d.Summary(), d.Scopes[0]+"2/a.md", d.Scopes[0]+"-old/a.md")
	case errors.Is(e, producer.ErrDeleteUnconfirmed):
		return fmt.Errorf("%w: -delete-missing would delete %s, more than %d%%; nothing was sent: list them with -dry-run, then run again with -yes to delete them",
			envflag.ErrUsage, d.Summary(), producer.ConfirmDeletesAbove)
	}
	return fmt.Errorf("-delete-missing: the record of %q names subject %s, which no stream stores; nothing was sent", e.ID, e.Subject)
}

// warnDuplicateWindow warns when a request could be re-sent after the
// stream's duplicate window: its first publish up to -ack-timeout before
// the server was found silent, its retries up to -retry-for after.
func warnDuplicateWindow(ctx context.Context, js jetstream.JetStream, name string, c *config, log *slog.Logger) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return
	}
	if w := st.CachedInfo().Config.Duplicates; w > 0 && c.RetryFor+c.AckTimeout >= w {
		log.Warn("-retry-for plus -ack-timeout reach the stream's duplicate window: a request re-sent after a long outage may be stored twice",
			"stream", name, "retry_for", c.RetryFor.String(), "ack_timeout", c.AckTimeout.String(), "duplicate_window", w.String())
	}
}

// within is err in the context of what the command did ("status: …"),
// unless it is an error of package producer, which says its own context
// after its own prefix ("producer: status: consumer chunkers: …"): the
// prefix and the context are then said once.
func within(what string, err error) error {
	if strings.HasPrefix(err.Error(), "producer: ") {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// errText is err without the producer package's prefix.
func errText(err error) string { return strings.TrimPrefix(err.Error(), "producer: ") }

// streamForSubject finds the stream that stores the producer's subject,
// waiting up to the set-up timeout, and saying so every 10 s.
func streamForSubject(ctx context.Context, js jetstream.JetStream, c *config, stderr io.Writer) (string, error) {
	if name, err := js.StreamNameBySubject(ctx, c.Subject); err == nil {
		return name, nil
	}
	// The notice is written to stderr, which the caller writes to next:
	// wait for the notifier to end before returning.
	done, ended := make(chan struct{}), make(chan struct{})
	defer func() { close(done); <-ended }()
	go func() {
		defer close(ended)
		deadline := time.Now().Add(c.SetupTimeout)
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			fmt.Fprintf(stderr, "producer: no stream stores %s yet (the first worker to start creates %s): waiting %s more (CHUNKSTREAM_SETUP_TIMEOUT)\n",
				c.Subject, c.IngestStream, time.Until(deadline).Round(time.Second))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return topology.StreamForSubject(ctx, js, c.Config, c.Subject)
}
