// Package otelenv sets up the OpenTelemetry tracer provider of the worker
// and the producer from the standard OTEL_* environment variables, with
// the effects docs/operations.md ("Tracing") lists.
//
// Decisions:
//
//   - Tracing off is a nil provider: the libraries use the no-op tracer, no
//     SDK, no exporter, no goroutine.
//   - The exporter is OTLP over HTTP (protobuf), which every collector and
//     Jaeger accept; another exporter or protocol is refused with an error
//     rather than ignored.
//   - The switch, the endpoint, the protocol, the service name and the
//     sampler are read through the command's environment lookup; the rest
//     is read by the SDK from the process environment. An unknown sampler
//     or a ratio outside [0, 1] is refused at start (the SDK would log it
//     and sample everything).
package otelenv

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether the environment turns tracing on.
func Enabled(lookup func(string) (string, bool)) bool {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false
	case "otlp":
		return true
	}
	return get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Provider returns the tracer provider the environment asks for, and a
// function that flushes and stops it (call it before the process exits).
// It returns a nil provider and a no-op shutdown when tracing is off
// (Enabled).
func Provider(ctx context.Context, service string, lookup func(string) (string, bool)) (trace.TracerProvider, func(context.Context) error, error) {
	nothing := func(context.Context) error { return nil }
	if !Enabled(lookup) {
		return nil, nothing, nil
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp != "" && exp != "otlp" {
		return nil, nothing, fmt.Errorf("otelenv: OTEL_TRACES_EXPORTER=%s: only otlp and none are supported", exp)
	}
	proto := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, nothing, fmt.Errorf("otelenv: OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is supported (OTLP/HTTP, port 4318)", proto)
	}
	var opts []otlptracehttp.Option
	if u := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	} else if u := get("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(u, "/")+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nothing, fmt.Errorf("otelenv: OTLP exporter: %w", err)
	}
	if s := get("OTEL_SERVICE_NAME"); s != "" {
		service = s
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, nothing, fmt.Errorf("otelenv: resource: %w", err)
	}
	sampler, err := samplerOf(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG"))
	if err != nil {
		return nil, nothing, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	return tp, tp.Shutdown, nil
}

// samplerOf returns the sampler OTEL_TRACES_SAMPLER names (default
// parentbased_always_on), with OTEL_TRACES_SAMPLER_ARG the ratio of the
// traceidratio samplers (default 1).
func samplerOf(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" && strings.HasSuffix(strings.ToLower(name), "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("otelenv: OTEL_TRACES_SAMPLER_ARG=%s: want a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch strings.ToLower(name) {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("otelenv: OTEL_TRACES_SAMPLER=%s: want parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off or traceidratio", name)
}

// Stop flushes and stops the provider through stop (Provider's second
// result), for at most 5 s, and logs a failure.
func Stop(stop func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("traces not flushed", "err", err)
	}
}
