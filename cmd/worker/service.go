package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/chunkstream/chunkstream/cmd/internal/natsconn"
	"github.com/chunkstream/chunkstream/worker"
	"github.com/chunkstream/chunkstream/worker/subjectsink"
)

// buildSink returns the sink named by CHUNKSTREAM_SINK; its metrics, if
// any, go to reg.
func buildSink(ctx context.Context, c *config, js jetstream.JetStream, records worker.Records, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (worker.Sink, func(), error) {
	switch c.Sink {
	case worker.SinkSubject:
		s := subjectsink.New(js, c.ChunksPrefix, c.MaxPendingPublishes)
		if err := s.SetRecordFormat(c.RecordFormat); err != nil {
			return nil, nil, err
		}
		return s, func() {}, nil
	case worker.SinkQdrant:
		return newQdrantSink(ctx, c, records, log, reg, tp)
	}
	return nil, nil, fmt.Errorf("CHUNKSTREAM_SINK: unknown sink %q", c.Sink)
}

// subjectSinkInFlight is the documents in flight per processor the
// subject sink gets when CHUNKSTREAM_CONCURRENCY is 0. A document's
// processor mostly waits (its record writes, its group commit's sync):
// more of them in flight fill each commit (one worker, documents of 1 to
// 10 KiB in bulk requests: 1.73× the documents/s of 16 in one run).
// Bulk requests bring them in without a fetch and an ack each.
const subjectSinkInFlight = 64

// serve runs the worker service until ctx is cancelled (SIGTERM), then
// drains and waits for the connection to close.
func serve(ctx context.Context, c *config, log *slog.Logger, tp trace.TracerProvider) error {
	// Listen first: a second worker on the host fails at once, naming the
	// setting, not after connecting and setting up.
	var ln net.Listener
	if c.MetricsAddr != "" {
		var err error
		if ln, err = listenMetrics(c.MetricsAddr); err != nil {
			return err
		}
		defer ln.Close()
	}
	if c.Concurrency == 0 && c.Sink == worker.SinkQdrant {
		c.Concurrency = qdrantConcurrency(c)
		log.Info("documents in flight set for the Qdrant sink's requests", "concurrency", c.Concurrency)
	}
	if c.Concurrency == 0 && c.Sink == worker.SinkSubject {
		// Processors wait for the group commits of the subject sink:
		// more of them fill each commit.
		c.Concurrency = subjectSinkInFlight * runtime.GOMAXPROCS(0)
		log.Info("documents in flight set for the subject sink's group commits", "concurrency", c.Concurrency)
	}
	nc, err := natsconn.Connect(ctx, c.NATS, "chunkstream-worker", log)
	if err != nil {
		return err
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	defer func() {
		if !nc.IsClosed() {
			nc.Close()
		}
	}()
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(c.Workers()*c.MaxPendingPublishes),
		jetstream.WithPublishAsyncTimeout(c.AckWait))
	if err != nil {
		return err
	}
	start := time.Now()
	top, err := worker.Setup(ctx, js, c.Config)
	if err != nil {
		return err
	}
	log.Info("streams, buckets and consumer ready", "duration", time.Since(start).Round(time.Millisecond), "replicas", c.Replicas)
	records := worker.NewKVRecords(top.Docs).WithLeaderReads(nc)
	metrics := worker.NewMetrics()
	sink, closeSink, err := buildSink(ctx, c, js, records, log, metrics.Registry, tp)
	if err != nil {
		return err
	}
	defer closeSink()
	w, err := worker.New(nc, js, top, worker.Options{
		Config: c.Config, Logger: log, Metrics: metrics, Sink: sink, TracerProvider: tp,
	})
	if err != nil {
		return err
	}

	var srv *http.Server
	if ln != nil {
		srv = &http.Server{Handler: worker.Handler(w.Metrics(), w), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server failed", "err", err)
			}
		}()
	}
	runErr := w.Run(ctx)

	// Drain: flush acks and publishes, then wait for the close.
	if err := nc.Drain(); err != nil {
		log.Warn("drain failed", "err", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		log.Warn("connection did not close after drain")
	}
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return runErr
}

// listenMetrics listens on the metrics address; the error names the
// variable and the flag, and for an address in use says what to do.
func listenMetrics(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	err = fmt.Errorf("metrics address %q (CHUNKSTREAM_METRICS_ADDR, -metrics-addr): %w", addr, err)
	if errors.Is(err, syscall.EADDRINUSE) {
		err = fmt.Errorf("%w; another worker on this host may be serving there: give each worker its own CHUNKSTREAM_METRICS_ADDR (or -metrics-addr), e.g. :9091, or '' to serve no metrics", err)
	}
	return nil, err
}

// healthcheckAddr probes /healthz and /readyz of a running worker at addr
// (a listen address such as ":9090").
func healthcheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("metrics address %q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	client := &http.Client{Timeout: 3 * time.Second}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := client.Get("http://" + net.JoinHostPort(host, port) + path)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", path, strings.TrimSpace(resp.Status))
		}
	}
	return nil
}
