package topology

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrDiscardOld reports a stream whose limits remove its oldest messages
// without a trace (see CheckLimits).
var ErrDiscardOld = errors.New("topology: limits with discard old drop data silently")

// ErrShrink reports settings that would make an existing stream or bucket
// keep less than it keeps: a shorter age or TTL, less history, or an age
// limit on the document records (see the package documentation).
var ErrShrink = errors.New("topology: the settings would remove stored data")

// noShrink returns an error wrapping ErrShrink when want would keep
// messages for less time than got (0: without limit); what names the
// setting ("max age of stream CHUNKS"), variable the one that sets it.
func noShrink(what, variable string, got, want time.Duration) error {
	if want == 0 || got != 0 && want >= got {
		return nil
	}
	keeps := "without limit"
	if got != 0 {
		keeps = got.String()
	}
	return fmt.Errorf("%w: the %s is %s; %s=%v would remove what is older at once: give the value it has, "+
		"lower it by hand if that is meant, or accept the loss with CHUNKSTREAM_ALLOW_DISCARD_OLD=true",
		ErrShrink, what, keeps, variable, want)
}

// CheckLimits returns an error wrapping ErrDiscardOld when sc has a
// message, byte or per-subject limit with the discard-old policy (why:
// package documentation). history is the per-subject limit the stream
// needs itself (a KV bucket's history), 0 for none.
func CheckLimits(sc jetstream.StreamConfig, history int64) error {
	if sc.Discard != jetstream.DiscardOld {
		return nil
	}
	var limits []string
	if sc.MaxMsgs > 0 {
		limits = append(limits, fmt.Sprintf("max_msgs %d", sc.MaxMsgs))
	}
	if sc.MaxBytes > 0 {
		limits = append(limits, fmt.Sprintf("max_bytes %d", sc.MaxBytes))
	}
	if sc.MaxMsgsPerSubject > 0 && sc.MaxMsgsPerSubject != history {
		limits = append(limits, fmt.Sprintf("max_msgs_per_subject %d", sc.MaxMsgsPerSubject))
	}
	if len(limits) == 0 {
		return nil
	}
	return fmt.Errorf("%w: stream %s has %s with discard old, so the server removes its oldest messages once full; "+
		"set discard new (a full stream then pauses the workers until it has room), remove the limit, "+
		"or accept the loss with CHUNKSTREAM_ALLOW_DISCARD_OLD=true", ErrDiscardOld, sc.Name, strings.Join(limits, ", "))
}

// Retry runs step as Ensure runs each of its own, for the other reads and
// writes of a start, which meet the same cluster still settling right
// after the set-up. Errors read "topology: <verb> <what>: …" and wrap
// ErrNotReady when cfg.SetupTimeout passed.
func Retry(ctx context.Context, cfg Config, verb, what string, step func(context.Context) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.SetupTimeout, errSetupTimeout)
	defer cancel()
	_, err := converge(ctx, cfg, time.Now(), verb, what, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, step(ctx)
	})
	return err
}
