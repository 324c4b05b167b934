package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	Cmd  string // upper case: FROM, RUN, ...
	Args string
}

func loadDockerfile(t *testing.T) []instruction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trim := strings.TrimSpace(line)
		if cur.Len() == 0 && (trim == "" || strings.HasPrefix(trim, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trim, "#") {
			continue // comment inside a continuation
		}
		if strings.HasSuffix(trim, "\\") {
			cur.WriteString(strings.TrimSuffix(trim, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(trim)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// stages splits instructions at each FROM.
func stages(ins []instruction) [][]instruction {
	var out [][]instruction
	for _, in := range ins {
		if in.Cmd == "FROM" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], in)
		}
	}
	return out
}

func goDirective(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return m[1]
}

func TestDockerfile(t *testing.T) {
	ins := loadDockerfile(t)
	st := stages(ins)
	if len(st) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a builder and a runtime", len(st))
	}
	goVer := goDirective(t)
	args := map[string]string{}
	for _, in := range ins {
		if in.Cmd == "ARG" {
			k, v, _ := strings.Cut(in.Args, "=")
			args[k] = v
		}
		if in.Cmd == "FROM" {
			break
		}
	}
	from := st[0][0].Args
	from = strings.ReplaceAll(from, "${GO_VERSION}", args["GO_VERSION"])
	if !strings.Contains(from, "golang:"+goVer) {
		t.Errorf("builder FROM %q, want golang:%s (go.mod)", from, goVer)
	}

	var build string
	var cgoOff, modCache, buildCache bool
	for _, in := range st[0] {
		if in.Cmd == "ENV" && strings.Contains(in.Args, "CGO_ENABLED=0") {
			cgoOff = true
		}
		if in.Cmd == "RUN" {
			if strings.Contains(in.Args, "--mount=type=cache,target=/go/pkg/mod") {
				modCache = true
			}
			if strings.Contains(in.Args, "--mount=type=cache,target=/root/.cache/go-build") {
				buildCache = true
			}
			if strings.Contains(in.Args, "go build") {
				build = in.Args
				if strings.Contains(in.Args, "CGO_ENABLED=0") {
					cgoOff = true
				}
			}
		}
	}
	if !cgoOff {
		t.Errorf("builder does not set CGO_ENABLED=0: binaries would not be static")
	}
	if !modCache || !buildCache {
		t.Errorf("builder cache mounts: module cache %v, build cache %v; want both", modCache, buildCache)
	}
	if !strings.Contains(build, "-trimpath") {
		t.Errorf("go build lacks -trimpath: %q", build)
	}
	for _, cmd := range []string{"worker", "producer", "chunk"} {
		if !strings.Contains(build, "./cmd/"+cmd) {
			t.Errorf("go build does not build ./cmd/%s", cmd)
		}
		if ents, err := filepath.Glob(filepath.Join(repo, "cmd", cmd, "*.go")); err != nil || len(ents) == 0 {
			t.Errorf("the Dockerfile builds ./cmd/%s, which has no Go files yet", cmd)
		}
	}

	final := st[len(st)-1]
	base := final[0].Args
	if base != "scratch" && !strings.Contains(base, "distroless") {
		t.Errorf("runtime base %q, want scratch or distroless", base)
	}
	var user, health, expose string
	labels := ""
	for _, in := range final {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "HEALTHCHECK":
			health = in.Args
		case "EXPOSE":
			expose = in.Args
		case "LABEL":
			labels += in.Args
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if uid == "" || uid == "0" || uid == "root" {
		t.Errorf("runtime USER = %q, want a non-root user", user)
	}
	m := regexp.MustCompile(`CMD \["([^"]+)", "([^"]+)"\]`).FindStringSubmatch(health)
	if m == nil || filepath.Base(m[1]) != "worker" {
		t.Errorf("HEALTHCHECK = %q, want CMD [\".../worker\", \"-healthcheck\"]", health)
	} else {
		checkFlags(t, "cmd/worker", []string{m[2]})
		if m[2] != "-healthcheck" {
			t.Errorf("HEALTHCHECK runs worker %s, want -healthcheck", m[2])
		}
	}
	if !slices.Contains(strings.Fields(expose), strconv.Itoa(metricsPort(t))) {
		t.Errorf("EXPOSE %q, want the metrics port %d", expose, metricsPort(t))
	}
	for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.source", "org.opencontainers.image.version"} {
		if !strings.Contains(labels, l+"=") {
			t.Errorf("runtime image lacks label %s", l)
		}
	}
}

// TestDockerignore checks that the build context keeps what `go build`
// needs and drops the rest.
func TestDockerignore(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repo, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var pats []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "!") {
			pats = append(pats, l)
		}
	}
	ignored := func(p string) bool {
		for _, pat := range pats {
			pat = strings.TrimPrefix(pat, "**/")
			if ok, _ := filepath.Match(pat, p); ok {
				return true
			}
			if ok, _ := filepath.Match(pat, filepath.Base(p)); ok && strings.HasPrefix(strings.TrimSpace(pat), "*") {
				return true
			}
		}
		return false
	}
	for _, keep := range []string{"go.mod", "go.sum", "cmd", "worker", "chunking", "messages", "internal", "worker/sink.go"} {
		if ignored(keep) {
			t.Errorf(".dockerignore drops %s, which the build needs", keep)
		}
	}
	for _, drop := range []string{".git", "deploy"} {
		if !ignored(drop) {
			t.Errorf(".dockerignore keeps %s in the build context", drop)
		}
	}
}
