package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chunkstream/chunkstream/internal/testutil"
	"github.com/chunkstream/chunkstream/producer"
	"github.com/chunkstream/chunkstream/worker"
)

// TestTracesInJaeger sends documents with the producer through a worker
// process, both exporting their spans over OTLP to a real Jaeger
// (all-in-one, in-memory storage), and reads the traces back through
// Jaeger's query API: one trace per document, rooted at the producer's
// send span with the worker's delivery under it; the failure of a
// document that is not UTF-8 recorded as an error; `producer dlq replay`
// linked to the trace of the failed delivery, and the replayed request
// delivered in the replay's trace.
func TestTracesInJaeger(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Jaeger and a worker process")
	}
	jaegerBin := jaegerBinary(t)
	jaeger := startJaeger(t, jaegerBin)
	natsURL, _ := testServer(t)
	otel := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + jaeger.otlp,
		"OTEL_BSP_SCHEDULE_DELAY":     "100", // ms: export soon
	}
	startTracedWorker(t, natsURL, otel)

	good := map[string]string{"a.md": "# A\n\nOne.\n", "b.md": "# B\n\nTwo.\n", "c.md": "# C\n\nThree.\n"}
	files := map[string]string{"bad.md": "# Bad \xff\xfe\n"}
	for k, v := range good {
		files[k] = v
	}
	dir := writeTree(t, files)
	env := map[string]string{"NATS_URL": natsURL}
	for k, v := range otel {
		env[k] = v
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-progress=false", "-send-invalid-utf8", dir}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("producer = %d, stderr:\n%s", code, stderr.String())
	}

	// Every document's trace, with the worker's delivery and its outcome.
	var traces map[string]jaegerTrace // by document id
	testutil.WaitFor(t, 60*time.Second, "a trace per document with its delivery settled in Jaeger", func() (bool, string) {
		traces = map[string]jaegerTrace{}
		for _, tr := range jaeger.traces(t, "chunkstream-producer", producer.SpanSend) {
			if send := tr.span(producer.SpanSend); send != nil {
				traces[send.tag("chunkstream.doc_id")] = tr
			}
		}
		settled := 0
		for _, tr := range traces {
			if d := tr.span(worker.SpanDeliver); d != nil && d.tag("chunkstream.outcome") != "" {
				settled++
			}
		}
		return len(traces) == len(files) && settled == len(files), fmt.Sprintf("%d traces, %d settled", len(traces), settled)
	})
	for id, tr := range traces {
		send, deliver := tr.span(producer.SpanSend), tr.span(worker.SpanDeliver)
		if len(send.References) != 0 {
			t.Errorf("%s: send span has references %v, want the trace's root", id, send.References)
		}
		if !deliver.childOf(send) || tr.service(deliver) != "chunkstream-worker" || tr.service(send) != "chunkstream-producer" {
			t.Errorf("%s: delivery (%s) references %v, want a child of the send span %s (%s)", id,
				tr.service(deliver), deliver.References, send.SpanID, tr.service(send))
		}
		for _, name := range []string{worker.SpanDecode, worker.SpanRecordStart} {
			if s := tr.span(name); s == nil || !s.childOf(deliver) {
				t.Errorf("%s: no %s span under the delivery", id, name)
			}
		}
		if _, ok := good[id]; ok {
			if deliver.tag("chunkstream.outcome") != "acked" || deliver.tag("error") != "" {
				t.Errorf("%s: delivery outcome %q, error %q; want acked", id, deliver.tag("chunkstream.outcome"), deliver.tag("error"))
			}
			for _, name := range []string{worker.SpanChunk, worker.SpanSinkWrite, worker.SpanRecordFinish} {
				if s := tr.span(name); s == nil || !s.childOf(deliver) {
					t.Errorf("%s: no %s span under the delivery", id, name)
				}
			}
		}
	}
	// The document record names the trace of its last delivery.
	stdout.Reset()
	if code := run(context.Background(), []string{"status", "-id", "a.md"}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("status -id = %d, stderr:\n%s", code, stderr.String())
	}
	if want := "trace_id     " + traces["a.md"].TraceID; !strings.Contains(stdout.String(), want) {
		t.Errorf("status -id a.md:\n%s\nwant the line %q", stdout.String(), want)
	}
	bad, ok := traces["bad.md"]
	if !ok {
		t.Fatalf("no trace of bad.md among %d", len(traces))
	}
	failed := bad.span(worker.SpanDeliver)
	if failed.tag("error") != "true" || failed.tag("chunkstream.cause") != "not_utf8" || !failed.logged("exception") {
		t.Errorf("bad.md: delivery tags %v, logs %v: want error=true, cause not_utf8 and the exception logged", failed.Tags, failed.Logs)
	}
	dead := bad.span(worker.SpanDeadLetter)
	if dead == nil || !dead.childOf(failed) {
		t.Fatalf("bad.md: no dead letter span under the failed delivery")
	}

	// The replay, linked to the dead letter's span; the worker delivers the
	// replayed request in the replay's trace.
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"dlq", "replay"}, nil, &stdout, &stderr, envOf(env)); code != 0 {
		t.Fatalf("dlq replay = %d, stderr:\n%s", code, stderr.String())
	}
	var replay jaegerTrace
	testutil.WaitFor(t, 60*time.Second, "the replay's trace with its delivery in Jaeger", func() (bool, string) {
		rs := jaeger.traces(t, "chunkstream-producer", producer.SpanReplay)
		if len(rs) != 1 {
			return false, fmt.Sprintf("%d replay traces", len(rs))
		}
		replay = rs[0]
		return replay.span(worker.SpanDeadLetter) != nil, "no dead letter of the replayed request yet"
	})
	r := replay.span(producer.SpanReplay)
	if len(r.References) != 1 || r.References[0].RefType != "FOLLOWS_FROM" ||
		r.References[0].TraceID != dead.TraceID || r.References[0].SpanID != dead.SpanID {
		t.Errorf("replay span references %v, want a link to the dead letter span %s of trace %s", r.References, dead.SpanID, dead.TraceID)
	}
	if d := replay.span(worker.SpanDeliver); d == nil || !d.childOf(r) || d.tag("chunkstream.doc_id") != "bad.md" {
		t.Errorf("replay trace: no delivery of bad.md under the replay span")
	}
}

