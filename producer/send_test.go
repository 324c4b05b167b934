package producer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// TestPacer: without a rate waits return at once; at 100/s, 21 waits take
// exactly 200 ms of (fake) time, the first being free; a cancelled context
// ends a wait.
func TestPacer(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		n    int
		want time.Duration
	}{
		{0, 1000, 0},
		{100, 21, 200 * time.Millisecond},
		{50, 11, 200 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			p := newPacer(tc.rate)
			start := time.Now()
			for range tc.n {
				if err := p.wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if d := time.Since(start); d != tc.want {
				t.Errorf("rate %v: %d waits took %v, want %v", tc.rate, tc.n, d, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := newPacer(0.001)
	_ = p.wait(ctx) // the first is free
	if err := p.wait(ctx); err == nil {
		t.Error("wait with a cancelled context = nil, want its error")
	}
}

func TestBackfillRate(t *testing.T) {
	e := newEnv(t, nil)
	dir := t.TempDir()
	for i := range 11 {
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".md"), mdContent(i, 100), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := e.producer(Options{}).Backfill(context.Background(), BackfillOptions{Paths: []string{dir}, Rate: 50})
	if err != nil || s.Sent != 11 {
		t.Fatalf("Backfill = %+v, %v", s.Stats, err)
	}
	// The pacer's waits are TestPacer's; here only that Backfill paces:
	// a loaded machine can make the run longer, never shorter.
	if s.Elapsed < 190*time.Millisecond {
		t.Errorf("11 documents at 50/s took %v, want ≥ 200ms", s.Elapsed)
	}
}
