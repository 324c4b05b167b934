package otelenv

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestProvider(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		on   bool
		err  string
	}{
		{"nothing set", nil, false, ""},
		{"service name alone", []string{"OTEL_SERVICE_NAME", "x"}, false, ""},
		{"endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"}, true, ""},
		{"traces endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"exporter otlp", []string{"OTEL_TRACES_EXPORTER", "otlp"}, true, ""},
		{"exporter none wins", []string{"OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318"}, false, ""},
		{"sdk disabled wins", []string{"OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp"}, false, ""},
		{"grpc refused", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}, false, "only http/protobuf"},
		{"other exporter refused", []string{"OTEL_TRACES_EXPORTER", "zipkin", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318"}, false, "only otlp and none"},
		{"ratio sampler", []string{"OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0.01"}, true, ""},
		{"unknown sampler refused", []string{"OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", "parentbased_ratio"}, false, "OTEL_TRACES_SAMPLER=parentbased_ratio"},
		{"ratio above 1 refused", []string{"OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "2"}, false, "from 0 to 1"},
		{"sampler ignored when off", []string{"OTEL_TRACES_EXPORTER", "none", "OTEL_TRACES_SAMPLER", "bogus"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, stop, err := Provider(context.Background(), "svc", env(tt.env...))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Provider(%v) error = %v, want one containing %q", tt.env, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer stop(context.Background())
			if (tp != nil) != tt.on {
				t.Errorf("Provider(%v) = %v, want tracing on = %v", tt.env, tp, tt.on)
			}
		})
	}
}

// TestSampler: the sampler the variables name decides, for a root span and
// under a sampled and an unsampled remote parent.
func TestSampler(t *testing.T) {
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true})
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true})
	tests := []struct {
		name, arg                string
		root, inSampled, inUnsam bool
	}{
		{"", "", true, true, false},
		{"parentbased_always_off", "", false, true, false},
		{"parentbased_traceidratio", "0", false, true, false},
		{"always_on", "", true, true, true},
		{"always_off", "", false, false, false},
		{"traceidratio", "1", true, true, true},
	}
	for _, tt := range tests {
		s, err := samplerOf(tt.name, tt.arg)
		if err != nil {
			t.Fatalf("samplerOf(%q, %q): %v", tt.name, tt.arg, err)
		}
		decide := func(parent trace.SpanContext) bool {
			ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
			r := s.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: trace.TraceID{2}, Name: "x"})
			return r.Decision == sdktrace.RecordAndSample
		}
		if got := [3]bool{decide(trace.SpanContext{}), decide(sampled), decide(unsampled)}; got != [3]bool{tt.root, tt.inSampled, tt.inUnsam} {
			t.Errorf("samplerOf(%q, %q) samples root, under sampled, under unsampled = %v, want %v", tt.name, tt.arg, got,
				[3]bool{tt.root, tt.inSampled, tt.inUnsam})
		}
	}
}
