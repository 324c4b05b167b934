package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/cmd/internal/otelenv"
	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/fault"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
)

// dlqConfig is the settings of `producer dlq` (of the topology, it acts
// on the dead letter stream's name only).
type dlqConfig struct {
	NATS natsconn.Config
	topology.Config
	Log tty.Log
	// AckTimeout bounds each publish and delete.
	AckTimeout time.Duration `env:"CHUNKSTREAM_PRODUCER_ACK_TIMEOUT" envDefault:"10s"`
}

// dlqOps are the operations of `producer dlq`, with their synopses.
var dlqOps = map[string]string{
	"list":   "producer dlq list [filters] [-json]",
	"replay": "producer dlq replay [filters] [-dry-run]",
	"purge":  "producer dlq purge {filters | -all} [-dry-run | -yes]",
}

// dlqArgs are the flags of one operation besides the settings.
type dlqArgs struct {
	filter producer.DLQFilter
	seqs   string
	json   bool
	dryRun bool
	yes    bool
	all    bool
}

// bindDLQFlags defines the flags of `producer dlq OP`.
func bindDLQFlags(fs *flag.FlagSet, op string, c *dlqConfig, a *dlqArgs) {
	natsconn.BindFlags(fs, &c.NATS)
	fs.Var(fs.Lookup("nats-url").Value, "s", "same as -nats-url (env NATS_URL)")
	envflag.Bind(fs, &c.Config, func(v string) bool { return v == "CHUNKSTREAM_DLQ_STREAM" })
	envflag.Bind(fs, &c.Log, nil)
	fs.DurationVar(&c.AckTimeout, "ack-timeout", c.AckTimeout, "wait for one PubAck or delete at most (env CHUNKSTREAM_PRODUCER_ACK_TIMEOUT)")
	fs.Func("kind", "only dead letters of this kind: permanent or exhausted",
		func(v string) error { a.filter.Kind = messages.Kind(v); return nil })
	fs.Func("cause", "only dead letters of this cause, e.g. unknown_option (header Chunkstream-Error-Cause)",
		func(v string) error { a.filter.Cause = fault.Cause(v); return nil })
	fs.StringVar(&a.filter.Subject, "subject", "", "only requests first published on this subject; wildcards * and > allowed")
	fs.StringVar(&a.filter.IDPrefix, "id-prefix", "", "only requests whose document id starts with this")
	fs.StringVar(&a.filter.Tenant, "tenant", "", "only this tenant's requests")
	fs.StringVar(&a.seqs, "seq", "", "only these dead letters: comma-separated DLQ sequences")
	switch op {
	case "list":
		fs.BoolVar(&a.json, "json", false, "one JSON object per dead letter instead of a tab-separated line")
	case "replay":
		fs.BoolVar(&a.dryRun, "dry-run", false, "check and print what would be replayed; publish and delete nothing")
	case "purge":
		fs.BoolVar(&a.dryRun, "dry-run", false, "list the dead letters purge would delete; delete nothing")
		fs.BoolVar(&a.yes, "yes", false, "confirm: delete the selected dead letters (every purge needs it)")
		fs.BoolVar(&a.all, "all", false, "select every dead letter: the deliberate spelling of no filter")
	}
}

