package main

import (
	"bytes"
	"context"
	"flag"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chunkstream/chunkstream/chunking/registry"
	"github.com/chunkstream/chunkstream/cmd/internal/chunkflags"
	"github.com/chunkstream/chunkstream/cmd/internal/envflag"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed"
)

// configRow is one row of docs/configuration.md: a variable's flag (""
// for none, written "—"), its default and the commands that read it.
type configRow struct {
	flag, def, readBy string
}

// docsConfigRow matches a row of docs/configuration.md:
// | `VAR` | `-flag` or — | `default` or nothing | read by | meaning |.
var docsConfigRow = regexp.MustCompile("(?m)^\\| `([A-Z0-9_]+)` \\| (?:`(-[a-z0-9-]+)`|—) \\| (?:`([^`]*)`)? \\| ([a-z, ]+) \\|")

// configRows returns the rows of docs/configuration.md in text, by
// variable; a variable with two rows is an error.
func configRows(t *testing.T, text string) map[string]configRow {
	t.Helper()
	rows := map[string]configRow{}
	for _, m := range docsConfigRow.FindAllStringSubmatch(text, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/configuration.md lists %s twice", m[1])
		}
		rows[m[1]] = configRow{flag: m[2], def: m[3], readBy: m[4]}
	}
	return rows
}

// isReadBy reports whether a row's "read by" cell names command.
func (r configRow) isReadBy(command string) bool {
	for _, c := range strings.Split(r.readBy, ",") {
		if strings.TrimSpace(c) == command {
			return true
		}
	}
	return false
}

// checkWorkerRows checks rows (the worker's, by variable) against the
// worker's configuration: the same variables, flags and defaults.
func checkWorkerRows(t *testing.T, where string, rows map[string]configRow) {
	t.Helper()
	params := envParams()
	if len(params) < 30 {
		t.Fatalf("config has %d variables; tags changed?", len(params))
	}
	var c config
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	bindFlags(fs, &c)
	for _, p := range params {
		got, ok := rows[p.Key]
		if !ok {
			t.Errorf("%s lacks %s", where, p.Key)
			continue
		}
		delete(rows, p.Key)
		wantFlag := "-" + envflag.Name(p.Key)
		if fs.Lookup(envflag.Name(p.Key)) == nil {
			wantFlag = "" // environment only
		}
		if got.flag != wantFlag || got.def != p.DefaultValue {
			t.Errorf("%s row %s: flag %q default %q, want flag %q default %q", where, p.Key, got.flag, got.def, wantFlag, p.DefaultValue)
		}
	}
	for k := range rows {
		t.Errorf("%s lists %s for the worker, which the worker's config does not have", where, k)
	}
}

// TestREADMEDocsConfigTable keeps the tables of docs/configuration.md in
// step with the config struct: the same variables, flags and defaults,
// and the readers they name.
func TestREADMEDocsConfigTable(t *testing.T) {
	rows := configRows(t, docsConfigText(t))
	worker := map[string]configRow{}
	for k, r := range rows {
		if r.isReadBy("worker") {
			worker[k] = r
		} else if !r.isReadBy("producer") {
			t.Errorf("docs/configuration.md row %s: read by %q, want worker and/or producer", k, r.readBy)
		}
	}
	checkWorkerRows(t, "docs/configuration.md", worker)
	// Every worker variable row is one the worker reads, and no worker
	// variable hides in a row that does not say so.
	workerVars := map[string]bool{}
	for _, p := range envParams() {
		workerVars[p.Key] = true
	}
	for k, r := range rows {
		if workerVars[k] && !r.isReadBy("worker") {
			t.Errorf("docs/configuration.md row %s: read by %q, but the worker reads it", k, r.readBy)
		}
	}
}

// docsConfigText returns the whole of docs/configuration.md.
func docsConfigText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, s := range []string{"NATS connection", "Topology", "Worker", "Sink", "Qdrant", "Embedder", "Producer"} {
		sec, ok := testutil.DocSection(t, "docs/configuration.md", s)
		if !ok {
			t.Errorf("docs/configuration.md has no ## %s section", s)
		}
		b.WriteString(sec)
	}
	return b.String()
}

