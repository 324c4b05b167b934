package main

import (
	"cmp"
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

	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/topology"
)

// statusConfig is the settings of `producer status`.
type statusConfig struct {
	NATS natsconn.Config
	topology.Config
	Log tty.Log
}

// statusTopology lists the topology settings that are status flags.
var statusTopology = map[string]bool{
	"CHUNKSTREAM_DOCS_BUCKET": true, "CHUNKSTREAM_INGEST_STREAM": true, "CHUNKSTREAM_CONSUMER": true,
	"CHUNKSTREAM_DLQ_STREAM": true,
}

const statusUsage = "producer status [-json] [-id ID | -failed] [-tenant T]"

// statusArgs are the selections of `producer status`, flags only.
type statusArgs struct {
	json, failed bool
	id, tenant   string
}

// bindStatusFlags defines the flags of `producer status`.
func bindStatusFlags(fs *flag.FlagSet, c *statusConfig, a *statusArgs) {
	natsconn.BindFlags(fs, &c.NATS)
	fs.Var(fs.Lookup("nats-url").Value, "s", "same as -nats-url (env NATS_URL)")
	envflag.Bind(fs, &c.Config, func(v string) bool { return statusTopology[v] })
	envflag.Bind(fs, &c.Log, nil)
	fs.BoolVar(&a.json, "json", false, "print JSON: one object, or one per line with -failed")
	fs.StringVar(&a.id, "id", "", "show this document's record: version, ingest seq, state, settings fingerprint, chunks, last failure")
	fs.BoolVar(&a.failed, "failed", false, "list the documents whose newest version was dead-lettered, with the reasons")
	fs.StringVar(&a.tenant, "tenant", "", "with -id, the document of this tenant; with -failed, only this tenant's documents")
}

// runStatus is `producer status` (the flags say what it shows).
func runStatus(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) (int, error) {
	var c statusConfig
	if err := loadEnv(&c, lookup); err != nil {
		return 2, within("status", err)
	}
	fs := flag.NewFlagSet("producer status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var a statusArgs
	bindStatusFlags(fs, &c, &a)
	envflag.SetHelp(fs, envflag.Help{
		Usage: "usage: " + statusUsage,
		Summary: `Documents by state, the consumer's backlog, dead letters, the workers (gone ones apart) and
the fleet's chunker defaults; -id one document's record; -failed the documents that failed.`,
		Flags: []string{"json", "id", "failed", "tenant", "nats-url"},
	})
	if err := envflag.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("%w: status takes no arguments, got %q", envflag.ErrUsage, fs.Args())
	}
	if a.id != "" && a.failed {
		return 2, fmt.Errorf("%w: status: -id and -failed exclude each other", envflag.ErrUsage)
	}
	if a.tenant != "" && a.id == "" && !a.failed {
		return 2, fmt.Errorf("%w: status: -tenant selects with -id or -failed", envflag.ErrUsage)
	}
	if messages.ValidateTenant(a.tenant) != nil {
		return 2, fmt.Errorf("%w: status: -tenant %q: want 1 to %d ASCII letters, digits, '-' or '_'", envflag.ErrUsage, a.tenant, messages.MaxTenantLen)
	}
	if err := errors.Join(c.NATS.Validate(), c.Log.Validate(), envflag.Explain(c.Config.Validate(), &c.Config, fs)); err != nil {
		return 2, within("status", err)
	}
	log := c.Log.Logger(stderr)
	nc, js, err := natsconn.ConnectJetStream(ctx, c.NATS, "chunkstream-producer-status", log)
	if err != nil {
		return 1, within("status", err)
	}
	defer nc.Close()
	switch {
	case a.id != "":
		return statusRecord(ctx, js, c.DocsBucket, a.tenant, a.id, a.json, stdout)
	case a.failed:
		return statusFailed(ctx, js, c.DocsBucket, a.tenant, a.json, stdout)
	}
	st, err := producer.ReadStatus(ctx, js, c.Config)
	if err != nil {
		return 1, within("status", err)
	}
	if a.json {
		return 0, json.NewEncoder(stdout).Encode(st)
	}
	d := st.Documents
	fmt.Fprintf(stdout, "documents: %d: %d done, %d pending, %d dead-lettered, %d deleted", d.Total, d.Done, d.Pending, d.DeadLettered, d.Deleted)
	if d.Dismissed > 0 {
		fmt.Fprintf(stdout, ", %d dismissed", d.Dismissed)
	}
	if d.Other > 0 {
		fmt.Fprintf(stdout, ", %d unreadable", d.Other)
	}
	fmt.Fprintln(stdout)
	if b := st.Backlog; b != nil {
		fmt.Fprintf(stdout, "backlog: consumer %s on %s: %d pending, %d ack pending, %d redelivered\n",
			b.Consumer, b.Stream, b.Pending, b.AckPending, b.Redelivered)
	} else {
		fmt.Fprintf(stdout, "backlog: no consumer %s on %s (no worker has set up yet)\n", c.Consumer, c.IngestStream)
	}
	if st.DeadLetters >= 0 {
		fmt.Fprintf(stdout, "dead letters: %d in %s\n", st.DeadLetters, c.DLQStream)
	} else {
		fmt.Fprintf(stdout, "dead letters: no stream %s\n", c.DLQStream)
	}
	printWorkers(stdout, st.Workers, st.Gone, time.Now())
	if st.ChunkerDefaults != nil {
		opts, _ := json.Marshal(st.ChunkerDefaults.Options)
		fmt.Fprintf(stdout, "fleet chunker defaults: %s %s\n", cell(st.ChunkerDefaults.Chunker), opts)
	} else {
		fmt.Fprintln(stdout, "fleet chunker defaults: none set (the first worker to start sets them)")
	}
	return 0, nil
}

