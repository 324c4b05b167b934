package main

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"

	"github.com/chunkstream/chunkstream/internal/testutil"
)

// readmeSection returns the README's section under the heading title,
// up to the next section, failing the test when the README has none.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	return docSection(t, "README.md", title)
}

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

// documentsFlag reports whether text documents the flag name: "`-name`"
// or "`-name " (a flag with its argument).
func documentsFlag(text, name string) bool {
	return strings.Contains(text, "`-"+name+"`") || strings.Contains(text, "`-"+name+" ")
}

// producerSections are the places that document the producer: the
// `producer` section of docs/cli.md always, and the README's producer
// section while it has one.
func producerSections(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"docs/cli.md": docSection(t, "docs/cli.md", "`producer`")}
	if sec, ok := testutil.DocSection(t, "README.md", "Backfills and the producer"); ok {
		out["README producer section"] = sec
	}
	return out
}

// TestREADMEDocumentsEveryFlag keeps the producer's CLI reference in step
// with the flags and their variables.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	for where, sec := range producerSections(t) {
		var c config
		fs := flag.NewFlagSet("producer", flag.ContinueOnError)
		bindFlags(fs, &c)
		fs.VisitAll(func(f *flag.Flag) {
			if !documentsFlag(sec, f.Name) {
				t.Errorf("%s does not document -%s", where, f.Name)
			}
		})
		for _, v := range []string{"NATS_URL", "CHUNKSTREAM_PRODUCER_CHUNKER", "CHUNKSTREAM_PRODUCER_OPTIONS", "CHUNKSTREAM_NATS_PASSWORD", "CHUNKSTREAM_NATS_TOKEN"} {
			if !strings.Contains(sec, v) {
				t.Errorf("%s does not name %s", where, v)
			}
		}
	}
}

// TestREADMEDocumentsDLQ keeps the docs in step with producer dlq: its
// flags in the producer's CLI reference, the runbook's steps, and the
// cause header and the record's failure in the wire format.
func TestREADMEDocumentsDLQ(t *testing.T) {
	for where, sec := range producerSections(t) {
		for op := range dlqOps {
			var c dlqConfig
			var a dlqArgs
			fs := flag.NewFlagSet("producer dlq "+op, flag.ContinueOnError)
			bindDLQFlags(fs, op, &c, &a)
			fs.VisitAll(func(f *flag.Flag) {
				if strings.HasPrefix(f.Name, "nats-") {
					return // the connection flags, documented above and named "-nats-*"
				}
				if !documentsFlag(sec, f.Name) {
					t.Errorf("%s does not document -%s of producer dlq %s", where, f.Name, op)
				}
			})
			if !strings.Contains(sec, "producer dlq "+op) {
				t.Errorf("%s does not show producer dlq %s", where, op)
			}
		}
	}
	runbooks := map[string]string{"docs/operations.md": docSection(t, "docs/operations.md", "Dead letters: a runbook")}
	if sec, ok := testutil.DocSection(t, "README.md", "Dead letters: a runbook"); ok {
		runbooks["README runbook"] = sec
	}
	for where, runbook := range runbooks {
		for _, s := range []string{"producer dlq list", "producer dlq replay", "-dry-run", "producer dlq purge", "-yes", "last_failure"} {
			if !strings.Contains(runbook, s) {
				t.Errorf("%s does not mention %s", where, s)
			}
		}
	}
	formats := map[string]string{
		"docs/wire.md": docSection(t, "docs/wire.md", "Dead letter") + docSection(t, "docs/wire.md", "Document record"),
	}
	if sec, ok := testutil.DocSection(t, "README.md", "Message formats"); ok {
		formats["README message formats"] = sec
	}
	for where, text := range formats {
		for _, s := range []string{"Chunkstream-Error-Cause", "dead_lettered", "last_failure"} {
			if !strings.Contains(text, s) {
				t.Errorf("%s does not mention %s", where, s)
			}
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

// TestREADMEDocumentsStatus keeps the README in step with producer
// status: its flags and its forms in the producer section.
func TestREADMEDocumentsStatus(t *testing.T) {
	sec := readmeSection(t, "Backfills and the producer")
	var c statusConfig
	var a statusArgs
	fs := flag.NewFlagSet("producer status", flag.ContinueOnError)
	bindStatusFlags(fs, &c, &a)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "nats-") || f.Name == "s" || f.Name == "connect-timeout" || f.Name == "log-level" {
			return // the connection flags, documented above
		}
		if !strings.Contains(sec, "`-"+f.Name+"`") && !strings.Contains(sec, "`-"+f.Name+" ") {
			t.Errorf("README producer section does not document -%s of producer status", f.Name)
		}
	})
	for _, s := range []string{"producer status", "producer status -id", "producer status -failed", "-wait-timeout"} {
		if !strings.Contains(sec, s) {
			t.Errorf("README producer section does not show %s", s)
		}
	}
}