// TestREADMEDocumentsWorkerFlags keeps the `worker` section of docs/cli.md
// in step with the worker's own flags (local mode, -healthcheck; the
// setting flags are the configuration table's): each has a row in one of
// its tables, and each chunker flag a row in the chunker flag table.
func TestREADMEDocumentsWorkerFlags(t *testing.T) {
	sec, ok := testutil.DocSection(t, "docs/cli.md", "`worker`")
	if !ok {
		t.Fatal("docs/cli.md has no ## `worker` section")
	}
	rows := testutil.TableFlags(sec, 0)
	chunk, _ := testutil.DocSection(t, "docs/cli.md", "`chunk`")
	chunkerTable, ok := testutil.Subsection(chunk, "Chunker flags")
	if !ok {
		t.Fatal("docs/cli.md has no ### Chunker flags")
	}
	chunkerRows := testutil.TableFlags(chunkerTable, 1) // | chunker | flag | …
	var help bytes.Buffer
	if code := run(context.Background(), []string{"-help-all"}, &bytes.Buffer{}, &help, noEnv); code != 0 {
		t.Fatalf("worker -help-all: exit status %d", code)
	}
	ms := regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(help.String(), -1)
	if len(ms) < 30 {
		t.Fatalf("worker -help-all lists %d flags; the help format changed?", len(ms))
	}
	if strings.Contains(help.String(), "see the configuration table") {
		t.Errorf("worker -help-all has flags that do not say what they do:\n%s", help.String())
	}
	var short bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &short, noEnv); code != 0 || strings.Count(short.String(), "\n") > 40 ||
		!strings.Contains(short.String(), "worker -help-all") {
		t.Errorf("worker -h = %d, %d lines:\n%s\nwant 0, at most 40 lines naming -help-all", code, strings.Count(short.String(), "\n"), short.String())
	}
	var c config
	settings := flag.NewFlagSet("settings", flag.ContinueOnError)
	bindFlags(settings, &c)
	chunkers := flag.NewFlagSet("chunkers", flag.ContinueOnError)
	chunkflags.Register(chunkers, registry.Default().Entries(), "markdown")
	for _, m := range ms {
		name := m[1]
		switch {
		case chunkers.Lookup(name) != nil && name != "chunker":
			if !chunkerRows[name] {
				t.Errorf("docs/cli.md's chunker flag table has no row for -%s", name)
			}
		case settings.Lookup(name) != nil: // a setting: TestREADMEDocsConfigTable
		default:
			if !rows[name] {
				t.Errorf("docs/cli.md's worker section has no table row for -%s", name)
			}
		}
	}
}

// docMetricRow matches a row of the metrics table of docs/operations.md:
// | `name` | type | `label`, `label` or nothing | meaning |.
var docMetricRow = regexp.MustCompile("(?m)^\\| `(chunkstream_[a-z0-9_]+)` \\| ([a-z]+) \\|([^|]*)\\|")

// metricDesc is a metric as the code defines it: its type and labels.
type metricDesc struct {
	typ    string
	labels []string
}

// codeMetrics returns every metric of the worker and of its embedder, by
// name, from the collectors in the fields of their Metrics structs.
func codeMetrics(t *testing.T) map[string]metricDesc {
	t.Helper()
	descLabels := regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)
	out := map[string]metricDesc{}
	for _, m := range []any{worker.NewMetrics(), embed.NewMetrics(nil)} {
		v := reflect.ValueOf(m).Elem()
		for i := range v.NumField() {
			c, ok := v.Field(i).Interface().(prometheus.Collector)
			if !ok || v.Type().Field(i).Name == "Registry" {
				continue
			}
			var typ string
			switch c.(type) { // Gauge first: a gauge is also a Counter
			case prometheus.Gauge, *prometheus.GaugeVec:
				typ = "gauge"
			case prometheus.Counter, *prometheus.CounterVec:
				typ = "counter"
			case prometheus.Histogram, *prometheus.HistogramVec:
				typ = "histogram"
			default:
				t.Fatalf("%T.%s: a %T, which this test does not know", m, v.Type().Field(i).Name, c)
			}
			ch := make(chan *prometheus.Desc, 4)
			c.Describe(ch)
			close(ch)
			for d := range ch {
				sm := descLabels.FindStringSubmatch(d.String())
				if sm == nil {
					t.Fatalf("cannot read %s", d)
				}
				var labels []string
				if sm[2] != "" {
					labels = strings.Split(sm[2], ",")
				}
				out[sm[1]] = metricDesc{typ: typ, labels: labels}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d metrics in the code; the Metrics structs changed?", len(out))
	}
	return out
}

// TestREADMEDocumentsEveryMetric keeps the metrics table of
// docs/operations.md in step with the code: every metric of the worker
// and the embedder has a row with its type and labels, and every row is a
// metric of the code.
func TestREADMEDocumentsEveryMetric(t *testing.T) {
	sec, ok := testutil.DocSection(t, "docs/operations.md", "Metrics")
	if !ok {
		t.Fatal("docs/operations.md has no ## Metrics section")
	}
	code := codeMetrics(t)
	label := regexp.MustCompile("`([a-z_]+)`")
	seen := map[string]bool{}
	for _, m := range docMetricRow.FindAllStringSubmatch(sec, -1) {
		name, typ := m[1], m[2]
		seen[name] = true
		want, ok := code[name]
		if !ok {
			t.Errorf("docs/operations.md lists %s, which the code does not define", name)
			continue
		}
		var labels []string
		for _, l := range label.FindAllStringSubmatch(m[3], -1) {
			labels = append(labels, l[1])
		}
		if typ != want.typ || !slices.Equal(labels, want.labels) {
			t.Errorf("docs/operations.md row %s: %s with labels %v, want %s with labels %v", name, typ, labels, want.typ, want.labels)
		}
	}
	for name := range code {
		if !seen[name] {
			t.Errorf("docs/operations.md's metrics table lacks %s", name)
		}
	}
}
