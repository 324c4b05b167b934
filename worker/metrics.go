package worker

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/chunkstream/chunkstream/chunking"
	"github.com/chunkstream/chunkstream/fault"
)

// Outcome is what was done with a delivery: the label "outcome" of
// chunkstream_worker_messages_total.
type Outcome string

// Outcomes of a delivery.
const (
	OutcomeAcked      Outcome = "acked"      // written to the sink and acked
	OutcomeSuperseded Outcome = "superseded" // a newer version was started: acked without writing
	OutcomeDuplicate  Outcome = "duplicate"  // this version was already done (or, in a bulk delivered again, dead-lettered): acked without writing
	OutcomeRetried    Outcome = "retried"    // transient failure: NAKed with backoff
	OutcomePermanent  Outcome = "dead_letter_permanent"
	OutcomeExhausted  Outcome = "dead_letter_exhausted"
	OutcomeAbandoned  Outcome = "abandoned" // shutdown: NAKed for another worker
	OutcomePaused     Outcome = "paused"    // a dependency of the sink is down: held, retried when it answers
)

// Metrics are the worker's Prometheus metrics, in a private registry.
type Metrics struct {
	// Registry holds every metric below plus Go and process collectors.
	Registry *prometheus.Registry

	// Messages counts handled deliveries by outcome (Outcome*).
	Messages *prometheus.CounterVec
	// Chunks counts chunks written to the sink.
	Chunks prometheus.Counter
	// Bytes counts document bytes chunked and written.
	Bytes prometheus.Counter
	// Latency times a delivery from receipt to its ack, NAK or Term.
	Latency *prometheus.HistogramVec
	// InFlight is the number of deliveries being processed.
	InFlight prometheus.Gauge
	// Redeliveries counts deliveries after the first.
	Redeliveries prometheus.Counter
	// DeadLetters counts dead letters by kind and cause.
	DeadLetters *prometheus.CounterVec
	// ChunkerWarnings counts the chunker's warnings of the versions
	// written, by kind (chunking.WarningKinds).
	ChunkerWarnings *prometheus.CounterVec
	// SinkWrites counts sink writes by result; SinkLatency times them.
	SinkWrites  *prometheus.CounterVec
	SinkLatency prometheus.Histogram
	// SinkUp is 0 while a dependency of the sink is down, 1 once it
	// answers again; a dependency appears at its first outage.
	SinkUp *prometheus.GaugeVec
	// SinkDownSince is the Unix time at which the current outage of a
	// dependency began, 0 when it is up.
	SinkDownSince *prometheus.GaugeVec
	// SinkProbes counts the probes of dependencies by result (ok, failed).
	SinkProbes *prometheus.CounterVec
	// Held is the number of deliveries held during an outage.
	Held prometheus.Gauge
	// AcksUnconfirmed counts acks the server did not confirm in time.
	AcksUnconfirmed prometheus.Counter
	// Ready is 1 while the worker is ready (/readyz answers 200), else 0.
	Ready prometheus.Gauge
	// Pending, AckPending and WaitingPulls are the consumer's state as
	// this worker last read it; DLQ is the number of dead letters.
	Pending, AckPending, WaitingPulls, DLQ prometheus.Gauge
}

