package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// composeFile is the subset of the Compose specification docker-compose.yml
// may use; any other key is an error (a misspelt key would be ignored by
// some Compose versions).
type composeFile struct {
	Name     string                    `json:"name,omitempty"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes,omitempty"`
	Networks map[string]any            `json:"networks,omitempty"`
	Secrets  map[string]any            `json:"secrets,omitempty"`
	Configs  map[string]any            `json:"configs,omitempty"`
}

// composeService is a Compose service, the keys of the specification that
// a file like ours would plausibly use.
type composeService struct {
	Image           string         `json:"image,omitempty"`
	Build           any            `json:"build,omitempty"`
	Command         []string       `json:"command,omitempty"`
	Entrypoint      []string       `json:"entrypoint,omitempty"`
	Environment     map[string]any `json:"environment,omitempty"`
	EnvFile         any            `json:"env_file,omitempty"`
	Ports           []string       `json:"ports,omitempty"`
	Expose          []string       `json:"expose,omitempty"`
	Volumes         []string       `json:"volumes,omitempty"`
	Tmpfs           []string       `json:"tmpfs,omitempty"`
	Profiles        []string       `json:"profiles,omitempty"`
	Deploy          *composeDeploy `json:"deploy,omitempty"`
	DependsOn       map[string]any `json:"depends_on,omitempty"`
	Healthcheck     map[string]any `json:"healthcheck,omitempty"`
	Restart         string         `json:"restart,omitempty"`
	Labels          map[string]any `json:"labels,omitempty"`
	StopGracePeriod string         `json:"stop_grace_period,omitempty"`
	StopSignal      string         `json:"stop_signal,omitempty"`
	ReadOnly        bool           `json:"read_only,omitempty"`
	User            string         `json:"user,omitempty"`
	Networks        any            `json:"networks,omitempty"`
	Secrets         any            `json:"secrets,omitempty"`
	Configs         any            `json:"configs,omitempty"`
	Ulimits         any            `json:"ulimits,omitempty"`
	Logging         any            `json:"logging,omitempty"`
	SecurityOpt     []string       `json:"security_opt,omitempty"`
	CapDrop         []string       `json:"cap_drop,omitempty"`
	Init            bool           `json:"init,omitempty"`
	WorkingDir      string         `json:"working_dir,omitempty"`
}

