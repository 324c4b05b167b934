package main

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// docSection returns the section "## title" of the Markdown file rel,
// failing the test when it is absent.
func docSection(t *testing.T, rel, title string) string {
	t.Helper()
	sec, ok := testutil.DocSection(t, rel, title)
	if !ok {
		t.Fatalf("%s has no section \"## %s\"", rel, title)
	}
	return sec
}

// producerSection is the `producer` section of docs/cli.md, the
// producer's CLI reference (its ### subsections included).
func producerSection(t *testing.T) string {
	t.Helper()
	return docSection(t, "docs/cli.md", "`producer`")
}

// subsection returns the part of sec under the heading "### title",
// failing the test when there is none.
func subsection(t *testing.T, sec, title string) string {
	t.Helper()
	body, ok := testutil.Subsection(sec, title)
	if !ok {
		t.Fatalf("docs/cli.md's producer section has no \"### %s\"", title)
	}
	return body
}

// TestREADMEDocumentsEveryFlag keeps the producer's CLI reference in step
// with the flags and their variables.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	sec := producerSection(t)
	rows := testutil.TableFlags(subsection(t, sec, "Sending documents"), 0)
	var c config
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	bindFlags(fs, &c)
	fs.VisitAll(func(f *flag.Flag) {
		if !rows[f.Name] {
			t.Errorf("docs/cli.md's table of producer flags has no row for -%s", f.Name)
		}
	})
	for _, v := range []string{"NATS_URL", "CHUNKSTREAM_PRODUCER_CHUNKER", "CHUNKSTREAM_PRODUCER_OPTIONS", "CHUNKSTREAM_NATS_PASSWORD", "CHUNKSTREAM_NATS_TOKEN"} {
		if !strings.Contains(sec, v) {
			t.Errorf("docs/cli.md's producer section does not name %s", v)
		}
	}
}

// TestREADMEDocumentsDLQ keeps the docs in step with producer dlq: its
// flags in the producer's CLI reference, the runbook's steps, and the
// cause header and the record's failure in the wire format.
func TestREADMEDocumentsDLQ(t *testing.T) {
	sec := producerSection(t)
	rows := testutil.TableFlags(subsection(t, sec, "`producer dlq`"), 0)
	for op := range dlqOps {
		var c dlqConfig
		var a dlqArgs
		fs := flag.NewFlagSet("producer dlq "+op, flag.ContinueOnError)
		bindDLQFlags(fs, op, &c, &a)
		fs.VisitAll(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "nats-") {
				return // the connection flags, documented above and named "-nats-*"
			}
			if !rows[f.Name] {
				t.Errorf("docs/cli.md's table of producer dlq flags has no row for -%s (producer dlq %s)", f.Name, op)
			}
		})
		if !strings.Contains(sec, "producer dlq "+op) {
			t.Errorf("docs/cli.md does not show producer dlq %s", op)
		}
	}
	runbook := docSection(t, "docs/operations.md", "Dead letters: a runbook")
	for _, s := range []string{"producer dlq list", "producer dlq replay", "-dry-run", "producer dlq purge", "-yes", "last_failure", "producer status -failed"} {
		if !strings.Contains(runbook, s) {
			t.Errorf("docs/operations.md's runbook does not mention %s", s)
		}
	}
	wire := docSection(t, "docs/wire.md", "Dead letter") + docSection(t, "docs/wire.md", "Document record")
	for _, s := range []string{"Chunkstream-Error-Cause", "dead_lettered", "last_failure", "fingerprint"} {
		if !strings.Contains(wire, s) {
			t.Errorf("docs/wire.md does not mention %s", s)
		}
	}
}

// configRow matches a row of docs/configuration.md:
// | `VAR` | `-flag` or — | `default` or nothing | read by | meaning |.
var configRow = regexp.MustCompile("(?m)^\\| `([A-Z0-9_]+)` \\| (?:`(-[a-z0-9-]+)`|—) \\| (?:`([^`]*)`)? \\| ([a-z, ]+) \\|")

