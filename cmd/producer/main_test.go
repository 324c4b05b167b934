package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/internal/jstest"
	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/internal/tracing/tracingtest"
	"github.com/chunkstream/chunkstream/messages"
	"github.com/chunkstream/chunkstream/topology"
	"github.com/chunkstream/chunkstream/worker"
)

// TestMain removes the binaries the process tests build.
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// testServer starts an in-process JetStream server with the worker's
// topology and returns its URL and the INGEST stream.
func testServer(t *testing.T) (string, jetstream.Stream) {
	t.Helper()
	ns := jstest.Start(t, t.TempDir(), -1)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	top, err := worker.Setup(context.Background(), js, worker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return ns.ClientURL(), top.Ingest
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// envOf is the environment m (with CHUNKSTREAM_TEST_TRACING=1, traced:
// tracingtest.Lookup).
func envOf(m map[string]string) func(string) (string, bool) {
	return tracingtest.Lookup(func(k string) (string, bool) { v, ok := m[k]; return v, ok })
}

func TestProducer(t *testing.T) {
	url, ingest := testServer(t)
	ctx := context.Background()
	dir := writeTree(t, map[string]string{"a.md": "# A", "sub/b.mdx": "# B", ".hidden/c.md": "x", "notes.csv": "t"})
	single := filepath.Join(dir, "notes.csv")
	var stdout, stderr bytes.Buffer
	environ := envOf(map[string]string{"NATS_URL": url})
	if code := run(ctx, []string{"-subject", "ingest.test", "-progress=false", dir, single}, nil, &stdout, &stderr, environ); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "3 documents: 3 sent") {
		t.Errorf("summary = %q, want 3 documents sent", stderr.String())
	}
	info, _ := ingest.Info(ctx)
	if info.State.Msgs != 3 {
		t.Fatalf("INGEST holds %d, want 3", info.State.Msgs)
	}
	ids := map[string]bool{}
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := ingest.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		req, err := messages.DecodeIngest(m.Header.Get(messages.HeaderContentType), m.Data)
		if err != nil || req.Validate() != nil {
			t.Fatalf("request %d: %v", seq, err)
		}
		if m.Subject != "ingest.test" || !strings.HasPrefix(m.Header.Get(messages.HeaderMsgID), req.ID+"@"+messages.ContentVersion(req.Content)+"@") {
			t.Errorf("request %d: subject %s, msg id %s", seq, m.Subject, m.Header.Get(messages.HeaderMsgID))
		}
		if req.Chunker != "" {
			t.Errorf("request %d names chunker %q without -chunker", seq, req.Chunker)
		}
		ids[req.ID] = true
	}
	if !ids["a.md"] || !ids["sub/b.mdx"] || !ids["notes.csv"] {
		t.Errorf("document ids = %v", ids)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{filepath.Join(dir, "missing")}, 1},
		{nil, 2},
		{[]string{"-stdin", dir}, 2},
		{[]string{"-rate", "-1", dir}, 2},
		{[]string{"-options", "{", dir}, 2},
		{[]string{"-options", `{"no_such_option":1}`, dir}, 2},
		{[]string{"-max-chunk-size", "0", "-chunker", "email", dir}, 2},
		{[]string{"-format", "docx", dir}, 2},
		{[]string{"-subject", "nowhere.docs", dir}, 1},
		{[]string{"-max-doc-bytes", "0", dir}, 2},
		{[]string{"-retry-for", "-1s", dir}, 2},
	} {
		stderr.Reset()
		if code := run(ctx, append([]string{"-progress=false"}, tc.args...), nil, &stdout, &stderr, environ); code != tc.want {
			t.Errorf("run(%q) = %d, want %d; stderr %s", tc.args, code, tc.want, stderr.String())
		}
	}
}

