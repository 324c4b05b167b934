package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/embed/embedtest"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// The monitoring files of deploy/, relative to the repository root.
const (
	alertRulesFile = "deploy/monitoring/rules/chunkstream.yaml"
	dashboardFile  = "deploy/monitoring/dashboards/chunkstream.json"
)

// TestPrometheusScrapesWorker runs a real Prometheus (Debian's package
// prometheus, found on PATH) with the alerting rules of deploy/, scraping a
// real worker process with the Qdrant sink (the in-process double) and an
// embedder (embedtest) through documents acked, dead-lettered, edited
// (vectors reused) and held during a Qdrant outage. Then every query of
// every panel of the Grafana dashboard returns data, every alerting rule
// evaluates without error, ChunkstreamDeadLetters fires for the two causes
// sent and ChunkstreamWorkersAbsent does not.
func TestPrometheusScrapesWorker(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not on PATH (Debian: apt-get install prometheus)")
	}
	root := testutil.RepoRoot(t)
	start := time.Now()

	ns := jstest.Start(t, t.TempDir(), -1)
	qd := qdranttest.Start(t)
	const reject = "this input is refused"
	api := embedtest.Start(t, embedtest.Config{Dims: 8, Usage: true, RejectMarker: reject})
	_, js := jstest.Connect(t, ns.ClientURL(), nats.MaxReconnects(-1))
	if _, err := worker.Setup(context.Background(), js, worker.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	w := startWorker(t, testutil.Binary(t, "./cmd/worker"), append(os.Environ(),
		"NATS_URL="+ns.ClientURL(),
		"CHUNKSTREAM_SINK=qdrant",
		"CHUNKSTREAM_QDRANT_ADDR="+qd.Addr(),
		"CHUNKSTREAM_EMBED_URL="+api.URL(),
		"CHUNKSTREAM_EMBED_MODEL=test-model",
		"CHUNKSTREAM_CONCURRENCY=4",
		"CHUNKSTREAM_SINK_PROBE_BASE=100ms",
		"CHUNKSTREAM_SINK_PROBE_MAX=500ms",
		"CHUNKSTREAM_METRICS_ADDR="+metricsAddr,
		"CHUNKSTREAM_LOG_LEVEL=warn",
	))
	prom := startPrometheus(t, promBin, filepath.Join(root, alertRulesFile), metricsAddr)

	alive := func() {
		t.Helper()
		select {
		case err := <-w.done:
			t.Fatalf("worker exited: %v\n%s", err, w.stderr.String())
		default:
		}
	}
	// wait polls Prometheus until expr returns a sample, and fails the
	// test, naming what, after timeout.
	wait := func(what, expr string) {
		t.Helper()
		began := time.Now()
		testutil.WaitFor(t, 90*time.Second, what, func() (bool, string) {
			alive()
			v, err := prom.query(expr)
			if err != nil {
				t.Fatalf("query %s: %v", expr, err)
			}
			return len(v) > 0, fmt.Sprintf("%s returned %v", expr, v)
		})
		t.Logf("%s: after %v", what, time.Since(began).Round(100*time.Millisecond))
	}
	wait("Prometheus to scrape the worker", `up{job="chunkstream-worker"} == 1`)

	// Documents acked, one refused by the embedder (a permanent dead letter
	// of cause sink), one asking for a chunker that does not exist (cause
	// unknown_chunker).
	docs := markdownDocs(20)
	publishDocs(t, js, docs)
	publishRequest(t, js, messages.IngestRequest{V: 1, ID: "docs/refused.md", Content: []byte("# Refused\n\n" + reject + "\n")})
	publishRequest(t, js, messages.IngestRequest{V: 1, ID: "docs/odd.md", Chunker: "no-such-chunker", Content: []byte("# Odd\n")})
	wait("the documents acked and dead-lettered",
		`sum(chunkstream_worker_messages_total{outcome="acked"}) >= 20 and on () sum(chunkstream_worker_dead_letters_total) >= 2`)

	// Five documents edited: the vectors of their unchanged chunks are reused.
	edited := map[string][]byte{}
	for id, c := range docs {
		if len(edited) == 5 {
			break
		}
		edited[id] = append([]byte("An inserted paragraph.\n\n"), c...)
	}
	publishDocs(t, js, edited)
	wait("the edits acked with vectors reused",
		`sum(chunkstream_worker_messages_total{outcome="acked"}) >= 25 and on () sum(chunkstream_worker_embed_inputs_reused_total) > 0`)

	// Qdrant down while more documents arrive: the worker holds what it
	// fetched, is not ready, and the rest waits in INGEST.
	qd.SetUnavailable(true)
	more := map[string][]byte{}
	for id, c := range markdownDocs(60) {
		more["more/"+id] = c
	}
	publishDocs(t, js, more)
	wait("the outage seen", `chunkstream_worker_sink_up{dependency="qdrant"} == 0 and on () chunkstream_worker_held > 0`)
	wait("the worker unready and the backlog waiting",
		`chunkstream_worker_ready == 0 and on () max(chunkstream_consumer_pending_messages) > 0`)
	qd.SetUnavailable(false)
	wait("every document acked after the outage",
		`sum(chunkstream_worker_messages_total{outcome="acked"}) >= 85 and on () chunkstream_worker_sink_up{dependency="qdrant"} == 1`)
	wait("the backlog drained and the worker ready",
		`max(chunkstream_consumer_pending_messages) == 0 and on () chunkstream_worker_ready == 1`)

	// Every alerting rule evaluated, after the last phase, without error.
	phasesDone := time.Now()
	var rules []promRule
	testutil.WaitFor(t, 60*time.Second, "every rule evaluated", func() (bool, string) {
		rules = prom.rules(t)
		for _, r := range rules {
			if r.Health == "err" {
				t.Fatalf("rule %s fails to evaluate: %s\n%s", r.Name, r.LastError, r.Query)
			}
			if r.Health != "ok" || !r.LastEvaluation.After(phasesDone) {
				return false, fmt.Sprintf("%s: health %q (%s), last evaluation %v", r.Name, r.Health, r.LastError, r.LastEvaluation)
			}
		}
		return len(rules) > 0, "no rules loaded"
	})
	byName := map[string]promRule{}
	for _, r := range rules {
		if r.Type != "alerting" {
			t.Errorf("rule %s is %s, want alerting", r.Name, r.Type)
		}
		byName[r.Name] = r
	}
	if len(byName) < 8 {
		t.Errorf("Prometheus loaded %d alerting rules, want every rule of %s", len(byName), alertRulesFile)
	}
	var causes []string
	for _, a := range byName["ChunkstreamDeadLetters"].Alerts {
		if a.State == "firing" {
			causes = append(causes, a.Labels["cause"]+"/"+a.Labels["kind"])
		}
	}
	slices.Sort(causes)
	if want := []string{"sink/permanent", "unknown_chunker/permanent"}; !slices.Equal(causes, want) {
		t.Errorf("ChunkstreamDeadLetters fires for %q, want %q", causes, want)
	}
	if r := byName["ChunkstreamWorkersAbsent"]; r.State != "inactive" {
		t.Errorf("ChunkstreamWorkersAbsent is %s while the worker reports, want inactive", r.State)
	}

	// Every query of every panel returns data over the run.
	d := readDashboard(t, filepath.Join(root, dashboardFile))
	end := time.Now()
	vars := strings.NewReplacer(
		"$__rate_interval", "5s",
		"$__interval", "1s",
		"$__range", strconv.Itoa(int(math.Ceil(end.Sub(start).Seconds())))+"s",
		"$job", ".+",
	)
	n := 0
	for _, p := range d.panels() {
		for _, tg := range p.Targets {
			n++
			expr := vars.Replace(tg.Expr)
			series, err := prom.queryRange(expr, start, end, time.Second)
			if err != nil {
				t.Errorf("panel %q, query %s: %s: %v", p.Title, tg.RefID, expr, err)
				continue
			}
			if !slices.ContainsFunc(series, func(s promSeries) bool { return s.finite() > 0 }) {
				t.Errorf("panel %q, query %s returned no data: %s", p.Title, tg.RefID, expr)
			}
		}
	}
	if n < 20 {
		t.Errorf("%s: %d queries, want every panel's", dashboardFile, n)
	}
	t.Logf("%d dashboard queries returned data, %d alerting rules evaluated, in %v", n, len(rules), time.Since(start).Round(time.Second))
}

