package deploy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite monitoring/prometheusrule.yaml from the rule file")

// The monitoring files, relative to deploy/.
const (
	rulesDir       = "monitoring/rules"
	rulesFile      = rulesDir + "/chunkstream.yaml"
	rulesTestFile  = rulesDir + "/chunkstream.test.yaml"
	promRuleFile   = "monitoring/prometheusrule.yaml"
	dashboardFile  = "monitoring/dashboards/chunkstream.json"
	dashboardCM    = "chunkstream-dashboard"
	promRuleName   = "chunkstream-worker"
	kpsValues      = "kube-prometheus-stack-values.yaml"
	operationsDoc  = "docs/operations.md"
	alertsSection  = "Alerts"
	datasourceUID  = "${datasource}"
	jobMatcher     = `job=~"$job"`
	promRuleHeader = "# Generated from rules/chunkstream.yaml by `go test -run TestPrometheusRuleIsGenerated -update`\n" +
		"# in deploy/: edit that file, not this one. The Prometheus operator loads it\n" +
		"# (kube-prometheus-stack: ../helm/kube-prometheus-stack-values.yaml).\n"
)

// ruleFile is a Prometheus rule file, as the Prometheus operator's
// PrometheusRuleSpec (the same format), decoded strictly.
func ruleFile(t *testing.T) monitoringv1.PrometheusRuleSpec {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var spec monitoringv1.PrometheusRuleSpec
	if err := decodeStrict(data, &spec); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return spec
}

// alertRules returns the alerting rules of the rule file, by name.
func alertRules(t *testing.T) map[string]monitoringv1.Rule {
	t.Helper()
	out := map[string]monitoringv1.Rule{}
	for _, g := range ruleFile(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("%s: group %s has a rule that is not an alert (record %q)", rulesFile, g.Name, r.Record)
				continue
			}
			if _, dup := out[r.Alert]; dup {
				t.Errorf("%s: alert %s defined twice", rulesFile, r.Alert)
			}
			out[r.Alert] = r
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no alerts", rulesFile)
	}
	return out
}

// ruleTests is promtool's unit test file format (`promtool test rules`).
type ruleTests struct {
	RuleFiles          []string `json:"rule_files"`
	EvaluationInterval string   `json:"evaluation_interval,omitempty"`
	GroupEvalOrder     []string `json:"group_eval_order,omitempty"`
	Tests              []struct {
		Name           string            `json:"name,omitempty"`
		Interval       string            `json:"interval,omitempty"`
		ExternalLabels map[string]string `json:"external_labels,omitempty"`
		ExternalURL    string            `json:"external_url,omitempty"`
		InputSeries    []struct {
			Series string `json:"series"`
			Values string `json:"values"`
		} `json:"input_series"`
		AlertRuleTests []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `json:"exp_labels,omitempty"`
				ExpAnnotations map[string]string `json:"exp_annotations,omitempty"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test,omitempty"`
		PromQLExprTests []any `json:"promql_expr_test,omitempty"`
	} `json:"tests"`
}