// jaegerBinary returns the jaeger command of tools/jaeger's go.mod: the
// one CHUNKSTREAM_TEST_JAEGER_BIN names, or "jaeger" on PATH, or one built
// into the user's cache folder (once per version: the build takes minutes).
// The test is skipped when none can be had.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CHUNKSTREAM_TEST_JAEGER_BIN"); bin != "" {
		return bin
	}
	if bin, err := exec.LookPath("jaeger"); err == nil {
		return bin
	}
	tools := filepath.Join(testutil.RepoRoot(t), "tools", "jaeger")
	sum, err := os.ReadFile(filepath.Join(tools, "go.sum"))
	cache, cerr := os.UserCacheDir()
	goCmd, gerr := exec.LookPath("go")
	if err != nil || cerr != nil || gerr != nil {
		t.Skipf("no jaeger: not on PATH, and cannot build tools/jaeger (%v, %v, %v)", err, cerr, gerr)
	}
	h := sha256.Sum256(sum)
	bin := filepath.Join(cache, "chunkstream", "jaeger-"+hex.EncodeToString(h[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	start := time.Now()
	cmd := exec.Command(goCmd, "build", "-o", bin, "github.com/jaegertracing/jaeger/cmd/jaeger")
	cmd.Dir = tools
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("no jaeger: not on PATH, and building tools/jaeger failed: %v: %s", err, lastLines(string(out), 3))
	}
	t.Logf("built %s in %v", bin, time.Since(start).Round(time.Second))
	return bin
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// jaegerServer is a running Jaeger: its OTLP/HTTP and query addresses.
type jaegerServer struct {
	otlp, query string
}

// startJaeger runs bin with testdata/jaeger.yaml on free ports until the
// test ends, and waits for its query API.
func startJaeger(t *testing.T, bin string) *jaegerServer {
	t.Helper()
	j := &jaegerServer{
		otlp:  fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)),
		query: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)),
	}
	config, err := filepath.Abs(filepath.Join("testdata", "jaeger.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+config)
	cmd.Env = append(os.Environ(),
		"JAEGER_TEST_OTLP_PORT="+portOf(j.otlp), "JAEGER_TEST_QUERY_PORT="+portOf(j.query),
		fmt.Sprintf("JAEGER_TEST_QUERY_GRPC_PORT=%d", testutil.FreePort(t)))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("jaeger's log:\n%s", lastLines(logs.String(), 30))
		}
	})
	testutil.WaitFor(t, 60*time.Second, "Jaeger's query API", func() (bool, string) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("jaeger exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get("http://" + j.query + "/api/services")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return j
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// jaegerTrace is a trace as Jaeger's query API (/api/traces) returns it.
type jaegerTrace struct {
	TraceID   string       `json:"traceID"`
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []jaegerTag `json:"tags"`
	Logs []struct {
		Fields []jaegerTag `json:"fields"`
	} `json:"logs"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// traces returns the traces that have a span of operation by service.
func (j *jaegerServer) traces(t *testing.T, service, operation string) []jaegerTrace {
	t.Helper()
	q := url.Values{"service": {service}, "operation": {operation}, "limit": {"100"}, "lookback": {"1h"}}
	resp, err := http.Get("http://" + j.query + "/api/traces?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET /api/traces: %s: %v", resp.Status, err)
	}
	return body.Data
}

// span returns the trace's span of operation name, nil when none.
func (tr jaegerTrace) span(name string) *jaegerSpan {
	for i := range tr.Spans {
		if tr.Spans[i].OperationName == name {
			return &tr.Spans[i]
		}
	}
	return nil
}

func (tr jaegerTrace) service(s *jaegerSpan) string { return tr.Processes[s.ProcessID].ServiceName }

// tag returns the span's tag key as a string ("" when absent).
func (s *jaegerSpan) tag(key string) string {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return fmt.Sprint(kv.Value)
		}
	}
	return ""
}

// childOf reports whether s is a child of parent.
func (s *jaegerSpan) childOf(parent *jaegerSpan) bool {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" && r.SpanID == parent.SpanID && r.TraceID == parent.TraceID {
			return true
		}
	}
	return false
}

// logged reports whether the span has a log (an event) named event.
func (s *jaegerSpan) logged(event string) bool {
	for _, l := range s.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" && f.Value == event {
				return true
			}
		}
	}
	return false
}

// startTracedWorker runs a worker process on natsURL with the otel
// variables until the test ends, then stops it with SIGTERM so that it
// flushes its spans.
func startTracedWorker(t *testing.T, natsURL string, otel map[string]string) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t, "./cmd/worker"))
	cmd.Env = append(os.Environ(), "NATS_URL="+natsURL, "CHUNKSTREAM_METRICS_ADDR=", "CHUNKSTREAM_LOG_LEVEL=warn")
	for k, v := range otel {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("worker's log:\n%s", lastLines(logs.String(), 30))
		}
	})
}
