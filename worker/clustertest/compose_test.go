package clustertest

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/qdrantsink/qdranttest"
)

// composeService is the part of a docker-compose.yml service this test
// runs: the command and the environment.
type composeService struct {
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
}

// TestComposeConfigurationRuns runs the worker and the backfill producer
// of docker-compose.yml as compose would (their command and environment,
// no variable set where compose runs), with only the addresses of NATS and
// Qdrant replaced by an in-process JetStream server and the in-process
// Qdrant double, and checks that the backfilled documents end up as points
// in the collection the compose file names, and that the worker stops
// cleanly.
func TestComposeConfigurationRuns(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	runCompose(t, nil, nil)
}

// TestComposeTracing runs the compose pipeline as TestComposeConfigurationRuns
// does, tracing turned on as docs/operations.md says (OTEL_TRACES_EXPORTER=otlp
// where compose runs) and the jaeger service's address replaced by a real
// Jaeger: every backfilled document's trace must reach it, the producer's
// send span with the worker's acked delivery under it, each under the
// service name compose gives it.
func TestComposeTracing(t *testing.T) {
	testutil.OptIn(t, testutil.Processes, testutil.JaegerBin)
	jaeger := tracingtest.StartJaeger(t)
	docs := runCompose(t, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + jaeger.OTLP})
	testutil.WaitFor(t, 30*time.Second, "a trace per document with its acked delivery", func() (bool, string) {
		acked := map[string]bool{}
		for _, tr := range jaeger.Traces(t, "chunkstream-producer", producer.SpanSend, 100) {
			send, deliver := tr.Span(producer.SpanSend), tr.Span(worker.SpanDeliver)
			if deliver != nil && deliver.ChildOf(send) && tr.Service(deliver) == "chunkstream-worker" &&
				deliver.Tag("chunkstream.outcome") == string(worker.OutcomeAcked) {
				acked[path.Base(send.Tag("chunkstream.doc_id"))] = true
			}
		}
		for _, id := range docs {
			if !acked[path.Base(id)] {
				return false, fmt.Sprintf("%s has none (%d of %d)", id, len(acked), len(docs))
			}
		}
		return true, ""
	})
}

// composeVar is a variable reference with a default in docker-compose.yml.
var composeVar = regexp.MustCompile(`\$\{([A-Z0-9_]+):-([^}]*)\}`)

// composeEnv is a service's environment as compose passes it: each
// ${NAME:-default} replaced by host[NAME], or by its default when host
// lacks NAME.
func composeEnv(env, host map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = composeVar.ReplaceAllStringFunc(v, func(ref string) string {
			m := composeVar.FindStringSubmatch(ref)
			if h, ok := host[m[1]]; ok {
				return h
			}
			return m[2]
		})
	}
	return out
}

