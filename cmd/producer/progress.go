package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/chunkstream/chunkstream/cmd/internal/tty"
	"github.com/chunkstream/chunkstream/producer"
)

// progress shows a progress bar, created on the first update (when the
// total is known); a no-op when hidden.
type progress struct {
	w       io.Writer
	visible bool
	start   time.Time

	mu   sync.Mutex
	bar  *progressbar.ProgressBar
	last time.Time
}

// newProgress returns the bar; mode is auto (shown when w is a terminal),
// true or false.
func newProgress(w io.Writer, mode string) *progress {
	visible := mode == "true" || mode == "auto" && tty.Is(w)
	return &progress{w: w, visible: visible, start: time.Now()}
}

// update is a backfill's OnProgress callback: documents settled of the
// total, with files/s, MB/s, skipped and failed counts.
func (p *progress) update(s producer.Stats) {
	if !p.visible {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open(s.Total, "producer")
	if s.Total != p.bar.GetMax() {
		p.bar.ChangeMax(s.Total)
	}
	_ = p.bar.Set(s.Done) // before Describe, which draws the bar
	now := time.Now()
	if now.Sub(p.last) >= 100*time.Millisecond || s.Done == s.Total {
		p.last = now
		secs := max(now.Sub(p.start).Seconds(), 1e-9)
		p.bar.Describe(fmt.Sprintf("%.0f files/s %.2f MB/s, %d skipped, %d failed",
			float64(s.Done)/secs, float64(s.ReadBytes)/1e6/secs, s.Skipped, s.Failed))
	}
}

// open creates the bar; called with mu held.
func (p *progress) open(total int, description string) {
	if p.bar != nil {
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// printf writes a line above the bar.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintf(p.w, format, args...)
}

// finish removes the bar before the summary.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// waitUpdate is Wait's OnProgress callback: the requests settled of the
// total, with the failed and superseded counts.
func (p *progress) waitUpdate(s producer.WaitStats) {
	if !p.visible {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open(s.Total, "processing")
	// The count first: Describe draws the bar, Set may not (throttled).
	_ = p.bar.Set(s.Total - s.Pending)
	p.bar.Describe(fmt.Sprintf("processing: %d done, %d failed, %d superseded", s.Done, s.Failed, s.Superseded))
}
