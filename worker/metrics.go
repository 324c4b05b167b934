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
	OutcomeDuplicate  Outcome = "duplicate"  // this version was already done: acked without writing
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
	// this worker last read it (see their Help); DLQ is the number of
	// dead letters.
	Pending, AckPending, WaitingPulls, DLQ prometheus.Gauge
}

// NewMetrics creates the metrics in a new private registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chunkstream_worker_messages_total",
			Help: "Ingest requests handled, by outcome.",
		}, []string{"outcome"}),
		Chunks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chunkstream_worker_chunks_total",
			Help: "Chunks written to the sink.",
		}),
		Bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chunkstream_worker_document_bytes_total",
			Help: "Bytes of documents chunked.",
		}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_processing_seconds",
			Help:    "Time from receiving an ingest request to its ack, NAK or termination, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14),
		}, []string{"outcome"}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_worker_in_flight",
			Help: "Ingest requests being processed.",
		}),
		Redeliveries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chunkstream_worker_redeliveries_total",
			Help: "Ingest requests received on a second or later delivery.",
		}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chunkstream_worker_dead_letters_total",
			Help: "Dead letters published, by kind and cause.",
		}, []string{"kind", "cause"}),
		ChunkerWarnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chunkstream_worker_chunker_warnings_total",
			Help: "Chunker warnings of the document versions written, by kind.",
		}, []string{"kind"}),
		SinkWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chunkstream_worker_sink_writes_total",
			Help: "Sink writes, by result (ok, transient, unavailable, permanent).",
		}, []string{"result"}),
		SinkLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_sink_write_seconds",
			Help:    "Duration of sink writes.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14),
		}),
		SinkUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "chunkstream_worker_sink_up",
			Help: "1 when a dependency of the sink answers, 0 while it is down (the worker holds its messages and fetches nothing).",
		}, []string{"dependency"}),
		SinkDownSince: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "chunkstream_worker_sink_down_since_seconds",
			Help: "Unix time at which the current outage of a dependency of the sink began; 0 when it is up.",
		}, []string{"dependency"}),
		SinkProbes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chunkstream_worker_sink_probes_total",
			Help: "Probes of dependencies of the sink that are down, or another worker announced down, by dependency and result (ok, failed).",
		}, []string{"dependency", "result"}),
		Held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_worker_held",
			Help: "Ingest requests held (in-progress acks, no delivery spent) while a dependency of the sink is down.",
		}),
		AcksUnconfirmed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chunkstream_worker_acks_unconfirmed_total",
			Help: "Acks the server did not confirm in time; their requests are redelivered and acked as duplicates.",
		}),
		Ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_worker_ready",
			Help: "1 while the worker is ready (/readyz answers 200), 0 otherwise.",
		}),
		Pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_consumer_pending_messages",
			Help: "Ingest requests not yet delivered to any worker (the consumer's num_pending), as this worker last read it.",
		}),
		AckPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_consumer_ack_pending_messages",
			Help: "Ingest requests delivered and not yet acknowledged (the consumer's num_ack_pending), as this worker last read it.",
		}),
		WaitingPulls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_consumer_waiting_pulls",
			Help: "Pull requests waiting at the server (the consumer's num_waiting): 0 while requests wait means no worker is pulling.",
		}),
		DLQ: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chunkstream_dlq_messages",
			Help: "Dead letters in the dead letter stream, as this worker last read it.",
		}),
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