// TestFlagBeatsVariable: every setting is a variable, and a flag beats it.
func TestFlagBeatsVariable(t *testing.T) {
	url, _ := testServer(t)
	ctx := context.Background()
	dir := writeTree(t, map[string]string{"a.md": "# A", "b.csv": "B"})
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"variable", map[string]string{"CHUNKSTREAM_PRODUCER_ID_PREFIX": "env/"}, nil, "upsert\tenv/a.md\t3\n"},
		{"flag beats variable", map[string]string{"CHUNKSTREAM_PRODUCER_ID_PREFIX": "env/"}, []string{"-id-prefix", "flag/"}, "upsert\tflag/a.md\t3\n"},
		{"ext variable", map[string]string{"CHUNKSTREAM_PRODUCER_EXT": ".csv"}, nil, "upsert\tb.csv\t1\n"},
		{"dir variable", map[string]string{"CHUNKSTREAM_PRODUCER_DIR": dir, "CHUNKSTREAM_PRODUCER_EXT": "md"}, nil, "upsert\ta.md\t3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			environ := map[string]string{"NATS_URL": url, "CHUNKSTREAM_PRODUCER_DRY_RUN": "true", "CHUNKSTREAM_PRODUCER_PROGRESS": "false"}
			for k, v := range tc.env {
				environ[k] = v
			}
			args := tc.args
			if tc.env["CHUNKSTREAM_PRODUCER_DIR"] == "" {
				args = append(args, dir)
			}
			var stdout, stderr bytes.Buffer
			if code := run(ctx, args, nil, &stdout, &stderr, envOf(environ)); code != 0 {
				t.Fatalf("run = %d: %s", code, stderr.String())
			}
			if stdout.String() != tc.want {
				t.Errorf("dry run lists %q, want %q", stdout.String(), tc.want)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	url, ingest := testServer(t)
	ctx := context.Background()
	in := "{\"v\":1,\"id\":\"a.md\",\"content\":\"# A\"}\n{oops\n{\"v\":1,\"id\":\"b.md\",\"op\":\"delete\"}\n"
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-stdin", "-progress=false"}, strings.NewReader(in), &stdout, &stderr, envOf(map[string]string{"NATS_URL": url}))
	if code != 1 {
		t.Errorf("run = %d, want 1 (a bad line)", code)
	}
	if !strings.Contains(stderr.String(), "line 2: ") || !strings.Contains(stderr.String(), "2 sent (1 deletes") {
		t.Errorf("stderr = %s", stderr.String())
	}
	if info, _ := ingest.Info(ctx); info.State.Msgs != 2 {
		t.Errorf("INGEST holds %d, want 2", info.State.Msgs)
	}
}

// TestEnvDefaults: the NATS and topology defaults are the shared ones,
// and they validate.
func TestEnvDefaults(t *testing.T) {
	var c config
	if err := loadEnv(&c, envOf(nil)); err != nil {
		t.Fatal(err)
	}
	if c.NATS != natsconn.DefaultConfig() {
		t.Errorf("NATS defaults = %+v, want %+v", c.NATS, natsconn.DefaultConfig())
	}
	if !reflect.DeepEqual(c.Config, topology.DefaultConfig()) {
		t.Errorf("topology defaults = %+v, want %+v", c.Config, topology.DefaultConfig())
	}
	if err := c.validate(nil); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

// TestEveryFlagHasAVariable: each flag's usage names a variable of config
// (the chunker option flags excepted: -options is their variable; and
// -all and -yes, the scope and confirmation of -delete-missing, which
// belong to one command line, never to an environment), and each
// variable but the secrets and the topology settings the producer does
// not act on has a flag.
func TestEveryFlagHasAVariable(t *testing.T) {
	params, err := env.GetFieldParams(&config{})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := env.GetFieldParams(&topology.Config{})
	if err != nil {
		t.Fatal(err)
	}
	envOnly := map[string]bool{"CHUNKSTREAM_NATS_PASSWORD": true, "CHUNKSTREAM_NATS_TOKEN": true, "CHUNKSTREAM_PRODUCER_CHUNKER": true}
	for _, p := range topo {
		envOnly[p.Key] = !producerTopology[p.Key]
	}
	if len(producerTopology) != 5 || envOnly["CHUNKSTREAM_OBJECTS_TTL"] || !envOnly["CHUNKSTREAM_ACK_WAIT"] {
		t.Fatalf("producerTopology = %v, want the buckets, TTL, replicas and set-up timeout", producerTopology)
	}
	vars := map[string]bool{}
	for _, p := range params {
		vars[p.Key] = true
	}
	var c config
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	bindFlags(fs, &c)
	re := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`)
	named := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		m := re.FindStringSubmatch(f.Usage)
		if f.Name == "all" || f.Name == "yes" {
			if m != nil {
				t.Errorf("flag -%s names variable %s: a confirmation must be a flag only", f.Name, m[1])
			}
			return
		}
		if m == nil || !vars[m[1]] {
			t.Errorf("flag -%s: usage %q names no variable of config", f.Name, f.Usage)
			return
		}
		named[m[1]] = true
	})
	for v := range vars {
		if !named[v] && !envOnly[v] {
			t.Errorf("variable %s has no flag", v)
		}
		if named[v] && envOnly[v] {
			t.Errorf("variable %s has a flag; it is environment only for the producer", v)
		}
	}
}

// TestMaxDocBytes: a file over -max-doc-bytes is refused with its name,
// size and the limit, counted as failed (exit 1); the others are sent.
func TestMaxDocBytes(t *testing.T) {
	url, ingest := testServer(t)
	ctx := context.Background()
	dir := writeTree(t, map[string]string{"a.md": "# A", "big.md": strings.Repeat("x", 1001)})
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"-max-doc-bytes", "1000"}},
		{"variable", map[string]string{"CHUNKSTREAM_MAX_DOC_BYTES": "1000"}, []string{"-force"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			environ := map[string]string{"NATS_URL": url}
			for k, v := range tc.env {
				environ[k] = v
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, append(append([]string{"-progress=false"}, tc.args...), dir), nil, &stdout, &stderr, envOf(environ))
			if code != 1 {
				t.Errorf("run = %d, want 1; stderr %s", code, stderr.String())
			}
			for _, want := range []string{`"big.md" (` + filepath.Join(dir, "big.md") + ")", "1001 bytes", "limit of 1000 bytes", "1 sent", "1 failed"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
				}
			}
		})
	}
	if info, _ := ingest.Info(ctx); info.State.Msgs != 2 {
		t.Errorf("INGEST holds %d, want a.md twice", info.State.Msgs)
	}
}

// TestDuplicateWindowWarning: -retry-for plus -ack-timeout reaching
// INGEST's duplicate window (2m) is warned about; the defaults are not.
func TestDuplicateWindowWarning(t *testing.T) {
	url, _ := testServer(t)
	dir := writeTree(t, map[string]string{"a.md": "# A"})
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{nil, false},
		{[]string{"-retry-for", "115s"}, true},
	} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"-progress=false", "-force"}, tc.args...), dir)
		if code := run(context.Background(), args, nil, &stdout, &stderr, envOf(map[string]string{"NATS_URL": url})); code != 0 {
			t.Fatalf("run(%q) = %d: %s", args, code, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "duplicate window"); got != tc.warn {
			t.Errorf("run(%q): warned %v, want %v: %s", args, got, tc.warn, stderr.String())
		}
	}
}

// TestBulk: -bulk sends the folder's documents in one bulk request, each
// with its own id; -stdin with it is a usage error.
func TestBulk(t *testing.T) {
	url, ingest := testServer(t)
	ctx := context.Background()
	dir := writeTree(t, map[string]string{"a.md": "# A", "sub/b.mdx": "# B", "notes.csv": "t"})
	var stdout, stderr bytes.Buffer
	environ := envOf(map[string]string{"NATS_URL": url, "CHUNKSTREAM_PRODUCER_BULK": "true"})
	if code := run(ctx, []string{"-subject", "ingest.test", "-progress=false", dir, filepath.Join(dir, "notes.csv")}, nil, &stdout, &stderr, environ); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "3 documents: 3 sent") {
		t.Errorf("summary = %q, want 3 documents sent", stderr.String())
	}
	info, _ := ingest.Info(ctx)
	if info.State.Msgs != 1 {
		t.Fatalf("INGEST holds %d messages, want 1 bulk request", info.State.Msgs)
	}
	m, err := ingest.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := messages.DecodeBulk(m.Data)
	if err != nil || !messages.IsBulk(m.Header.Get(messages.HeaderContentType)) || m.Subject != "ingest.test" {
		t.Fatalf("message: %v, %s on %s", err, m.Header.Get(messages.HeaderContentType), m.Subject)
	}
	ids := map[string]bool{}
	for _, e := range entries {
		req, err := messages.DecodeIngest(e.ContentType, e.Data)
		if err != nil || req.Validate() != nil {
			t.Fatalf("entry %s: %v", e.MsgID, err)
		}
		ids[req.ID] = true
	}
	if len(ids) != 3 || !ids["a.md"] || !ids["sub/b.mdx"] || !ids["notes.csv"] {
		t.Errorf("document ids = %v", ids)
	}
	stderr.Reset()
	if code := run(ctx, []string{"-progress=false", "-stdin", "-bulk"}, strings.NewReader(""), &stdout, &stderr, envOf(map[string]string{"NATS_URL": url})); code != 2 {
		t.Errorf("run(-stdin -bulk) = %d, want 2; stderr %s", code, stderr.String())
	}
}
