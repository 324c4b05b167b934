package deploy

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// loadValues parses a Helm values file.
func loadValues(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile("helm/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		t.Fatalf("helm/%s: %v", file, err)
	}
	return v
}

// lookup follows a dotted key path through nested maps.
func lookup(v map[string]any, path string) (any, bool) {
	var cur any = v
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func natsMonitorPort(t *testing.T) int {
	t.Helper()
	v, ok := lookup(loadValues(t, "nats-values.yaml"), "config.monitor.port")
	if !ok {
		t.Fatal("nats-values.yaml: no config.monitor.port")
	}
	f, _ := v.(float64)
	return int(f)
}

// TestHelmValuesHoldReadmeKeys checks every row of the Helm values table
// of docs/deployment.md (and of the README while it has one):
// | `file` | `dotted.key` | `value` |.
func TestHelmValuesHoldReadmeKeys(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\|\\s*`([a-z-]+-values\\.yaml)`\\s*\\|\\s*`([A-Za-z0-9_.]+)`\\s*\\|\\s*`([^`]*)`")
	for where, sec := range docSections(t, "docs/deployment.md", "Kubernetes", "Deploy on Kubernetes") {
		rows := row.FindAllStringSubmatch(sec, -1)
		if len(rows) < 6 {
			t.Fatalf("%s Helm values table has %d rows, want at least 6", where, len(rows))
		}
		for _, r := range rows {
			v, ok := lookup(loadValues(t, r[1]), r[2])
			if !ok {
				t.Errorf("%s names %s key %s, which the file does not hold", where, r[1], r[2])
				continue
			}
			if got := fmt.Sprint(v); got != r[3] {
				t.Errorf("%s %s = %s, %s says %s", r[1], r[2], got, where, r[3])
			}
		}
	}
}

func TestNATSValuesRunAThreeNodeJetStreamCluster(t *testing.T) {
	v := loadValues(t, "nats-values.yaml")
	want := map[string]any{
		"config.cluster.enabled":                 true,
		"config.cluster.replicas":                float64(3),
		"config.jetstream.enabled":               true,
		"config.jetstream.fileStore.enabled":     true,
		"config.jetstream.fileStore.pvc.enabled": true,
		"config.monitor.enabled":                 true,
		"config.nats.tls.enabled":                true,
	}
	for k, w := range want {
		if got, ok := lookup(v, k); !ok || got != w {
			t.Errorf("nats-values.yaml %s = %v, want %v", k, got, w)
		}
	}
	if s, _ := lookup(v, "config.jetstream.fileStore.pvc.size"); s == nil || s == "" {
		t.Errorf("nats-values.yaml: no PVC size")
	}
	// Secrets come from the environment, never the values file.
	users, _ := lookup(v, "config.merge.authorization.users")
	list, _ := users.([]any)
	if len(list) == 0 {
		t.Fatalf("nats-values.yaml: no authorization users")
	}
	for _, u := range list {
		m, _ := u.(map[string]any)
		pw := fmt.Sprint(m["password"])
		env := regexp.MustCompile(`^<< \$([A-Z0-9_]+) >>$`).FindStringSubmatch(pw)
		if env == nil {
			t.Errorf("nats-values.yaml: user %v has a literal password; use << $VAR >> from container.env", m["user"])
			continue
		}
		if _, ok := lookup(v, "container.env."+env[1]+".valueFrom.secretKeyRef.name"); !ok {
			t.Errorf("nats-values.yaml: password variable %s does not come from a Secret", env[1])
		}
	}
}

func TestQdrantValues(t *testing.T) {
	v := loadValues(t, "qdrant-values.yaml")
	if _, ok := lookup(v, "apiKey.valueFrom.secretKeyRef.name"); !ok {
		t.Errorf("qdrant-values.yaml: apiKey must come from a Secret (apiKey.valueFrom.secretKeyRef)")
	}
	if s, _ := lookup(v, "persistence.size"); s == nil {
		t.Errorf("qdrant-values.yaml: no persistence.size")
	}
	tag, _ := lookup(v, "image.tag")
	m := regexp.MustCompile(`^v1\.(\d+)\.`).FindStringSubmatch(fmt.Sprint(tag))
	if m == nil {
		t.Fatalf("qdrant-values.yaml image.tag = %v, want v1.x.y", tag)
	}
	if minor, _ := strconv.Atoi(m[1]); minor < 16 {
		t.Errorf("qdrant image %v: the Qdrant sink needs >= v1.16 (update_filter)", tag)
	}
}