// recordJSON is a record as status -json prints it, after its id.
type recordJSON struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant,omitempty"`
	messages.DocRecord
}

// statusRecord prints one document's record (status 1 without one).
func statusRecord(ctx context.Context, js jetstream.JetStream, bucket, tenant, id string, asJSON bool, stdout io.Writer) (int, error) {
	rec, ok, err := producer.ReadRecord(ctx, js, bucket, messages.RecordID(tenant, id))
	if err != nil {
		return 1, within("status", err)
	}
	if !ok {
		of := ""
		if tenant != "" {
			of = " of tenant " + tenant
		}
		return 1, fmt.Errorf("status: no record of %q%s: no worker has started it (or it is not this id)", id, of)
	}
	if asJSON {
		return 0, json.NewEncoder(stdout).Encode(recordJSON{ID: id, Tenant: tenant, DocRecord: rec})
	}
	row := func(k, v string) { fmt.Fprintf(stdout, "%-12s %s\n", k, v) }
	row("id", cell(id))
	if tenant != "" {
		row("tenant", tenant)
	}
	row("state", cell(string(rec.State)))
	row("op", cell(string(rec.Op)))
	row("ingest_seq", strconv.FormatUint(rec.IngestSeq, 10))
	row("doc_version", cell(rec.DocVersion))
	row("fingerprint", cell(rec.Fingerprint))
	if rec.Fingerprint != "" {
		row("chunks", strconv.Itoa(rec.Chunks))
	} else {
		row("chunks", "-")
	}
	if f := rec.LastFailure; f != (messages.Failure{}) {
		row("last_failure", fmt.Sprintf("%s at %s (ingest seq %d): %s", cell(string(f.Cause)), f.Time.Format(time.RFC3339), f.IngestSeq, messages.OneLine(f.Reason, 4096)))
	}
	if rec.TraceID != "" {
		row("trace_id", rec.TraceID)
	}
	printWarnings(stdout, rec.Warnings)
	return 0, nil
}

// statusFailed lists the dead-lettered documents (of tenant, when it is
// not ""), sorted by tenant and id, one line or JSON object each.
func statusFailed(ctx context.Context, js jetstream.JetStream, bucket, tenant string, asJSON bool, stdout io.Writer) (int, error) {
	var out []recordJSON
	each := producer.EachRecord
	if tenant != "" {
		each = func(ctx context.Context, js jetstream.JetStream, bucket string, fn func(string, messages.DocRecord, bool) error) error {
			return producer.EachTenantRecord(ctx, js, bucket, tenant, fn)
		}
	}
	err := each(ctx, js, bucket, func(rid string, rec messages.DocRecord, ok bool) error {
		t, id := messages.SplitRecordID(rid)
		if ok && rec.State == messages.StateDeadLettered && (tenant == "" || t == tenant) {
			out = append(out, recordJSON{ID: id, Tenant: t, DocRecord: rec})
		}
		return nil
	})
	if err != nil {
		return 1, within("status", err)
	}
	slices.SortFunc(out, func(a, b recordJSON) int {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.ID, b.ID))
	})
	enc := json.NewEncoder(stdout)
	for _, r := range out {
		if asJSON {
			if err := enc.Encode(r); err != nil {
				return 1, err
			}
			continue
		}
		f := r.LastFailure
		fmt.Fprintln(stdout, strings.Join([]string{cell(r.ID), strconv.FormatUint(r.IngestSeq, 10), f.Time.Format(time.RFC3339),
			cell(string(f.Cause)), cell(messages.OneLine(f.Reason, 4096)), cell(r.Tenant)}, "\t"))
	}
	return 0, nil
}

// printWorkers writes how many workers pull, then a line per running
// worker, then the workers that are gone (no presence for
// messages.PresenceTTL), which are no longer workers.
func printWorkers(w io.Writer, ws, gone []messages.WorkerPresence, now time.Time) {
	pulling := 0
	for _, p := range ws {
		if p.Pulling(now) {
			pulling++
		}
	}
	ago := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return now.Sub(t).Round(100*time.Millisecond).String() + " ago"
	}
	line := fmt.Sprintf("workers: %d pulling, %d not pulling", pulling, len(ws)-pulling)
	if len(gone) > 0 {
		line += fmt.Sprintf("; %d gone (no heartbeat for over %s)", len(gone), messages.PresenceTTL)
	}
	fmt.Fprintln(w, line)
	for _, p := range ws {
		state := "not pulling"
		if p.Pulling(now) {
			state = "pulling"
		}
		ready := "ready"
		if !p.Ready {
			ready = "not ready"
		}
		fmt.Fprintf(w, "  %s on %s: %s, %s, last pull %s, %d in flight, %d held, up %s", p.ID, cell(p.Host), state, ready,
			ago(p.LastPull), p.InFlight, p.Held, now.Sub(p.Started).Round(time.Second))
		if p.OwnDefaults != nil {
			fmt.Fprintf(w, ", own chunker defaults %s (follows the fleet's)", defaultsText(p.OwnDefaults))
		}
		fmt.Fprintln(w)
	}
	for _, p := range gone {
		fmt.Fprintf(w, "  %s on %s: gone, last heartbeat %s\n", p.ID, cell(p.Host), ago(p.Seen))
	}
}