// promServer is a Prometheus process and its HTTP API.
type promServer struct {
	base string
	out  *testutil.SyncBuffer
}

// startPrometheus starts prometheus scraping target every second and
// evaluating rulesFile every second, with its storage in a temporary
// folder, on a free loopback port; it is stopped when the test ends.
func startPrometheus(t *testing.T, bin, rulesFile, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: chunkstream-worker
    static_configs:
      - targets: [%q]
`, rulesFile, target)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	p := &promServer{base: "http://" + addr, out: &testutil.SyncBuffer{}}
	cmd := exec.Command(bin,
		"--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("prometheus output:\n%s", p.out.String())
		}
	})
	testutil.WaitFor(t, 60*time.Second, "prometheus ready", func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("prometheus exited: %v\n%s", err, p.out.String())
		default:
		}
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// promSeries is one series of a query's answer: an instant vector's
// sample is a series of one value.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
	Values [][]any           `json:"values"`
}

// finite counts the series' values that are numbers (not NaN or ±Inf).
func (s promSeries) finite() int {
	n := 0
	for _, v := range append(s.Values, s.Value) {
		if len(v) != 2 {
			continue
		}
		str, _ := v[1].(string)
		if f, err := strconv.ParseFloat(str, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			n++
		}
	}
	return n
}

// api calls the HTTP API at path with the form values and decodes the
// answer's data into out; an answer with status error is an error.
func (p *promServer) api(path string, form url.Values, out any) error {
	resp, err := http.PostForm(p.base+path, form)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status    string          `json:"status"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: HTTP %d: %w", path, resp.StatusCode, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, body.ErrorType, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

// query evaluates expr now.
func (p *promServer) query(expr string) ([]promSeries, error) {
	var data struct {
		Result []promSeries `json:"result"`
	}
	err := p.api("/api/v1/query", url.Values{"query": {expr}}, &data)
	return data.Result, err
}

// queryRange evaluates expr from start to end every step.
func (p *promServer) queryRange(expr string, start, end time.Time, step time.Duration) ([]promSeries, error) {
	var data struct {
		Result []promSeries `json:"result"`
	}
	err := p.api("/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix()+1, 10)},
		"step":  {step.String()},
	}, &data)
	return data.Result, err
}

// promRule is a rule as /api/v1/rules reports it.
type promRule struct {
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Query          string    `json:"query"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	State          string    `json:"state"`
	Alerts         []struct {
		Labels map[string]string `json:"labels"`
		State  string            `json:"state"`
	} `json:"alerts"`
}

// rules returns every rule Prometheus loaded.
func (p *promServer) rules(t *testing.T) []promRule {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Groups []struct {
				Rules []promRule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("/api/v1/rules: status %q, %v", body.Status, err)
	}
	var out []promRule
	for _, g := range body.Data.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// grafanaDashboard is the part of a Grafana dashboard the test reads.
type grafanaDashboard struct {
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	Type    string         `json:"type"`
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func readDashboard(t *testing.T, file string) grafanaDashboard {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return d
}

// panels returns every panel but rows, rows' own panels included.
func (d grafanaDashboard) panels() []grafanaPanel {
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, p)
		}
	}
	walk(d.Panels)
	return out
}