// TestAlertRulesAreComplete checks the rule file without Prometheus: every
// rule is an alert with a severity, a summary, a description and a runbook
// section of docs/operations.md, and the unit tests hold a firing and a
// quiet case of each.
func TestAlertRulesAreComplete(t *testing.T) {
	rules := alertRules(t)
	alerts := docSection(t, operationsDoc, alertsSection)
	if alerts == "" {
		t.Fatalf("%s has no `## %s` section", operationsDoc, alertsSection)
	}
	headings := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### (.+)$`).FindAllStringSubmatch(alerts, -1) {
		headings[anchor(m[1])] = true
	}
	for name, r := range rules {
		if r.Expr.String() == "" {
			t.Errorf("alert %s: no expr", name)
		}
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("alert %s: severity %q, want critical or warning", name, s)
		}
		for _, a := range []string{"summary", "description", "runbook"} {
			if r.Annotations[a] == "" {
				t.Errorf("alert %s: no %s annotation", name, a)
			}
		}
		want := operationsDoc + "#" + anchor(name)
		if got := r.Annotations["runbook"]; got != want {
			t.Errorf("alert %s: runbook %q, want %q", name, got, want)
		}
		if !headings[anchor(name)] {
			t.Errorf("%s, section %s: no `### %s`", operationsDoc, alertsSection, name)
		}
	}
	for h := range headings {
		if strings.HasPrefix(h, "chunkstream") && !slices.ContainsFunc(keys(rules), func(n string) bool { return anchor(n) == h }) {
			t.Errorf("%s, section %s, documents #%s, which is no alert of %s", operationsDoc, alertsSection, h, rulesFile)
		}
	}
	// The summary table: | [`Name`](#anchor) | severity | for | ... |
	row := regexp.MustCompile("(?m)^\\|\\s*\\[`(Chunkstream[A-Za-z]+)`\\]\\(#([a-z]+)\\)\\s*\\|\\s*([a-z]+)\\s*\\|\\s*([^|]*?)\\s*\\|")
	rows := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(alerts, -1) {
		rows[m[1]] = true
		r, ok := rules[m[1]]
		if !ok {
			t.Errorf("%s lists alert %s, which %s lacks", operationsDoc, m[1], rulesFile)
			continue
		}
		if m[2] != anchor(m[1]) {
			t.Errorf("%s: the row of %s links #%s, want #%s", operationsDoc, m[1], m[2], anchor(m[1]))
		}
		if m[3] != r.Labels["severity"] {
			t.Errorf("%s: %s has severity %s, the rule %s", operationsDoc, m[1], m[3], r.Labels["severity"])
		}
		wantFor := "—"
		if r.For != nil {
			wantFor = string(*r.For)
		}
		if m[4] != wantFor {
			t.Errorf("%s: %s fires after %q, the rule's for is %q", operationsDoc, m[1], m[4], wantFor)
		}
	}
	for name := range rules {
		if !rows[name] {
			t.Errorf("%s, section %s: no table row for %s", operationsDoc, alertsSection, name)
		}
	}

	data, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var rt ruleTests
	if err := decodeStrict(data, &rt); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	if !slices.Equal(rt.RuleFiles, []string{filepath.Base(rulesFile)}) {
		t.Errorf("%s: rule_files = %q, want [%s]", rulesTestFile, rt.RuleFiles, filepath.Base(rulesFile))
	}
	firing, quiet := map[string]int{}, map[string]int{}
	for _, tc := range rt.Tests {
		for _, a := range tc.AlertRuleTests {
			if _, ok := rules[a.Alertname]; !ok {
				t.Errorf("%s: test %q checks %s, which is no alert", rulesTestFile, tc.Name, a.Alertname)
			}
			if len(a.ExpAlerts) == 0 {
				quiet[a.Alertname]++
			} else {
				firing[a.Alertname]++
			}
		}
	}
	for name := range rules {
		if firing[name] == 0 || quiet[name] == 0 {
			t.Errorf("%s: alert %s has %d firing and %d quiet cases, want one of each at least", rulesTestFile, name, firing[name], quiet[name])
		}
	}
}

// anchor is the fragment GitHub gives a Markdown heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// promtool returns the path of promtool, or skips the test.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian: apt-get install prometheus)")
	}
	return p
}

func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestPromtool checks the rule file and runs its unit tests with the real
// promtool.
func TestPromtool(t *testing.T) {
	runPromtool(t, rulesDir, "check", "rules", filepath.Base(rulesFile))
	runPromtool(t, rulesDir, "test", "rules", filepath.Base(rulesTestFile))
}

