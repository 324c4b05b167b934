package worker

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Probe reports whether the worker is ready: connected to NATS with its
// consumer bound, and no dependency of its sink down (Worker.Ready).
type Probe interface {
	Ready() bool
}

// Handler serves /metrics (from m's private registry), /healthz (the
// process answers) and /readyz (200 when p is ready, else 503: during a
// sink outage the worker is alive but not ready).
func Handler(m *Metrics, p Probe) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !p.Ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}