// runCompose runs compose's worker and backfill producer with host set
// where compose runs and the addresses of compose's network replaced by
// in-process servers (and by network, for the variables it names), until
// every backfilled document is a point; it returns the documents' names.
func runCompose(t *testing.T, host, network map[string]string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	w, p := compose.Services["worker"], compose.Services["producer"]
	if w.Environment["CHUNKSTREAM_SINK"] != "qdrant" {
		t.Fatalf("compose worker CHUNKSTREAM_SINK = %q, want qdrant", w.Environment["CHUNKSTREAM_SINK"])
	}

	srv := jstest.Start(t, t.TempDir(), -1)
	q := qdranttest.Start(t)

	// Replace only what names compose's network; everything else is the
	// compose file's.
	replace := func(env map[string]string, k, v string) {
		t.Helper()
		if _, ok := env[k]; !ok {
			t.Fatalf("compose environment lacks %s", k)
		}
		env[k] = v
	}
	wenv := composeEnv(w.Environment, host)
	for k, v := range network {
		replace(wenv, k, v)
	}
	replace(wenv, "NATS_URL", srv.ClientURL())
	replace(wenv, "CHUNKSTREAM_QDRANT_ADDR", q.Addr())
	replace(wenv, "CHUNKSTREAM_METRICS_ADDR", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)))
	if len(w.Command) != 1 || w.Command[0] != "worker" {
		t.Fatalf("compose worker command = %q", w.Command)
	}
	wp := startProcess(t, wenv)
	wp.waitRunning(t, "compose worker ready")

	// The folder compose mounts at /corpus.
	corpus := t.TempDir()
	docs := map[string]string{
		"a.md":         "# A\n\nFirst document.\n\n## Part\n\nMore text here.\n",
		"b.md":         "# B\n\nSecond document, one paragraph.\n",
		"guide/c.md":   "# C\n\n" + strings.Repeat("A sentence about chunking. ", 200) + "\n",
		"ignored.json": `{"not": "markdown"}`,
	}
	for name, content := range docs {
		path := filepath.Join(corpus, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for _, a := range p.Command[1:] {
		if a == "/corpus" {
			a = corpus
		}
		args = append(args, a)
	}
	if p.Command[0] != "producer" || !strings.Contains(strings.Join(args, " "), corpus) {
		t.Fatalf("compose producer command = %q: it does not backfill the mounted folder", p.Command)
	}
	penv := composeEnv(p.Environment, host)
	for k, v := range network {
		replace(penv, k, v)
	}
	replace(penv, "NATS_URL", srv.ClientURL())
	pp := startCommand(t, testutil.Binary(t, "./cmd/producer"), args, penv)
	if code := pp.waitExit(t, 60*time.Second); code != 0 {
		t.Fatalf("compose producer exit status %d\n%s", code, pp.out.String())
	}

	collection := w.Environment["CHUNKSTREAM_QDRANT_COLLECTION"]
	want := map[string]bool{}
	for name := range docs {
		if strings.HasSuffix(name, ".md") {
			want[name] = false
		}
	}
	testutil.WaitFor(t, 60*time.Second, "points of every backfilled document", func() (bool, string) {
		seen := map[string]bool{}
		for _, pt := range q.Points(collection) {
			seen[pt.GetPayload()["doc_id"].GetStringValue()] = true
		}
		var missing []string
		for id := range want {
			found := false
			for s := range seen {
				found = found || strings.HasSuffix(s, id)
			}
			if !found {
				missing = append(missing, id)
			}
		}
		return len(missing) == 0, fmt.Sprintf("missing %q; collection %q holds %d points of %d documents", missing, collection, len(q.Points(collection)), len(seen))
	})

	wp.cmd.Process.Signal(syscall.SIGTERM)
	if code := wp.waitExit(t, 40*time.Second); code != 0 {
		t.Errorf("compose worker exit status after SIGTERM = %d\n%s", code, wp.out.String())
	}
	return slices.Sorted(maps.Keys(want))
}

// TestKubernetesConfigMapRuns starts the worker with the environment of
// the Kubernetes base ConfigMap (deploy/base/configmap.yaml), the NATS and
// Qdrant addresses replaced as above: it must become ready and stop on
// SIGTERM well within the Deployment's grace period.
func TestKubernetesConfigMapRuns(t *testing.T) {
	testutil.OptIn(t, testutil.Processes)
	root := testutil.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "deploy", "base", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	srv := jstest.Start(t, t.TempDir(), -1)
	q := qdranttest.Start(t)
	env := cm.Data
	for k, v := range map[string]string{
		"NATS_URL":                 srv.ClientURL(),
		"CHUNKSTREAM_QDRANT_ADDR":  q.Addr(),
		"CHUNKSTREAM_METRICS_ADDR": fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)),
	} {
		if _, ok := env[k]; !ok {
			t.Fatalf("ConfigMap lacks %s", k)
		}
		env[k] = v
	}
	p := startProcess(t, env)
	p.waitRunning(t, "worker ready")
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.waitExit(t, 40*time.Second); code != 0 {
		t.Errorf("exit status after SIGTERM = %d\n%s", code, p.out.String())
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}
