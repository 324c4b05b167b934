// Package tracingtest gives tests real OpenTelemetry tracing: an SDK tracer
// provider for the worker and producer built in process (Provider), and a
// real Jaeger for processes that export over OTLP (StartJaeger), with its
// query API read back (Jaeger.Traces).
//
// CHUNKSTREAM_TEST_TRACING=1 turns tracing on in the tests that would run
// without it (On), as docs/development.md ("The tracing test") describes;
// without it Provider returns nil, so the default run tests what a
// deployment runs by default.
//
// Decisions:
//
//   - Provider exports synchronously to memory and checks, when the test
//     ends, that every span started has ended: a span left open is a leak
//     in the traced code (its trace never reaches a backend), found by the
//     ordinary tests rather than by reading traces.
//   - Lookup gives a command run in the test's process (its run function
//     and environment lookup) an OTLP/HTTP endpoint in that process, one
//     per test binary, which accepts every export: the command's own
//     provider, exporter and batching run, with nothing to start or stop.
//   - StartJaeger runs the jaeger command of tools/jaeger (a module of its
//     own that pins it) that CHUNKSTREAM_TEST_JAEGER_BIN names, and skips
//     the test, with one line naming the variable, without it: a test
//     never builds Jaeger (minutes of both cores), .ci/run does, once per
//     version of tools/jaeger/go.sum. Its configuration (jaeger.yaml)
//     listens on 127.0.0.1 only, on ports the test picks.
package tracingtest