// TestPromtoolCatchesAFailingRuleTest proves TestPromtool can fail: the
// unit tests run against a rule file whose SinkDown threshold is an hour
// fail.
func TestPromtoolCatchesAFailingRuleTest(t *testing.T) {
	bin := promtool(t)
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	const threshold = "> 300\n"
	if !bytes.Contains(data, []byte(threshold)) {
		t.Fatalf("%s: no %q (ChunkstreamSinkDown's threshold) to break", rulesFile, threshold)
	}
	dir := t.TempDir()
	broken := bytes.Replace(data, []byte(threshold), []byte("> 3600\n"), 1)
	tests, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string][]byte{filepath.Base(rulesFile): broken, filepath.Base(rulesTestFile): tests} {
		if err := os.WriteFile(filepath.Join(dir, name), d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "test", "rules", filepath.Base(rulesTestFile))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("promtool test rules passed with a broken rule:\n%s", out)
	}
}

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *datasourceRef `json:"datasource"`
	GridPos    struct{ H, W, X, Y int }
	Panels     []panel `json:"panels"` // a collapsed row's
	Targets    []struct {
		RefID      string         `json:"refId"`
		Expr       string         `json:"expr"`
		Datasource *datasourceRef `json:"datasource"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// dashboardPanels returns every panel but rows, rows' own panels included.
func dashboardPanels(d dashboard) []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
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

// grafanaVars replaces the dashboard's variables in a query with values
// Prometheus accepts.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$__interval", "1m", "$job", ".+")

var metricName = regexp.MustCompile(`\bchunkstream_[a-z_]+\b`)

// TestDashboard checks the dashboard: unique ids, panels within the grid
// and not overlapping, every panel querying the data source variable with
// at least one query, every selector of a chunkstream metric filtered by
// the job variable, and every metric the dashboard and the rules use
// declared by the worker.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: uid %q, title %q: want both", dashboardFile, d.UID, d.Title)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["job"] != "query" {
		t.Errorf("%s: variables %v, want datasource (datasource) and job (query)", dashboardFile, vars)
	}
	ids := map[int]bool{}
	var all []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d used twice", dashboardFile, p.ID)
		}
		ids[p.ID] = true
		if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("%s: panel %q at %+v, outside the 24-column grid", dashboardFile, p.Title, g)
		}
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			ga, gb := a.GridPos, b.GridPos
			if ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H {
				t.Errorf("%s: panels %q and %q overlap", dashboardFile, a.Title, b.Title)
			}
		}
	}
	panels := dashboardPanels(d)
	if len(panels) < 20 {
		t.Fatalf("%s: %d panels, want the throughput, latency, backlog, dead letter, embedding and sink panels", dashboardFile, len(panels))
	}
	selector := regexp.MustCompile(`\b(chunkstream_[a-z_]+)(\{[^}]*\})?`)
	for _, p := range panels {
		if p.Title == "" {
			t.Errorf("%s: panel %d has no title", dashboardFile, p.ID)
		}
		if p.Datasource == nil || p.Datasource.UID != datasourceUID {
			t.Errorf("%s: panel %q: datasource %v, want uid %s", dashboardFile, p.Title, p.Datasource, datasourceUID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s: panel %q, query %s: empty", dashboardFile, p.Title, tg.RefID)
			}
			if tg.Datasource == nil || tg.Datasource.UID != datasourceUID {
				t.Errorf("%s: panel %q, query %s: datasource %v, want uid %s", dashboardFile, p.Title, tg.RefID, tg.Datasource, datasourceUID)
			}
			for _, m := range selector.FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.Contains(m[2], jobMatcher) {
					t.Errorf("%s: panel %q: %s%s lacks %s", dashboardFile, p.Title, m[1], m[2], jobMatcher)
				}
			}
		}
	}

	// Every metric named must be one the worker declares.
	declared := declaredMetrics(t)
	used := map[string][]string{}
	for _, p := range panels {
		for _, tg := range p.Targets {
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				used[m] = append(used[m], "dashboard panel "+p.Title)
			}
		}
	}
	for name, r := range alertRules(t) {
		for _, m := range metricName.FindAllString(r.Expr.String(), -1) {
			used[m] = append(used[m], "alert "+name)
		}
	}
	for m, where := range used {
		base := m
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suf); ok && declared[b] {
				base = b
			}
		}
		if !declared[base] {
			t.Errorf("%s is used by %s, but no worker source declares it", m, strings.Join(where, ", "))
		}
	}
}

// declaredMetrics returns the metric names the main module's non-test
// sources declare: a "chunkstream_..." literal that is an argument or a
// field value (`Name: "chunkstream_...",`, `counter("chunkstream_...",`).
func declaredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	name := regexp.MustCompile(`"(chunkstream_[a-z_]+)"\s*,`)
	out := map[string]bool{}
	for _, top := range []string{"worker", "cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(repo, top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range name.FindAllSubmatch(data, -1) {
				out[string(m[1])] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 20 {
		t.Fatalf("the worker sources declare %d chunkstream metrics; their form changed?", len(out))
	}
	return out
}

// TestDashboardQueriesParse has promtool parse every dashboard query, as
// the expressions of recording rules, with the dashboard's variables
// replaced.
func TestDashboardQueriesParse(t *testing.T) {
	promtool(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range dashboardPanels(loadDashboard(t)) {
		for _, tg := range p.Targets {
			n++
			expr, err := json.Marshal(grafanaVars.Replace(tg.Expr))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "      - record: dashboard:panel_%d_%s\n        expr: %s\n", p.ID, tg.RefID, expr)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, dir, "check", "rules", "dashboard.yaml")
	t.Logf("%d dashboard queries parsed", n)
}

// promRuleText is prometheusrule.yaml as generated from the rule file:
// its groups become the PrometheusRule's spec.
func promRuleText(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("\ngroups:\n"))
	if i < 0 {
		t.Fatalf("%s: no top-level groups:", rulesFile)
	}
	var b bytes.Buffer
	b.WriteString(promRuleHeader)
	b.WriteString("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n")
	fmt.Fprintf(&b, "  name: %s\n", promRuleName)
	b.WriteString("  labels:\n    app.kubernetes.io/name: chunkstream\n    app.kubernetes.io/component: worker\nspec:\n")
	for _, line := range strings.SplitAfter(string(data[i+1:]), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return b.Bytes()
}

// TestPrometheusRuleIsGenerated checks that prometheusrule.yaml holds the
// rule file's groups (-update rewrites it).
func TestPrometheusRuleIsGenerated(t *testing.T) {
	want := promRuleText(t)
	if *update {
		if err := os.WriteFile(promRuleFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(promRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s; run `go test -run TestPrometheusRuleIsGenerated -update` in deploy/", promRuleFile, rulesFile)
	}
}

// TestMonitoringInProduction renders the production overlay: it holds the
// PrometheusRule with the rule file's groups and the dashboard ConfigMap
// with the dashboard, labelled as the Grafana sidecar of
// kube-prometheus-stack-values.yaml looks for; those values select the
// PrometheusRule and the ServiceMonitor whatever their labels and
// namespace.
func TestMonitoringInProduction(t *testing.T) {
	const dir = "overlays/production"
	objs := build(t, dir)
	pr := find[*monitoringv1.PrometheusRule](t, objs, dir, "PrometheusRule", promRuleName)
	if want := ruleFile(t); !reflect.DeepEqual(pr.Spec, want) {
		t.Errorf("%s: PrometheusRule %s's spec differs from %s", dir, promRuleName, rulesFile)
	}
	cm := find[*corev1.ConfigMap](t, objs, dir, "ConfigMap", dashboardCM)
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Data[filepath.Base(dashboardFile)]; got != string(data) {
		t.Errorf("%s: ConfigMap %s key %s is not %s (keys %v)", dir, dashboardCM, filepath.Base(dashboardFile), dashboardFile, keys(cm.Data))
	}
	v := loadValues(t, kpsValues)
	label, _ := lookup(v, "grafana.sidecar.dashboards.label")
	value, _ := lookup(v, "grafana.sidecar.dashboards.labelValue")
	if l, ok := label.(string); !ok || cm.Labels[l] != fmt.Sprint(value) {
		t.Errorf("%s: ConfigMap %s labels %v; the sidecar (%s) looks for %v=%v", dir, dashboardCM, cm.Labels, kpsValues, label, value)
	}
	if ns, _ := lookup(v, "grafana.sidecar.dashboards.searchNamespace"); ns != "ALL" && ns != cm.Namespace {
		t.Errorf("%s: the sidecar searches namespace %v, the dashboard is in %s", kpsValues, ns, cm.Namespace)
	}
	for _, k := range []string{"serviceMonitor", "rule"} {
		if got, _ := lookup(v, "prometheus.prometheusSpec."+k+"SelectorNilUsesHelmValues"); got != false {
			t.Errorf("%s: prometheus.prometheusSpec.%sSelectorNilUsesHelmValues = %v, want false (select chunkstream's, which lack the release label)", kpsValues, k, got)
		}
		if got, ok := lookup(v, "prometheus.prometheusSpec."+k+"NamespaceSelector"); !ok || !reflect.DeepEqual(got, map[string]any{}) {
			t.Errorf("%s: prometheus.prometheusSpec.%sNamespaceSelector = %v, want {} (every namespace)", kpsValues, k, got)
		}
	}
}

// hostPorts expands the host side of published ports ("9090-9092:9090",
// "127.0.0.1:4222:4222/tcp", "8222:8222").
func hostPorts(t *testing.T, svc string, ports []string) []int {
	t.Helper()
	var out []int
	for _, p := range ports {
		p, _, _ = strings.Cut(p, "/")
		parts := strings.Split(p, ":")
		if len(parts) < 2 {
			continue // container port only: a random host port
		}
		host := parts[len(parts)-2]
		lo, hi, isRange := strings.Cut(host, "-")
		var a, b int
		if _, err := fmt.Sscan(lo, &a); err != nil {
			t.Errorf("service %s: port %q: %v", svc, p, err)
			continue
		}
		b = a
		if isRange {
			if _, err := fmt.Sscan(hi, &b); err != nil || b < a {
				t.Errorf("service %s: port range %q", svc, host)
				continue
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out
}

// TestComposeHostPortsDistinct: no two services publish the same host port
// (with a profile or not: `--profile monitoring up` starts them together).
func TestComposeHostPortsDistinct(t *testing.T) {
	c := loadCompose(t)
	owner := map[int]string{}
	names := keys(c.Services)
	sort.Strings(names)
	for _, name := range names {
		for _, p := range hostPorts(t, name, c.Services[name].Ports) {
			if o, ok := owner[p]; ok {
				t.Errorf("host port %d is published by %s and %s", p, o, name)
			}
			owner[p] = name
		}
	}
	if len(owner) < 8 {
		t.Errorf("compose publishes host ports %v; the parsing missed some?", owner)
	}
}

// TestHostPortsSeeCollisions proves the check above can fail.
func TestHostPortsSeeCollisions(t *testing.T) {
	got := hostPorts(t, "x", []string{"9090-9092:9090", "127.0.0.1:9091:9090/tcp", "4222"})
	if want := []int{9090, 9091, 9092, 9091}; !slices.Equal(got, want) {
		t.Errorf("hostPorts = %v, want %v", got, want)
	}
}

// TestComposePrometheusLoadsTheRules: compose's Prometheus mounts the rule
// file where its configuration's rule_files look, and promtool accepts
// that configuration with the rules it loads.
func TestComposePrometheusLoadsTheRules(t *testing.T) {
	c := loadCompose(t)
	p := composeService1(t, c, "prometheus")
	mounts := map[string]string{} // target → source
	for _, v := range p.Volumes {
		parts := volumeParts(v)
		if len(parts) < 2 {
			continue
		}
		mounts[parts[1]] = parts[0]
		if _, err := os.Stat(filepath.Join(repo, parts[0])); err != nil {
			t.Errorf("prometheus mounts %s, which does not exist: %v", parts[0], err)
		}
	}
	configPath := ""
	for _, a := range p.Command {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			configPath = v
		}
	}
	src, ok := mounts[configPath]
	if !ok {
		t.Fatalf("prometheus --config.file=%q is not mounted (mounts %v)", configPath, mounts)
	}
	data, err := os.ReadFile(filepath.Join(repo, src))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	globs, _ := cfg["rule_files"].([]any)
	rulesMounted := ""
	for target, source := range mounts {
		for _, g := range globs {
			if ok, _ := filepath.Match(fmt.Sprint(g), target); ok {
				rulesMounted = source
			}
		}
	}
	if want := "./deploy/" + rulesFile; rulesMounted != want {
		t.Errorf("%s: rule_files %v match the mounted %q, want %s", src, globs, rulesMounted, want)
	}

	// promtool check config, with rule_files pointing at the repository's
	// rule file.
	bin := promtool(t)
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg["rule_files"] = []string{abs}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "config", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check config %s: %v\n%s", src, err, out)
	}
}