type composeDeploy struct {
	Replicas      *int           `json:"replicas,omitempty"`
	Resources     map[string]any `json:"resources,omitempty"`
	RestartPolicy map[string]any `json:"restart_policy,omitempty"`
	UpdateConfig  map[string]any `json:"update_config,omitempty"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// containerPorts returns the container side of each published port
// ("8222:8222", "9090-9092:9090", "127.0.0.1:4222:4222/tcp").
func containerPorts(t *testing.T, svc string, ports []string) []int {
	t.Helper()
	var out []int
	for _, p := range ports {
		p, _, _ = strings.Cut(p, "/")
		parts := strings.Split(p, ":")
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			t.Errorf("service %s: port %q: %v", svc, p, err)
			continue
		}
		out = append(out, n)
	}
	return out
}

func composeService1(t *testing.T, c composeFile, name string) composeService {
	t.Helper()
	s, ok := c.Services[name]
	if !ok {
		t.Fatalf("docker-compose.yml has no service %s", name)
	}
	return s
}

func TestComposeServices(t *testing.T) {
	c := loadCompose(t)

	nats := composeService1(t, c, "nats")
	cmd := strings.Join(nats.Command, " ")
	for _, want := range []string{"-js", "-sd /data", "-m 8222"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("nats command %q lacks %q", cmd, want)
		}
	}
	namedVolume(t, c, "nats", nats, "/data")
	hasPorts(t, "nats", containerPorts(t, "nats", nats.Ports), 4222, 8222)

	qd := composeService1(t, c, "qdrant")
	namedVolume(t, c, "qdrant", qd, "/qdrant/storage")
	hasPorts(t, "qdrant", containerPorts(t, "qdrant", qd.Ports), 6333, 6334)

	w := composeService1(t, c, "worker")
	if w.Deploy == nil || w.Deploy.Replicas == nil || *w.Deploy.Replicas < 2 {
		t.Errorf("worker deploy.replicas = %v, want several", w.Deploy)
	}
	env := func(k string) string { return fmt.Sprint(w.Environment[k]) }
	if env("CHUNKSTREAM_SINK") != "qdrant" || env("CHUNKSTREAM_QDRANT_ADDR") != "qdrant:6334" {
		t.Errorf("worker sink env = %q %q, want qdrant, qdrant:6334", env("CHUNKSTREAM_SINK"), env("CHUNKSTREAM_QDRANT_ADDR"))
	}
	if env("NATS_URL") != "nats://nats:4222" {
		t.Errorf("worker NATS_URL = %q", env("NATS_URL"))
	}
	port := metricsPort(t)
	if addr, ok := w.Environment["CHUNKSTREAM_METRICS_ADDR"]; ok && addr != fmt.Sprintf(":%d", port) {
		t.Errorf("worker CHUNKSTREAM_METRICS_ADDR = %v, default port %d", addr, port)
	}
	hasPorts(t, "worker", containerPorts(t, "worker", w.Ports), port)
	if fmt.Sprint(w.Labels["prometheus.io/port"]) != strconv.Itoa(port) || fmt.Sprint(w.Labels["prometheus.io/scrape"]) != "true" {
		t.Errorf("worker labels %v: want prometheus.io/scrape true, port %d", w.Labels, port)
	}
	grace, err := time.ParseDuration(w.StopGracePeriod)
	if drain := workerDuration(t, "CHUNKSTREAM_DRAIN_TIMEOUT"); err != nil || grace <= drain {
		t.Errorf("worker stop_grace_period = %q, must exceed the drain timeout %v", w.StopGracePeriod, drain)
	}
	if len(w.Command) > 0 && w.Command[0] != "worker" {
		t.Errorf("worker command = %q", w.Command)
	}

	p := composeService1(t, c, "producer")
	if !slices.Contains(p.Profiles, "backfill") {
		t.Errorf("producer profiles = %q, want backfill (one-shot, not started by `up`)", p.Profiles)
	}
	if len(p.Command) == 0 || p.Command[0] != "producer" {
		t.Fatalf("producer command = %q", p.Command)
	}
	checkFlags(t, "cmd/producer", p.Command[1:])
	mounted := false
	for _, v := range p.Volumes {
		parts := volumeParts(v)
		if len(parts) >= 2 && slices.Contains(p.Command, parts[1]) {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("producer volumes %q: the folder it backfills is not mounted", p.Volumes)
	}
	if p.Restart != "no" && p.Restart != "" {
		t.Errorf("producer restart = %q: a one-shot job must not restart", p.Restart)
	}
	for _, name := range []string{"worker", "producer"} {
		if img := c.Services[name].Image; !strings.HasPrefix(img, "chunkstream/chunkstream:") {
			t.Errorf("%s image = %q, want chunkstream/chunkstream:<tag>", name, img)
		}
	}
}

func namedVolume(t *testing.T, c composeFile, svc string, s composeService, target string) {
	t.Helper()
	for _, v := range s.Volumes {
		parts := volumeParts(v)
		if len(parts) >= 2 && parts[1] == target {
			if _, ok := c.Volumes[parts[0]]; !ok {
				t.Errorf("%s: volume %q for %s is not a declared named volume", svc, parts[0], target)
			}
			return
		}
	}
	t.Errorf("%s: nothing persistent mounted at %s", svc, target)
}

// volumeParts splits a short volume syntax "source:target[:mode]", where
// the source may hold a ${VAR:-default} interpolation.
func volumeParts(v string) []string {
	var vars []string
	v = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllStringFunc(v, func(m string) string {
		vars = append(vars, m)
		return "\x00"
	})
	parts := strings.Split(v, ":")
	for i := range parts {
		for strings.Contains(parts[i], "\x00") && len(vars) > 0 {
			parts[i] = strings.Replace(parts[i], "\x00", vars[0], 1)
			vars = vars[1:]
		}
	}
	return parts
}

func hasPorts(t *testing.T, svc string, got []int, want ...int) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s publishes container ports %v, want %d", svc, got, w)
		}
	}
}

// TestComposeEnvironmentIsConfigured checks that every variable the compose
// file sets on the chunkstream programs is one they read (their env tags)
// and one in the configuration tables (docs/configuration.md).
func TestComposeEnvironmentIsConfigured(t *testing.T) {
	c := loadCompose(t)
	known := knownEnv(t)
	table := configEnvTable(t)
	for _, name := range []string{"worker", "producer"} {
		for k := range c.Services[name].Environment {
			if !known[k] {
				t.Errorf("compose %s sets %s, which no program reads", name, k)
			}
			if len(table) > 0 && !table[k] {
				t.Errorf("compose %s sets %s, which the configuration tables lack", name, k)
			}
		}
	}
}

// TestComposeMatchesReadme checks the compose table of docs/deployment.md
// (and of the README while it has one):
// | `service` | `image` | `port`, `port` |.
func TestComposeMatchesReadme(t *testing.T) {
	c := loadCompose(t)
	row := regexp.MustCompile("(?m)^\\|\\s*`([a-z]+)`\\s*\\|\\s*`([^`]+)`\\s*\\|([^|]*)\\|")
	for where, sec := range docSections(t, "docs/deployment.md", "Docker Compose", "Docker Compose") {
		rows := row.FindAllStringSubmatch(sec, -1)
		if len(rows) < 4 {
			t.Fatalf("%s compose table has %d rows, want nats, qdrant, worker, producer", where, len(rows))
		}
		for _, r := range rows {
			s, ok := c.Services[r[1]]
			if !ok {
				t.Errorf("%s names compose service %s, which docker-compose.yml lacks", where, r[1])
				continue
			}
			if s.Image != r[2] {
				t.Errorf("compose %s image = %q, %s says %q", r[1], s.Image, where, r[2])
			}
			got := containerPorts(t, r[1], s.Ports)
			for _, m := range regexp.MustCompile("`(\\d+)`").FindAllStringSubmatch(r[3], -1) {
				n, _ := strconv.Atoi(m[1])
				if !slices.Contains(got, n) {
					t.Errorf("%s says compose %s serves port %d; it publishes %v", where, r[1], n, got)
				}
			}
		}
	}
}
