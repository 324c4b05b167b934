package tracingtest

import (
	_ "embed"
	"encoding/json"
	"fmt"
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

	"github.com/chunkstream/chunkstream/internal/testutil"
)

//go:embed jaeger.yaml
var jaegerConfig []byte

// Jaeger is a running Jaeger (all-in-one, in-memory storage).
type Jaeger struct {
	// OTLP is the host:port of its OTLP/HTTP receiver, Query of its query
	// API.
	OTLP, Query string
}

// StartJaeger runs Jaeger on free ports of 127.0.0.1 until the test ends
// and waits for its query API. It skips the test unless
// CHUNKSTREAM_TEST_JAEGER_BIN names a jaeger binary (package doc).
func StartJaeger(tb testing.TB) *Jaeger {
	tb.Helper()
	bin := jaegerBinary(tb)
	ports := testutil.FreePorts(tb, 3)
	j := &Jaeger{OTLP: fmt.Sprintf("127.0.0.1:%d", ports[0]), Query: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	config := filepath.Join(tb.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(config, jaegerConfig, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+config)
	cmd.Env = append(os.Environ(), "JAEGER_TEST_OTLP_PORT="+strconv.Itoa(ports[0]),
		"JAEGER_TEST_QUERY_PORT="+strconv.Itoa(ports[1]), "JAEGER_TEST_QUERY_GRPC_PORT="+strconv.Itoa(ports[2]))
	logs := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if tb.Failed() {
			tb.Logf("jaeger's log:\n%s", LastLines(logs.String(), 30))
		}
	})
	testutil.WaitFor(tb, 60*time.Second, "Jaeger's query API", func() (bool, string) {
		select {
		case <-done:
			tb.Fatalf("jaeger exited: %v\n%s", cmd.ProcessState, logs.String())
		default:
		}
		resp, err := http.Get("http://" + j.Query + "/api/services")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return j
}

// Env returns the variables that make a worker or producer export its
// spans to j soon after they end, with a queue that does not drop spans
// under a test's load.
func (j *Jaeger) Env() map[string]string {
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + j.OTLP,
		"OTEL_BSP_SCHEDULE_DELAY":     "100", // ms
		"OTEL_BSP_MAX_QUEUE_SIZE":     "1000000",
	}
}

// jaegerBinary returns the jaeger command CHUNKSTREAM_TEST_JAEGER_BIN
// names, or skips the test (package doc).
func jaegerBinary(tb testing.TB) string {
	tb.Helper()
	testutil.OptIn(tb, testutil.JaegerBin)
	return os.Getenv(testutil.JaegerBin)
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Trace is a trace as Jaeger's query API (/api/traces) returns it.
type Trace struct {
	TraceID   string `json:"traceID"`
	Spans     []Span `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// Span is a span of a Trace.
type Span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []Tag `json:"tags"`
	Logs []struct {
		Fields []Tag `json:"fields"`
	} `json:"logs"`
}

// Tag is a key and value of a span's tags or of one of its logs.
type Tag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Traces returns up to limit traces that have a span of operation by
// service.
func (j *Jaeger) Traces(tb testing.TB, service, operation string, limit int) []Trace {
	tb.Helper()
	q := url.Values{"service": {service}, "operation": {operation}, "limit": {strconv.Itoa(limit)}, "lookback": {"1h"}}
	resp, err := http.Get("http://" + j.Query + "/api/traces?" + q.Encode())
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []Trace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		tb.Fatalf("GET /api/traces: %s: %v", resp.Status, err)
	}
	return body.Data
}

// Span returns the trace's first span of operation name, nil when none.
func (tr Trace) Span(name string) *Span {
	if i := slices.IndexFunc(tr.Spans, func(s Span) bool { return s.OperationName == name }); i >= 0 {
		return &tr.Spans[i]
	}
	return nil
}

// Service returns the service name of the process that recorded s.
func (tr Trace) Service(s *Span) string { return tr.Processes[s.ProcessID].ServiceName }

// Tag returns the span's tag key as a string ("" when absent).
func (s *Span) Tag(key string) string {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return fmt.Sprint(kv.Value)
		}
	}
	return ""
}

// ChildOf reports whether s is a child of parent.
func (s *Span) ChildOf(parent *Span) bool {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" && r.SpanID == parent.SpanID && r.TraceID == parent.TraceID {
			return true
		}
	}
	return false
}

// Logged reports whether the span has a log (an event) named event.
func (s *Span) Logged(event string) bool {
	for _, l := range s.Logs {
		for _, f := range l.Fields {
			if f.Key == "event" && f.Value == event {
				return true
			}
		}
	}
	return false
}