// parseSeqs reads -seq's comma-separated sequences.
func parseSeqs(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range envflag.SplitList(s) {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%w: -seq: %q is not a stream sequence (a positive integer)", envflag.ErrUsage, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// dlqSummary says what each operation does, for -h.
var dlqSummary = map[string]string{
	"list":   "One line per dead letter, with where its version stands; nothing is consumed.",
	"replay": "Publishes each request again as the version it was, then deletes its dead letter.",
	"purge":  "Deletes the selected dead letters, saying how many first; it needs a filter (or -all) and -yes.",
}

// runDLQ is `producer dlq OP [flags]`.
func runDLQ(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	usage := func() {
		fmt.Fprintln(stderr, "usage: "+dlqOps["list"]+"\n       "+dlqOps["replay"]+"\n       "+dlqOps["purge"]+
			"\n\nfilters: -kind K -cause C -subject S -tenant T -id-prefix P -seq N,…; \"producer dlq OP -h\" helps with one operation")
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		usage()
		return 0, nil
	}
	if len(args) == 0 || dlqOps[args[0]] == "" {
		usage()
		if len(args) == 0 {
			return 2, fmt.Errorf("%w: dlq: say list, replay or purge", envflag.ErrUsage)
		}
		return 2, fmt.Errorf("%w: dlq: unknown operation %q: say list, replay or purge", envflag.ErrUsage, args[0])
	}
	op := args[0]
	var c dlqConfig
	if err := loadEnv(&c, lookup); err != nil {
		return 2, within("dlq", err)
	}
	var a dlqArgs
	fs := flag.NewFlagSet("producer dlq "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindDLQFlags(fs, op, &c, &a)
	flags := []string{"kind", "cause", "subject", "tenant", "id-prefix", "seq"}
	switch op {
	case "list":
		flags = append(flags, "json")
	case "replay":
		flags = append(flags, "dry-run")
	case "purge":
		flags = append(flags, "all", "dry-run", "yes")
	}
	envflag.SetHelp(fs, envflag.Help{Usage: "usage: " + dlqOps[op], Summary: dlqSummary[op], Flags: append(flags, "nats-url")})
	if err := envflag.Parse(fs, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("%w: dlq %s takes no arguments, got %q", envflag.ErrUsage, op, fs.Args())
	}
	if err := errors.Join(c.NATS.Validate(), c.Log.Validate(), envflag.Explain(c.Config.Validate(), &c.Config, fs)); err != nil {
		return 2, within("dlq", err)
	}
	if c.AckTimeout <= 0 {
		return 2, fmt.Errorf("dlq: -ack-timeout (CHUNKSTREAM_PRODUCER_ACK_TIMEOUT) must be positive, got %v", c.AckTimeout)
	}
	switch a.filter.Kind {
	case "", messages.KindPermanent, messages.KindExhausted:
	default:
		return 2, fmt.Errorf("%w: dlq: -kind is %s or %s, got %q", envflag.ErrUsage, messages.KindPermanent, messages.KindExhausted, a.filter.Kind)
	}
	if a.filter.Tenant != "" && messages.ValidateTenant(a.filter.Tenant) != nil {
		return 2, fmt.Errorf("%w: dlq: -tenant %q: want 1 to %d ASCII letters, digits, '-' or '_'", envflag.ErrUsage, a.filter.Tenant, messages.MaxTenantLen)
	}
	seqs, err := parseSeqs(a.seqs)
	if err != nil {
		return 2, within("dlq", err)
	}
	a.filter.Seqs = seqs

	log := c.Log.Logger(stderr)
	nc, js, err := natsconn.ConnectJetStream(ctx, c.NATS, "chunkstream-producer-dlq", log)
	if err != nil {
		return 1, within("dlq", err)
	}
	defer nc.Close()
	tp, stopTracing, err := otelenv.Provider(ctx, "chunkstream-producer", lookup)
	if err != nil {
		return 2, within("dlq", err)
	}
	defer otelenv.Stop(stopTracing, log)
	d := producer.NewDLQ(js, producer.DLQOptions{Topology: c.Config, AckTimeout: c.AckTimeout, TracerProvider: tp})
	var code int
	switch op {
	case "list":
		code, err = dlqList(ctx, d, a, stdout, stderr)
	case "replay":
		code, err = dlqReplay(ctx, d, a, stdout, stderr)
	case "purge":
		code, err = dlqPurge(ctx, d, a, stdout, stderr)
	}
	if err != nil {
		err = within("dlq "+op, err)
	}
	return code, err
}

// cell returns s for a tab-separated line: "-" when empty, quoted (Go
// syntax) when it holds a control character.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

// entryLine is a dead letter as list prints it.
func entryLine(e producer.DeadLetterEntry) string {
	reason := e.Reason
	if e.Problem != "" {
		reason = "not a dead letter: " + e.Problem
	}
	return strings.Join([]string{
		strconv.FormatUint(e.Seq, 10), e.Time.Format(time.RFC3339), cell(e.DocID), cell(e.Subject), cell(string(e.Kind)),
		cell(string(e.Cause)), cell(messages.OneLine(reason, 4096)), strconv.FormatUint(e.Deliveries, 10),
	}, "\t")
}

// reportNotFound prints the sequences not found and returns their status.
func reportNotFound(stderr io.Writer, notFound []uint64) int {
	for _, seq := range notFound {
		fmt.Fprintf(stderr, "producer: dlq: no dead letter %d\n", seq)
	}
	if len(notFound) > 0 {
		return 1
	}
	return 0
}

// standingCell describes where a dead letter's version stands.
func standingCell(e producer.DeadLetterEntry) string {
	if e.Standing == producer.StandingSuperseded {
		return fmt.Sprintf("superseded by %d", e.RecordSeq)
	}
	return string(e.Standing)
}

func dlqList(ctx context.Context, d *producer.DLQ, a dlqArgs, stdout, stderr io.Writer) (int, error) {
	enc := json.NewEncoder(stdout)
	counts := map[producer.Standing]int{}
	n := 0
	notFound, err := d.List(ctx, a.filter, func(e producer.DeadLetterEntry) error {
		n++
		if err := d.Standing(ctx, &e); err != nil {
			return err
		}
		counts[e.Standing]++
		if a.json {
			return enc.Encode(e)
		}
		_, err := fmt.Fprintln(stdout, entryLine(e)+"\t"+standingCell(e)+"\t"+cell(e.Tenant))
		return err
	})
	if err != nil {
		return 1, err
	}
	line := fmt.Sprintf("producer: dlq list: %d dead letters (%s)", n, a.filter)
	if n > 0 {
		var parts []string
		for _, st := range []producer.Standing{producer.StandingCurrent, producer.StandingElsewhere, producer.StandingSuperseded, producer.StandingWritten, producer.StandingShared, producer.StandingUnknown} {
			if counts[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			}
		}
		line += ": " + strings.Join(parts, ", ")
	}
	fmt.Fprintln(stderr, line)
	return reportNotFound(stderr, notFound), nil
}

// keepText is a KeepReason in words.
func keepText(k producer.KeepReason) string { return strings.ReplaceAll(string(k), "_", " ") }

// replayLine is one dead letter as replay prints it.
func replayLine(r producer.Replayed) string {
	e := r.Entry
	var what, detail string
	switch {
	case r.Action == producer.ActionProcess && r.DryRun:
		what, detail = "would process", fmt.Sprintf("%s: version %d", cell(e.Subject), e.IngestSeq)
	case r.Action == producer.ActionProcess:
		what, detail = "replayed", fmt.Sprintf("%s: version %d, INGEST message %d", cell(e.Subject), e.IngestSeq, r.StreamSeq)
	case r.Action == producer.ActionRemove:
		what = "superseded"
		detail = fmt.Sprintf("by version %d", e.RecordSeq)
		if e.Standing == producer.StandingWritten {
			what, detail = "written", fmt.Sprintf("version %d was written after all", e.IngestSeq)
		}
		if r.DryRun {
			detail += ": would delete the dead letter and send nothing"
		} else {
			detail += ": dead letter deleted, nothing sent"
		}
	default:
		what, detail = "kept", keepText(r.Why)+": "+messages.OneLine(r.Err.Error(), 4096)
	}
	if r.Action != producer.ActionKeep && r.Why != "" {
		detail += "; " + keepText(r.Why) + ": " + messages.OneLine(r.Err.Error(), 4096)
	}
	return strings.Join([]string{what, strconv.FormatUint(e.Seq, 10), cell(e.DocID), detail}, "\t")
}

func dlqReplay(ctx context.Context, d *producer.DLQ, a dlqArgs, stdout, stderr io.Writer) (int, error) {
	sum, err := d.Replay(ctx, a.filter, producer.ReplayOptions{DryRun: a.dryRun, OnResult: func(r producer.Replayed) {
		fmt.Fprintln(stdout, replayLine(r))
	}})
	if err != nil {
		return 1, err
	}
	would := ""
	if a.dryRun {
		would = "would be "
	}
	line := fmt.Sprintf("producer: dlq replay: %d %sreplayed, %d %sremoved as superseded or written, %d %skept",
		sum.Processed, would, sum.Removed, would, sum.KeptTotal(), would)
	if len(sum.Kept) > 0 {
		var whys []string
		for why, n := range sum.Kept {
			whys = append(whys, fmt.Sprintf("%d %s", n, keepText(why)))
		}
		slices.Sort(whys)
		line += " (" + strings.Join(whys, ", ") + ")"
	}
	fmt.Fprintln(stderr, line)
	if sum.Processed+sum.Removed+sum.KeptTotal() == 0 && len(a.filter.Seqs) == 0 {
		fmt.Fprintf(stderr, "producer: dlq replay: no dead letter matches (%s)\n", a.filter)
	}
	code := reportNotFound(stderr, sum.NotFound)
	if sum.KeptTotal() > 0 {
		code = 1
	}
	return code, nil
}

// dlqPurge is `producer dlq purge`: the count first, then the deletes,
// which need a scope (a filter or -all) and -yes; -dry-run lists them.
func dlqPurge(ctx context.Context, d *producer.DLQ, a dlqArgs, stdout, stderr io.Writer) (int, error) {
	switch {
	case a.all && !a.filter.IsZero():
		return 2, fmt.Errorf("%w: -all excludes the filters (%s): it selects every dead letter", envflag.ErrUsage, a.filter)
	case a.dryRun && a.yes:
		return 2, fmt.Errorf("%w: -dry-run excludes -yes", envflag.ErrUsage)
	}
	verb := "deleted"
	if a.dryRun {
		verb = "would delete"
	}
	refused := func(n int) error {
		switch {
		case a.dryRun:
			return nil
		case a.filter.IsZero() && !a.all:
			return fmt.Errorf("%w: without a filter, purge selects every dead letter (%d now); nothing was deleted: select them with -kind, -cause, -subject, -tenant, -id-prefix or -seq, or say -all; -dry-run lists them",
				envflag.ErrUsage, n)
		case !a.yes && n > 0:
			return fmt.Errorf("%w: would delete %d dead letters (%s); nothing was deleted: list them with -dry-run, then run again with -yes to delete them",
				envflag.ErrUsage, n, a.filter)
		}
		return nil
	}
	sum, err := d.Purge(ctx, a.filter, producer.PurgeOptions{DryRun: a.dryRun || !a.yes, All: a.all,
		OnSelected: func(n int) error {
			fmt.Fprintf(stderr, "producer: dlq purge: %d dead letters selected (%s)\n", n, a.filter)
			return refused(n)
		},
		OnEntry: func(e producer.DeadLetterEntry) { fmt.Fprintf(stdout, "%s\t%s\n", verb, entryLine(e)) },
	})
	if errors.Is(err, envflag.ErrUsage) {
		return 2, err
	}
	if err != nil {
		return 1, err
	}
	code := reportNotFound(stderr, sum.NotFound)
	if sum.Selected == 0 && len(a.filter.Seqs) == 0 {
		fmt.Fprintf(stderr, "producer: dlq purge: no dead letter matches (%s)\n", a.filter)
		return code, nil
	}
	if a.dryRun {
		fmt.Fprintf(stderr, "producer: dlq purge: %d would be deleted (%s); -yes deletes them\n", sum.Deleted, a.filter)
		return code, nil
	}
	fmt.Fprintf(stderr, "producer: dlq purge: %d deleted (%s)\n", sum.Deleted, a.filter)
	return code, nil
}
