package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

const (
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanID  = "00f067aa0ba902b7"
	parent  = "00-" + traceID + "-" + spanID + "-01"
)

func TestExtractInject(t *testing.T) {
	tests := []struct {
		name  string
		in    map[string][]string
		valid bool
	}{
		{"lower case", map[string][]string{"traceparent": {parent}}, true},
		{"as an HTTP library writes it", map[string][]string{"Traceparent": {parent}}, true},
		{"none", map[string][]string{"Nats-Msg-Id": {"x"}}, false},
		{"malformed", map[string][]string{"traceparent": {"00-zz-yy-01"}}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := SpanContext(tt.in)
			if sc.IsValid() != tt.valid {
				t.Fatalf("SpanContext(%v) valid = %v, want %v", tt.in, sc.IsValid(), tt.valid)
			}
			if !tt.valid {
				return
			}
			if sc.TraceID().String() != traceID || sc.SpanID().String() != spanID || !sc.IsRemote() {
				t.Fatalf("SpanContext(%v) = %v, want trace %s span %s, remote", tt.in, sc, traceID, spanID)
			}
			// Injected into headers holding another trace's context, it
			// replaces both headers, whatever their case.
			out := map[string][]string{"Traceparent": {"00-" + "11111111111111111111111111111111" + "-2222222222222222-01"},
				"TraceState": {"other=1"}, "Nats-Msg-Id": {"x"}}
			Inject(trace.ContextWithSpanContext(context.Background(), sc), out)
			if got := out["traceparent"]; len(got) != 1 || got[0] != parent {
				t.Errorf("Inject: traceparent = %v, want %s", got, parent)
			}
			if _, ok := out["Traceparent"]; ok {
				t.Errorf("Inject left the other trace's Traceparent: %v", out)
			}
			if _, ok := out["TraceState"]; ok {
				t.Errorf("Inject left the other trace's tracestate: %v", out)
			}
			if out["Nats-Msg-Id"][0] != "x" {
				t.Errorf("Inject touched another header: %v", out)
			}
		})
	}
}

func TestInjectWithoutSpanWritesNothing(t *testing.T) {
	h := map[string][]string{"traceparent": {parent}}
	Inject(context.Background(), h)
	if len(h) != 1 || h["traceparent"][0] != parent {
		t.Errorf("Inject(no span) changed the headers: %v", h)
	}
}

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("worker", "w1")
	ctx := Extract(context.Background(), map[string][]string{"traceparent": {parent}})
	log.InfoContext(ctx, "traced")
	log.InfoContext(context.Background(), "untraced")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines logged, want 2", len(lines))
	}
	var traced, untraced map[string]any
	if err := json.Unmarshal(lines[0], &traced); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lines[1], &untraced); err != nil {
		t.Fatal(err)
	}
	if traced["trace_id"] != traceID || traced["span_id"] != spanID || traced["worker"] != "w1" {
		t.Errorf("traced line = %v, want trace_id %s, span_id %s and worker w1", traced, traceID, spanID)
	}
	if _, ok := untraced["trace_id"]; ok {
		t.Errorf("untraced line = %v, want no trace_id", untraced)
	}
}
