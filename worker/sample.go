package worker

import (
	"context"
	"time"

	"github.com/chunkstream/chunkstream/messages"
)

// sampleEvery is how often a worker reads its consumer's and the dead
// letter stream's state into its gauges, and writes its presence.
const sampleEvery = messages.PresenceEvery

// sweepGoneEvery is how often, in samples, a worker removes the presences
// of workers that are gone: at its start (a worker restarted after a kill
// removes what it left), then every minute.
const sweepGoneEvery = 12

// sample sets the gauges and writes the worker's presence every
// sampleEvery until ctx ends, then removes the presence; it removes the
// presences of gone workers too (sweepGoneEvery). A read or write that
// fails leaves things as they were.
func (w *Worker) sample(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	defer w.absent(context.WithoutCancel(ctx))
	for n := 0; ; n++ {
		rctx, cancel := context.WithTimeout(ctx, sampleEvery)
		ready := w.Ready()
		if ready {
			w.m.Ready.Set(1)
		} else {
			w.m.Ready.Set(0)
		}
		w.present(rctx, ready)
		if n%sweepGoneEvery == 0 {
			w.sweepGone(rctx)
		}
		if info, err := w.pull.current().Info(rctx); err == nil {
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