// TestREADMEConfigTable keeps docs/configuration.md in step with every
// variable the producer and producer dlq read: each has a row that says
// the producer reads it, with the producer's flag and default, and every
// row that says so is a variable the producer reads.
func TestREADMEConfigTable(t *testing.T) {
	var text strings.Builder
	for _, s := range []string{"NATS connection", "Topology", "Worker", "Sink", "Qdrant", "Embedder", "Producer"} {
		text.WriteString(docSection(t, "docs/configuration.md", s))
	}
	type row struct{ flag, def, readBy string }
	rows := map[string]row{}
	for _, m := range configRow.FindAllStringSubmatch(text.String(), -1) {
		rows[m[1]] = row{m[2], m[3], m[4]}
	}
	if len(rows) < 40 {
		t.Fatalf("docs/configuration.md has %d rows; the table format changed?", len(rows))
	}
	readByProducer := func(r row) bool {
		for _, c := range strings.Split(r.readBy, ",") {
			if strings.TrimSpace(c) == "producer" {
				return true
			}
		}
		return false
	}

	// The producer's variables and their defaults, sending and dlq.
	defaults := map[string]string{}
	for _, c := range []any{&config{}, &dlqConfig{}} {
		params, err := env.GetFieldParams(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range params {
			defaults[p.Key] = p.DefaultValue
		}
	}
	// The flags naming each variable, sending and dlq.
	flags := map[string][]string{}
	usageVar := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`)
	collect := func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) {
			if m := usageVar.FindStringSubmatch(f.Usage); m != nil {
				flags[m[1]] = append(flags[m[1]], f.Name)
			}
		})
	}
	var c config
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	bindFlags(fs, &c)
	collect(fs)
	for op := range dlqOps {
		var dc dlqConfig
		var a dlqArgs
		fs := flag.NewFlagSet("dlq", flag.ContinueOnError)
		bindDLQFlags(fs, op, &dc, &a)
		collect(fs)
	}

	for v, def := range defaults {
		r, ok := rows[v]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md lacks %s", v)
			continue
		case !readByProducer(r):
			t.Errorf("docs/configuration.md row %s: read by %q, but the producer reads it", v, r.readBy)
		case r.def != def:
			t.Errorf("docs/configuration.md row %s: default %q, the producer's is %q", v, r.def, def)
		}
		if names := flags[v]; len(names) > 0 {
			found := false
			for _, n := range names {
				found = found || r.flag == "-"+n
			}
			if !found {
				t.Errorf("docs/configuration.md row %s: flag %q, the producer's is -%s", v, r.flag, names[0])
			}
		}
	}
	for v, r := range rows {
		if _, ok := defaults[v]; readByProducer(r) && !ok {
			t.Errorf("docs/configuration.md row %s says the producer reads it; it does not", v)
		}
	}
}

// TestREADMEDocumentsStatus keeps docs/cli.md in step with producer
// status: its flags and its forms in the producer section, and the
// commands a backfill waits with and re-chunks with.
func TestREADMEDocumentsStatus(t *testing.T) {
	sec := producerSection(t)
	rows := testutil.TableFlags(subsection(t, sec, "`producer status`"), 0)
	var c statusConfig
	var a statusArgs
	fs := flag.NewFlagSet("producer status", flag.ContinueOnError)
	bindStatusFlags(fs, &c, &a)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "nats-") || f.Name == "s" || f.Name == "connect-timeout" || f.Name == "log-level" {
			return // the connection flags, documented above
		}
		if !rows[f.Name] {
			t.Errorf("docs/cli.md's table of producer status flags has no row for -%s", f.Name)
		}
	})
	for _, s := range []string{"producer status -id", "producer status -failed", "producer -wait -wait-timeout", "producer -resend-stale -dry-run"} {
		if !strings.Contains(sec, s) {
			t.Errorf("docs/cli.md's producer section does not show %s", s)
		}
	}
}

// TestREADMEDocumentsDefaults keeps docs/cli.md in step with producer
// defaults: a row for each of its own flags (the chunker flags have
// theirs), and its synopsis.
func TestREADMEDocumentsDefaults(t *testing.T) {
	sec := producerSection(t)
	body := subsection(t, sec, "`producer defaults`")
	rows := testutil.TableFlags(body, 0)
	for _, set := range []bool{false, true} {
		var c statusConfig
		var a defaultsArgs
		fs := flag.NewFlagSet("producer defaults", flag.ContinueOnError)
		bindDefaultsFlags(fs, set, &c, &a)
		fs.VisitAll(func(f *flag.Flag) {
			switch {
			case strings.HasPrefix(f.Name, "nats-") || f.Name == "s" || f.Name == "connect-timeout" || strings.HasPrefix(f.Name, "log-"):
				return // the connection flags, documented above
			case fs.Lookup(f.Name).Usage != "" && strings.HasPrefix(f.Usage, "["):
				return // a chunker flag, in the chunker flags' table
			}
			if !rows[f.Name] {
				t.Errorf("docs/cli.md's table of producer defaults flags has no row for -%s", f.Name)
			}
		})
	}
	for _, line := range strings.Split(defaultsUsage, "\n") {
		if !strings.Contains(body, strings.TrimSpace(line)) {
			t.Errorf("docs/cli.md's producer defaults section does not show %s", strings.TrimSpace(line))
		}
	}
}

// TestREADMEDocumentsSearch keeps docs/cli.md in step with producer
// search: a row for each of its flags, and its synopsis.
func TestREADMEDocumentsSearch(t *testing.T) {
	sec := producerSection(t)
	rows := testutil.TableFlags(subsection(t, sec, "`producer search`"), 0)
	var c searchConfig
	var a searchArgs
	fs := flag.NewFlagSet("producer search", flag.ContinueOnError)
	bindSearchFlags(fs, &c, &a)
	fs.VisitAll(func(f *flag.Flag) {
		if !rows[f.Name] {
			t.Errorf("docs/cli.md's table of producer search flags has no row for -%s", f.Name)
		}
	})
	if !strings.Contains(sec, searchUsage) {
		t.Errorf("docs/cli.md's producer section does not show %s", searchUsage)
	}
}
