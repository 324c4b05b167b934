package otelenv

import (
	"context"
	"strings"
	"testing"
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
