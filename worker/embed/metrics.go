package embed

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the embedder's Prometheus metrics, each labelled with the
// model: what the dense vectors cost.
type Metrics struct {
	// Inputs counts the inputs the endpoint embedded (answered with a
	// vector), probes included.
	Inputs *prometheus.CounterVec
	// Reused counts the inputs not sent because a vector of the same text
	// from the same model was reused (see Client.Reused).
	Reused *prometheus.CounterVec
	// Tokens counts the tokens the endpoint reported in its answers'
	// "usage" (prompt_tokens, else total_tokens), if any.
	Tokens *prometheus.CounterVec
	// Requests counts the HTTP requests sent, by status code ("error"
	// when no answer came).
	Requests *prometheus.CounterVec
	// RequestInputs observes the number of inputs of every request sent.
	RequestInputs *prometheus.HistogramVec
	// RequestSeconds observes the time from sending a request to reading
	// its whole answer.
	RequestSeconds *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{
		Inputs: counterVec("chunkstream_worker_embed_inputs_total",
			"Inputs the embeddings endpoint embedded, probes included, by model.", "model"),
		Reused: counterVec("chunkstream_worker_embed_inputs_reused_total",
			"Inputs not sent to the embeddings endpoint because the vector of the same text and model was reused, by model.", "model"),
		Tokens: counterVec("chunkstream_worker_embed_tokens_total",
			"Tokens the embeddings endpoint reported in its answers' usage, by model.", "model"),
		Requests: counterVec("chunkstream_worker_embed_requests_total",
			"Requests sent to the embeddings endpoint, by model and HTTP status code (error: no answer).", "model", "code"),
		RequestInputs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_embed_request_inputs",
			Help:    "Inputs per request sent to the embeddings endpoint, by model.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12),
		}, []string{"model"}),
		RequestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chunkstream_worker_embed_request_seconds",
			Help:    "Duration of requests to the embeddings endpoint, until the whole answer was read, by model.",
			Buckets: prometheus.ExponentialBuckets(0.002, 2, 14),
		}, []string{"model"}),
	}
	if reg != nil {
		reg.MustRegister(m.Inputs, m.Reused, m.Tokens, m.Requests, m.RequestInputs, m.RequestSeconds)
	}
	return m
}

// modelMetrics are the metrics of one model; the zero value counts
// nothing.
type modelMetrics struct {
	m     *Metrics
	model string
}

func (m *Metrics) forModel(model string) modelMetrics {
	if m == nil {
		return modelMetrics{}
	}
	// Create the series at once, so they read 0 before the first request.
	m.Inputs.WithLabelValues(model)
	m.Reused.WithLabelValues(model)
	m.Tokens.WithLabelValues(model)
	return modelMetrics{m: m, model: model}
}

// request observes one request of n inputs that took d and ended with
// code.
func (mm modelMetrics) request(n int, d time.Duration, code string) {
	if mm.m == nil {
		return
	}
	mm.m.Requests.WithLabelValues(mm.model, code).Inc()
	mm.m.RequestInputs.WithLabelValues(mm.model).Observe(float64(n))
	mm.m.RequestSeconds.WithLabelValues(mm.model).Observe(d.Seconds())
}

// embedded counts n inputs embedded and the tokens reported for them.
func (mm modelMetrics) embedded(n, tokens int) {
	if mm.m == nil {
		return
	}
	mm.m.Inputs.WithLabelValues(mm.model).Add(float64(n))
	if tokens > 0 {
		mm.m.Tokens.WithLabelValues(mm.model).Add(float64(tokens))
	}
}

func (mm modelMetrics) reused(n int) {
	if mm.m == nil || n <= 0 {
		return
	}
	mm.m.Reused.WithLabelValues(mm.model).Add(float64(n))
}
