package worker

import (
	"context"
	"time"
)

// sampleEvery is how often a worker reads its consumer's and the dead
// letter stream's state into its gauges.
const sampleEvery = 5 * time.Second

// sample sets the gauges and writes the worker's presence every
// sampleEvery until ctx ends, then removes the presence. A read or write
// that fails leaves things as they were.
func (w *Worker) sample(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	defer w.absent(context.WithoutCancel(ctx))
	for {
		rctx, cancel := context.WithTimeout(ctx, sampleEvery)
		ready := w.Ready()
		if ready {
			w.m.Ready.Set(1)
		} else {
			w.m.Ready.Set(0)
		}
		w.present(rctx, ready)
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
