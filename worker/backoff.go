package worker

import (
	"math/rand/v2"
	"time"

	"github.com/chunkstream/chunkstream/fault"
)

// Backoff computes the NAK delay after a transient failure.
type Backoff struct {
	// Base is the delay after the first delivery fails.
	Base time.Duration
	// Max caps the delay (before jitter).
	Max time.Duration
	// Rand returns a number in [0, 1); nil uses math/rand/v2.
	Rand func() float64
}

// Delay returns the delay before redelivering a message that failed on
// its delivery-th delivery (1-based): Base × 2^(delivery−1), capped at
// Max, jittered down by up to half so that workers failing together do
// not retry together; the error's RetryAfter is a floor.
func (b Backoff) Delay(delivery uint64, err error) time.Duration {
	d := b.Base
	for i := uint64(1); i < delivery && d < b.Max; i++ {
		if d > b.Max/2 {
			d = b.Max
			break
		}
		d *= 2
	}
	d = min(d, b.Max)
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
	}
	d = d/2 + time.Duration(r()*float64(d/2))
	if floor, ok := fault.RetryDelay(err); ok && floor > d {
		d = floor
	}
	return d
}
