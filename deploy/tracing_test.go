package deploy

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// composeDefault matches a Compose variable reference with a default,
// ${NAME:-default}.
var composeDefault = regexp.MustCompile(`^\$\{([A-Z0-9_]+):-([^}]*)\}$`)

// otelSetting is how a deployment file sets the tracing variables of one
// program: the value it runs with when nobody changes it.
type otelSetting map[string]string

// checkTracing requires the wiring docs/operations.md#tracing describes:
// tracing off (OTEL_TRACES_EXPORTER=none), an OTLP/HTTP endpoint on port
// 4318 ready for the day it is turned on, the program's service name, and
// a sampler docs/configuration.md lists, with a ratio from 0 to 1.
func checkTracing(t *testing.T, where, service string, env otelSetting) {
	t.Helper()
	if v := env["OTEL_TRACES_EXPORTER"]; v != "none" {
		t.Errorf("%s: OTEL_TRACES_EXPORTER = %q, want none (tracing off by default)", where, v)
	}
	u, err := url.Parse(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Port() != "4318" {
		t.Errorf("%s: OTEL_EXPORTER_OTLP_ENDPOINT = %q, want a collector's OTLP/HTTP URL on port 4318", where, env["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	if v := env["OTEL_SERVICE_NAME"]; v != service {
		t.Errorf("%s: OTEL_SERVICE_NAME = %q, want %s", where, v, service)
	}
	samplers := configRow(t, "OTEL_TRACES_SAMPLER")
	if v := env["OTEL_TRACES_SAMPLER"]; v == "" || !strings.Contains(samplers, "`"+v+"`") {
		t.Errorf("%s: OTEL_TRACES_SAMPLER = %q, not a sampler docs/configuration.md lists (%s)", where, v, samplers)
	}
	var ratio float64
	if _, err := fmt.Sscanf(env["OTEL_TRACES_SAMPLER_ARG"], "%g", &ratio); err != nil || ratio < 0 || ratio > 1 {
		t.Errorf("%s: OTEL_TRACES_SAMPLER_ARG = %q, want a ratio from 0 to 1", where, env["OTEL_TRACES_SAMPLER_ARG"])
	}
}

// configRow returns the row of docs/configuration.md whose first column
// is the variable name.
func configRow(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile("(?m)^\\|\\s*`" + name + "`\\s*\\|.*$").FindString(docTable(t, "docs/configuration.md", "Tracing"))
	if m == "" {
		t.Fatalf("docs/configuration.md's Tracing table has no row for %s", name)
	}
	return m
}

// TestComposeTracingWiring: compose's worker and producer run with
// tracing off unless the variables are set where compose runs (each
// OTEL_* a ${NAME:-default} of its own name, but the service name), their
// endpoint is the jaeger service of the tracing profile, and
// docs/operations.md says how to turn it on.
func TestComposeTracingWiring(t *testing.T) {
	c := loadCompose(t)
	jaeger := composeService1(t, c, "jaeger")
	if !strings.Contains(strings.Join(jaeger.Profiles, ","), "tracing") {
		t.Errorf("compose jaeger profiles = %v, want tracing (started only when asked)", jaeger.Profiles)
	}
	hasPorts(t, "jaeger", containerPorts(t, "jaeger", jaeger.Ports), 4318, 16686)
	for name, service := range map[string]string{"worker": "chunkstream-worker", "producer": "chunkstream-producer"} {
		env := otelSetting{}
		for k, v := range c.Services[name].Environment {
			s := fmt.Sprint(v)
			if !strings.HasPrefix(k, "OTEL_") {
				continue
			}
			if m := composeDefault.FindStringSubmatch(s); m != nil {
				if m[1] != k {
					t.Errorf("compose %s: %s = %s: it should read %s where compose runs", name, k, s, k)
				}
				s = m[2]
			} else if k != "OTEL_SERVICE_NAME" {
				t.Errorf("compose %s: %s = %q, want ${%s:-default}, so that it can be set where compose runs", name, k, s, k)
			}
			env[k] = s
		}
		checkTracing(t, "compose "+name, service, env)
		if u, err := url.Parse(env["OTEL_EXPORTER_OTLP_ENDPOINT"]); err == nil && u.Hostname() != "jaeger" {
			t.Errorf("compose %s: OTLP endpoint %s, want the jaeger service", name, u)
		}
	}
	ops := docSection(t, "docs/operations.md", "Tracing")
	for _, want := range []string{"OTEL_TRACES_EXPORTER=otlp docker compose --profile tracing up"} {
		if !strings.Contains(ops, want) {
			t.Errorf("docs/operations.md's Tracing section lacks %q", want)
		}
	}
}

// TestKubernetesTracingWiring: the worker Deployment and the backfill Job
// read the tracing variables from the ConfigMap (off, an endpoint, a
// sampler) and name their own service; the production overlay keeps it
// off; docs/operations.md says how to turn it on.
func TestKubernetesTracingWiring(t *testing.T) {
	objs := loadObjects(t)
	prod := find[*corev1.ConfigMap](t, objs, "overlays/production", "ConfigMap", "chunkstream-config")
	if v, ok := prod.Data["OTEL_TRACES_EXPORTER"]; ok && v != "none" {
		t.Errorf("production ConfigMap: OTEL_TRACES_EXPORTER = %q, want tracing off", v)
	}
	cm := find[*corev1.ConfigMap](t, objs, "base", "ConfigMap", "chunkstream-config")
	pod := func(where string, c corev1.Container, service string) {
		fromConfigMap := false
		for _, s := range c.EnvFrom {
			fromConfigMap = fromConfigMap || s.ConfigMapRef != nil && s.ConfigMapRef.Name == cm.Name
		}
		if !fromConfigMap {
			t.Errorf("%s: container %s does not read ConfigMap %s", where, c.Name, cm.Name)
		}
		env := otelSetting{}
		for k, v := range cm.Data {
			env[k] = v
		}
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "OTEL_") {
				env[e.Name] = e.Value
			}
		}
		checkTracing(t, where, service, env)
	}
	d := find[*appsv1.Deployment](t, objs, "base", "Deployment", "chunkstream-worker")
	pod("Deployment chunkstream-worker", workerContainer(t, d), "chunkstream-worker")
	j := find[*batchv1.Job](t, objs, "backfill", "Job", "chunkstream-backfill")
	pod("Job chunkstream-backfill", j.Spec.Template.Spec.Containers[0], "chunkstream-producer")

	ops := docSection(t, "docs/operations.md", "Tracing")
	for _, want := range []string{"OTEL_TRACES_EXPORTER: otlp", "chunkstream-config", "worker -local"} {
		if !strings.Contains(ops, want) {
			t.Errorf("docs/operations.md's Tracing section lacks %q", want)
		}
	}
}