// NewMetrics creates the metrics in a new private registry.
func NewMetrics() *Metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	gaugeVec := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Messages: counterVec("chunkstream_worker_messages_total",
			"Ingest requests handled, by outcome.", "outcome"),
		Chunks: counter("chunkstream_worker_chunks_total",
			"Chunks written to the sink."),
		Bytes: counter("chunkstream_worker_document_bytes_total",
			"Bytes of documents chunked."),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_processing_seconds",
			Help:    "Time from receiving an ingest request to its ack, NAK or termination, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14),
		}, []string{"outcome"}),
		InFlight: gauge("chunkstream_worker_in_flight",
			"Ingest requests being processed."),
		Redeliveries: counter("chunkstream_worker_redeliveries_total",
			"Ingest requests received on a second or later delivery."),
		DeadLetters: counterVec("chunkstream_worker_dead_letters_total",
			"Dead letters published, by kind and cause.", "kind", "cause"),
		ChunkerWarnings: counterVec("chunkstream_worker_chunker_warnings_total",
			"Chunker warnings of the document versions written, by kind.", "kind"),
		SinkWrites: counterVec("chunkstream_worker_sink_writes_total",
			"Sink writes, by result (ok, transient, unavailable, permanent).", "result"),
		SinkLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_sink_write_seconds",
			Help:    "Duration of sink writes.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14),
		}),
		SinkUp: gaugeVec("chunkstream_worker_sink_up",
			"1 when a dependency of the sink answers, 0 while it is down (the worker holds its messages and fetches nothing).", "dependency"),
		SinkDownSince: gaugeVec("chunkstream_worker_sink_down_since_seconds",
			"Unix time at which the current outage of a dependency of the sink began; 0 when it is up.", "dependency"),
		SinkProbes: counterVec("chunkstream_worker_sink_probes_total",
			"Probes of dependencies of the sink that are down, or another worker announced down, by dependency and result (ok, failed).", "dependency", "result"),
		Held: gauge("chunkstream_worker_held",
			"Ingest requests held (in-progress acks, no delivery spent) while a dependency of the sink is down."),
		AcksUnconfirmed: counter("chunkstream_worker_acks_unconfirmed_total",
			"Acks the server did not confirm in time; their requests are redelivered and acked as duplicates."),
		Ready: gauge("chunkstream_worker_ready",
			"1 while the worker is ready (/readyz answers 200), 0 otherwise."),
		Pending: gauge("chunkstream_consumer_pending_messages",
			"Ingest requests not yet delivered to any worker (the consumer's num_pending), as this worker last read it."),
		AckPending: gauge("chunkstream_consumer_ack_pending_messages",
			"Ingest requests delivered and not yet acknowledged (the consumer's num_ack_pending), as this worker last read it."),
		WaitingPulls: gauge("chunkstream_consumer_waiting_pulls",
			"Pull requests waiting at the server (the consumer's num_waiting): 0 while requests wait means no worker is pulling."),
		DLQ: gauge("chunkstream_dlq_messages",
			"Dead letters in the dead letter stream, as this worker last read it."),
	}
	m.Registry.MustRegister(m.Messages, m.Chunks, m.Bytes, m.Latency, m.InFlight, m.Redeliveries,
		m.DeadLetters, m.ChunkerWarnings, m.SinkWrites, m.SinkLatency, m.SinkUp, m.SinkDownSince, m.SinkProbes, m.Held, m.AcksUnconfirmed,
		m.Ready, m.Pending, m.AckPending, m.WaitingPulls, m.DLQ,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []Outcome{OutcomeAcked, OutcomeSuperseded, OutcomeDuplicate, OutcomeRetried, OutcomePermanent, OutcomeExhausted, OutcomeAbandoned, OutcomePaused} {
		m.Messages.WithLabelValues(string(o))
	}
	for _, k := range chunking.WarningKinds() {
		m.ChunkerWarnings.WithLabelValues(string(k))
	}
	return m
}

// SinkMetrics returns a decorator that counts and times a sink's writes.
func SinkMetrics(m *Metrics) func(Sink) Sink {
	return func(next Sink) Sink {
		return SinkFunc(func(ctx context.Context, doc Doc, chunks []Chunk) error {
			start := time.Now()
			err := next.Write(ctx, doc, chunks)
			m.SinkLatency.Observe(time.Since(start).Seconds())
			switch {
			case err == nil:
				m.SinkWrites.WithLabelValues("ok").Inc()
				m.Chunks.Add(float64(len(chunks)))
			case fault.IsPermanent(err):
				m.SinkWrites.WithLabelValues("permanent").Inc()
			case fault.IsUnavailable(err):
				m.SinkWrites.WithLabelValues("unavailable").Inc()
			default:
				m.SinkWrites.WithLabelValues("transient").Inc()
			}
			return err
		})
	}
}
