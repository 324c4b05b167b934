package worker

import (
	"context"
	"time"
)

// sampleEvery is how often a worker reads its consumer's and the dead
// letter stream's state into its gauges.
const sampleEvery = 5 * time.Second

// sample sets the Ready gauge and the consumer and dead letter gauges
// every sampleEvery until ctx ends. A read that fails leaves the gauge as
// it was.
func (w *Worker) sample(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, sampleEvery)
		ready := 0.0
		if w.Ready() {
			ready = 1
		}
		w.m.Ready.Set(ready)
		if info, err := w.currentConsumer().Info(rctx); err == nil {
			w.m.Pending.Set(float64(info.NumPending))
			w.m.AckPending.Set(float64(info.NumAckPending))
			w.m.WaitingPulls.Set(float64(info.NumWaiting))
		}
		if s, err := w.js.Stream(rctx, w.cfg.DLQStream); err == nil {
			if info, err := s.Info(rctx); err == nil {
				w.m.DLQ.Set(float64(info.State.Msgs))
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			w.m.Ready.Set(0)
			return
		case <-t.C:
		}
	}
}
